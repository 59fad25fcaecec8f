// Command ci holds the logic of the repository's scripts: scripts/services.sh,
// scripts/test.sh (the test command, which CI's .ci/run runs) and
// scripts/fuzz.sh are thin wrappers that build this program into
// ${XDG_CACHE_HOME:-$HOME/.cache}/authport and run one of its commands:
//
//	ci services [-setup-host]   make the test databases reachable; print `export` lines
//	ci test                     the test command: services, gofmt, vet, tidy, actionlint, npm ci, go test -race, summary
//	ci fuzz [REGEXP]            fuzz every target of the go.work modules for AUTHPORT_FUZZTIME (10s) each
//	ci urls [SERVICE...]        print the default backend URLs as NAME=VALUE lines (the test workflow's)
//	ci backends                 print the table of backends: name, module, start, variable (tab-separated)
//
// The backends, their modules, variables and default URLs are the table
// of backends, conformance/backendtable/backends.json, which this program
// reads from the checkout (urls.go); everything else (the tests, the docs,
// the workflows) names the AUTHPORT_*_URL variables. Only the export lines (services) and the closing count line
// (test) go to stdout; progress goes to stderr. The program uses the
// standard library only, so that a clean clone builds it in seconds.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	command, args := "", []string(nil)
	if len(os.Args) > 1 {
		command, args = os.Args[1], os.Args[2:]
	}
	if err := run(context.Background(), command, args); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintf(os.Stderr, "%s: ERROR: %v\n", orDefault(command, "ci"), err)
		}
		os.Exit(1)
	}
}

// run runs one command of the program.
func run(ctx context.Context, command string, args []string) error {
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	switch command {
	case "services":
		return servicesCmd(ctx, repo, args)
	case "test":
		return testCmd(ctx, repo)
	case "fuzz":
		return fuzzCmd(ctx, repo, args)
	case "urls", "backends":
		table, err := readBackends(repo)
		if err != nil {
			return err
		}
		for _, b := range table {
			switch {
			case command == "backends":
				fmt.Printf("%s\t%s\t%s\t%s\n", b.Name, b.Module, b.Start, orDefault(b.Env, "-"))
			case b.URL != "" && (len(args) == 0 || slices.Contains(args, b.Name)):
				fmt.Printf("%s=%s\n", b.Env, b.URL)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown command %q: want services [-setup-host], test, fuzz [REGEXP], urls [SERVICE...] or backends", command)
}

// errReported is returned by a command whose failures are already printed.
var errReported = errors.New("failures reported above")

// repoRoot is AUTHPORT_REPO (the wrappers set it), else the directory of
// the git work tree around the working directory.
func repoRoot() (string, error) {
	if r := os.Getenv("AUTHPORT_REPO"); r != "" {
		return filepath.Abs(r)
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("not inside the repository (set AUTHPORT_REPO): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// cmdSpec is a command to run: its arguments, directory, extra environment
// and time bound; stdout and stderr default to os.Stderr.
type cmdSpec struct {
	args    []string
	dir     string
	env     []string
	timeout time.Duration
	stdout  io.Writer
	stderr  io.Writer
	stdin   io.Reader
}

// run runs c and returns its error, which names the command.
func (c cmdSpec) run(ctx context.Context) error {
	parent := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Dir = c.dir
	if len(c.env) > 0 {
		cmd.Env = append(os.Environ(), c.env...)
	}
	cmd.Stdin = c.stdin
	cmd.Stdout, cmd.Stderr = c.stdout, c.stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stderr
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if c.timeout > 0 && parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s: stopped after its time limit of %s (a slow or loaded machine; run it again): %w", strings.Join(c.args, " "), c.timeout, err)
		}
		return fmt.Errorf("%s: %w", strings.Join(c.args, " "), err)
	}
	return nil
}

// output runs c and returns its trimmed stdout.
func (c cmdSpec) output(ctx context.Context) (string, error) {
	var b strings.Builder
	c.stdout = &b
	if c.stderr == nil {
		c.stderr = io.Discard
	}
	err := c.run(ctx)
	return strings.TrimSpace(b.String()), err
}

// succeeds reports whether args exit 0 within 5 s, output discarded.
func succeeds(ctx context.Context, args ...string) bool {
	return cmdSpec{args: args, timeout: 5 * time.Second, stdout: io.Discard, stderr: io.Discard}.run(ctx) == nil
}

// tailLines returns the last n lines of s.
func tailLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// cacheDir is where built binaries live: ${XDG_CACHE_HOME:-$HOME/.cache}/authport.
func cacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "authport")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "authport")
}

func tmpDir() string {
	if d := os.Getenv("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}

func commandExists(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// prepare is the start of the test and fuzz commands: -buildvcs=false
// unless GOFLAGS says otherwise, and the log directory, AUTHPORT_LOG_DIR or
// else a new temporary one named PREFIX*.
func prepare(prefix string) (string, error) {
	if os.Getenv("GOFLAGS") == "" {
		os.Setenv("GOFLAGS", "-buildvcs=false")
	}
	dir := os.Getenv("AUTHPORT_LOG_DIR")
	if dir == "" {
		return os.MkdirTemp("", prefix)
	}
	return dir, os.MkdirAll(dir, 0o755)
}
