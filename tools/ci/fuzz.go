package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fuzzCmd is `ci fuzz [REGEXP]` (scripts/fuzz.sh): every fuzz target of
// the go.work modules whose "pkgdir FuzzName" matches REGEXP, each for
// AUTHPORT_FUZZTIME (default 10s), logs in AUTHPORT_LOG_DIR.
func fuzzCmd(ctx context.Context, repo string, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("usage: fuzz [REGEXP]")
	}
	filter := ""
	if len(args) == 1 {
		filter = args[0]
	}
	logDir, err := prepare("authport-fuzz.")
	if err != nil {
		return err
	}
	return runFuzz(ctx, repo, logDir, orDefault(os.Getenv("AUTHPORT_FUZZTIME"), "10s"), filter, os.Stdout)
}

var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz[A-Za-z0-9_]*)\([a-z_]+ \*testing\.F\)`)

// fuzzTargets returns "pkgdir FuzzName" for every fuzz target in the
// *_test.go files under the go.work modules, sorted.
func fuzzTargets(ctx context.Context, repo string) ([]string, error) {
	out, err := cmdSpec{args: []string{"go", "list", "-m", "-f", "{{.Dir}}"}, dir: repo}.output(ctx)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, mod := range strings.Fields(out) {
		_ = filepath.WalkDir(mod, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repo, filepath.Dir(p))
			for _, m := range fuzzFunc.FindAllSubmatch(b, -1) {
				targets = append(targets, rel+" "+string(m[1]))
			}
			return nil
		})
	}
	slices.Sort(targets)
	return slices.Compact(targets), nil
}

// minimizeTime bounds how long Go's fuzzer minimizes each new interesting
// input (and a crasher) before it fuzzes on. Its default, 60 s, is six
// times a 10 s run: passkey's FuzzCallback, whose inputs are JSON
// documents, found a few new inputs in its first seconds and spent the rest
// of its 10 s minimizing them, at about 1 execution a second by the
// count; with 1 s it made 32,033 executions in 25 s (97 new inputs)
// against 11,113 (30) with the default. A crasher's minimized input only
// makes a smaller seed; the unminimized one replays the failure as well.
const minimizeTime = "2s"

// runFuzz fuzzes each target for fuzztime and prints one line per target
// to w: ok, skip or FAIL, the package directory, the target, the
// executions and their rate; for a crasher the input file Go wrote, which
// `go test -run FuzzXxx/<file>` replays. A failed target fails the run.
func runFuzz(ctx context.Context, repo, logDir, fuzztime, filter string, w io.Writer) error {
	re, err := regexp.Compile(filter)
	if err != nil {
		return fmt.Errorf("bad filter %q: %w", filter, err)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	targets, err := fuzzTargets(ctx, repo)
	if err != nil {
		return err
	}
	ran, failed, skipped := 0, 0, 0
	for _, t := range targets {
		if !re.MatchString(t) {
			continue
		}
		dir, name, _ := strings.Cut(t, " ")
		logPath := filepath.Join(logDir, strings.ReplaceAll(dir, "/", "_")+"_"+name+".log")
		log, err := os.Create(logPath)
		if err != nil {
			return err
		}
		res := goTest(ctx, filepath.Join(repo, dir), nil, log, "-v", "-run", "^$", "-fuzz", "^"+name+"$", "-fuzztime", fuzztime, "-fuzzminimizetime", minimizeTime, ".")
		log.Close()
		text, _ := os.ReadFile(logPath)
		ran++
		status, note, stats := fuzzVerdict(res, name, string(text))
		switch status {
		case "skip":
			skipped++
		case "FAIL":
			failed++
		}
		fmt.Fprintf(w, "%-4s  %-28s %-28s %s%s\n", status, dir, name, stats, note)
		if status == "FAIL" {
			if crasher := lastMatch(string(text), `Failing input written to (\S+)`); crasher != "" {
				fmt.Fprintf(w, "      crasher: %s/%s (replay: cd %s && go test -run %s/%s)\n", dir, crasher, dir, name, filepath.Base(crasher))
			}
			for _, f := range res.failures {
				for _, l := range res.output[f] {
					fmt.Fprintf(w, "      %s\n", l)
				}
			}
			fmt.Fprintf(w, "      full output: %s\n", logPath)
		}
	}
	fmt.Fprintf(w, "fuzz: %d targets for %s each, %d failed, %d skipped (logs in %s)\n", ran, fuzztime, failed, skipped, logDir)
	if failed > 0 {
		return errReported
	}
	return nil
}

var fileLine = regexp.MustCompile(`(?m)^\s+\S+\.go:[0-9]+: `)

// fuzzVerdict judges one target's run: its status (ok, skip or FAIL), a
// note, and its executions (or a skipped target's reason).
func fuzzVerdict(res testResult, name, text string) (status, note, stats string) {
	switch {
	case res.err == nil && res.skipped > 0:
		_, reason, _ := strings.Cut(res.skips[len(res.skips)-1], ": ")
		return "skip", "", reason
	case res.err == nil:
		status = "ok"
	case deadlineOnly(text, name):
		// Go's fuzz coordinator can report its own -fuzztime deadline as
		// a failure (golang/go#75804, fixed in Go 1.27): no input failed.
		status = "ok"
		note = ` (ended by golang/go#75804: "context deadline exceeded" with no failing input)`
	default:
		status = "FAIL"
	}
	// The last status line, "fuzz: elapsed: 10s, execs: 123456 (0/sec), …",
	// has the total; its rate is that of the last interval, so the rate
	// printed is the total over the elapsed time.
	stats = "no executions reported"
	if m := regexp.MustCompile(`(?m)^fuzz: elapsed: ([0-9]+)s, execs: ([0-9]+) `).FindAllStringSubmatch(text, -1); len(m) > 0 {
		secs, _ := strconv.Atoi(m[len(m)-1][1])
		execs, _ := strconv.Atoi(m[len(m)-1][2])
		rate := execs
		if secs > 0 {
			rate = execs / secs
		}
		stats = fmt.Sprintf("%d execs in %ds (%d/s)", execs, secs, rate)
	}
	return status, note, stats
}

// deadlineOnly: the target failed with nothing but "context deadline
// exceeded" after its --- FAIL line: no failing input, no test message, no
// panic.
func deadlineOnly(text, name string) bool {
	if strings.Contains(text, "Failing input written") || fileLine.MatchString(text) || strings.Contains(text, "\npanic:") {
		return false
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "--- FAIL: "+name+" ") {
			return sc.Scan() && strings.Join(strings.Fields(sc.Text()), "") == "contextdeadlineexceeded"
		}
	}
	return false
}

// lastMatch is the first group of the last match of pattern in text.
func lastMatch(text, pattern string) string {
	m := regexp.MustCompile(pattern).FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}
