package newbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The template backend: its name, and where CONTRIBUTING puts its module.
const (
	name   = "mapstore"
	module = "adapters/mapstore"
)

// TestAddBackend follows the four steps of CONTRIBUTING.md's "Adding a
// backend" with the template adapter in a copy of the repository, then
// checks that the test command's table, the matrix of the conformance
// suite and the release's consumer check all take the new backend, and
// that it passes the last two.
func TestAddBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: copies the repository and runs the conformance suite and the consumer check")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "authport")
	copyRepository(ctx, t, root, repo)
	dir := filepath.Join(repo, filepath.FromSlash(module))

	// Step 1: the module, at the release version, in the workspace.
	copyDir(t, filepath.Join("testdata", name), dir, func(rel string) bool {
		return rel == "go.mod" || rel == name+".go"
	})
	version := releaseVersion(t, repo)
	edit(t, filepath.Join(dir, "go.mod"), func(s string) string { return strings.ReplaceAll(s, " v0.1.0", " "+version) })
	run(ctx, t, repo, nil, "go", "work", "use", "./"+module)
	run(ctx, t, dir, []string{"GOWORK=off"}, "go", "mod", "tidy")

	// Step 2: the conformance test.
	copyDir(t, filepath.Join("testdata", name), dir, func(rel string) bool { return rel == "conformance_test.go" })

	// Step 3: the consumer check's opener.
	copyDir(t, filepath.Join("testdata", name), dir, func(rel string) bool { return rel == "testdata/consumer.go" })

	// Step 4: the row in the table of backends.
	addRow(t, filepath.Join(repo, "conformance", "backendtable", "backends.json"), filepath.Join("testdata", "row.json"))

	t.Run("table", func(t *testing.T) {
		// The test command's view of the table (tools/ci backends), and
		// the table package's own checks of every row.
		out := run(ctx, t, filepath.Join(repo, "tools", "ci"), []string{"GOWORK=off", "AUTHPORT_REPO=" + repo}, "go", "run", ".", "backends")
		if !strings.Contains(out, name+"\t"+module+"\tembedded") {
			t.Errorf("tools/ci backends does not list %s in %s:\n%s", name, module, out)
		}
		run(ctx, t, filepath.Join(repo, "conformance"), nil, "go", "test", "-count=1", "./backendtable")
	})

	t.Run("conformance", func(t *testing.T) {
		// As scripts/conformance.sh runs it: the suite with -json, read by
		// the matrix, whose column the new backend gets.
		cmd := exec.CommandContext(ctx, "go", "test", "-json", "-count=1", "-run", "^TestConformance$", ".")
		cmd.Dir = dir
		cmd.Env = workspaceEnv()
		events, err := cmd.Output()
		if err != nil {
			t.Fatalf("go test -run TestConformance in %s: %v\n%s", module, err, lastLines(events, 40))
		}
		passed, failed, skipped := countRules(t, events)
		t.Logf("%s: %d rules passed, %d failed, %d skipped (not implemented)", name, passed, failed, skipped)
		if passed == 0 || failed > 0 {
			t.Errorf("%s: %d rules passed and %d failed; want some passed and none failed", name, passed, failed)
		}
		matrix := exec.CommandContext(ctx, "go", "run", "./cmd/authport-matrix")
		matrix.Dir = filepath.Join(repo, "conformance")
		matrix.Env = workspaceEnv()
		matrix.Stdin = bytes.NewReader(events)
		out, err := matrix.CombinedOutput()
		if err != nil {
			t.Fatalf("authport-matrix: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), name) {
			t.Errorf("the matrix has no column %s:\n%s", name, out)
		}
	})

	t.Run("consumer", func(t *testing.T) {
		// The release's consumer check of the new module alone, from a
		// module outside the repository.
		out := run(ctx, t, filepath.Join(repo, "tools", "release"), []string{"GOWORK=off"}, "go", "run", ".", "-C", repo, "consumers", "-only", module)
		t.Logf("consumer check:\n%s", out)
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(module) + `\s+\d+\s+\d+\s+none\s+ok`).MatchString(out) {
			t.Errorf("the consumer check did not pass %s", module)
		}
	})
}

// copyRepository copies the files git tracks or would track (as the
// consumer check's proxy takes them) from root to a new git repository at
// dst.
func copyRepository(ctx context.Context, t *testing.T, root, dst string) {
	t.Helper()
	out := run(ctx, t, root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	n := 0
	for _, rel := range strings.Split(out, "\x00") {
		if rel == "" {
			continue
		}
		src := filepath.Join(root, filepath.FromSlash(rel))
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		copyFile(t, src, filepath.Join(dst, filepath.FromSlash(rel)), info.Mode().Perm())
		n++
	}
	// A repository of its own: the consumer check's proxy takes the files
	// git tracks or would track.
	run(ctx, t, dst, nil, "git", "init", "-q")
	t.Logf("copied %d files of the repository to %s", n, dst)
}

// copyDir copies the files under src for which want(path relative to src)
// holds into dst.
func copyDir(t *testing.T, src, dst string, want func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if want(filepath.ToSlash(rel)) {
			copyFile(t, path, filepath.Join(dst, rel), 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string, perm fs.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, perm); err != nil {
		t.Fatal(err)
	}
}

// releaseVersion is the version the repository's modules require each
// other at, read from adapters/memory/go.mod.
func releaseVersion(t *testing.T, repo string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "adapters", "memory", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^require github\.com/authport/authport/core (v\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("adapters/memory/go.mod: no requirement on core")
	}
	return string(m[1])
}

func edit(t *testing.T, path string, change func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(change(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// addRow appends the row in the file row to the table of backends at path,
// keeping the table's other fields as they are.
func addRow(t *testing.T, path, row string) {
	t.Helper()
	var table map[string]json.RawMessage
	var rows []json.RawMessage
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &table)
	}
	if err == nil {
		err = json.Unmarshal(table["backends"], &rows)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r, err := os.ReadFile(row)
	if err != nil {
		t.Fatal(err)
	}
	table["backends"], err = json.Marshal(append(rows, json.RawMessage(r)))
	if err == nil {
		data, err = json.MarshalIndent(table, "", "  ")
	}
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// run runs name with args in dir, with env added, and returns its stdout;
// it fails t with the command's output when it fails.
func run(ctx context.Context, t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(workspaceEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s%s", name, strings.Join(args, " "), dir, err, lastLines(stdout.Bytes(), 40), lastLines(stderr.Bytes(), 40))
	}
	return stdout.String()
}

// workspaceEnv is the environment of the go commands run in the copy:
// this module's own GOWORK=off (the test command's) is not passed on, so
// that they use the copy's go.work, as a contributor's would.
func workspaceEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOWORK=") })
}

// countRules counts the rules of the template backend in a go test -json
// stream: TestConformance/mapstore/<method>/<rule>.
func countRules(t *testing.T, events []byte) (passed, failed, skipped int) {
	t.Helper()
	prefix := "TestConformance/" + name + "/"
	for _, line := range bytes.Split(events, []byte("\n")) {
		var e struct{ Action, Test string }
		if json.Unmarshal(line, &e) != nil || !strings.HasPrefix(e.Test, prefix) || strings.Count(e.Test, "/") != 3 {
			continue
		}
		switch e.Action {
		case "pass":
			passed++
		case "fail":
			failed++
			t.Errorf("rule failed: %s", e.Test)
		case "skip":
			skipped++
		}
	}
	return passed, failed, skipped
}

// lastLines returns the last n lines of out.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprintln(strings.Join(lines, "\n"))
}
