package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeFiles writes name → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// testModule writes the module example.com/NAME with one test file and
// returns what goTest makes of `go test -json ARGS` in it, and its log.
func testModule(t *testing.T, name, test string, args ...string) (testResult, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"go.mod": "module example.com/" + name + "\n\ngo 1.26\n", name + "_test.go": test})
	var log strings.Builder
	res := goTest(context.Background(), dir, []string{"GOWORK=off", "GOFLAGS=-buildvcs=false"}, &log, args...)
	return res, log.String()
}

// A real `go test -json` run of a module with passing, failing and skipped
// tests and conformance-shaped subtests is counted as `go test -v` shows it.
func TestGoTestCounts(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"m_test.go": `package m

import "testing"

func TestPass(t *testing.T) {}
func TestFail(t *testing.T) { t.Log("before"); t.Fatal("the reason it failed") }
func TestSkip(t *testing.T) { t.Skip("no server here") }
func TestConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		t.Run("getUser", func(t *testing.T) {
			t.Run("found", func(t *testing.T) {})
			t.Run("missing", func(t *testing.T) { t.Error("wrong") })
			t.Run("other", func(t *testing.T) { t.Skip("not implemented") })
		})
	})
}
`,
	})
	var log strings.Builder
	res := goTest(context.Background(), dir, []string{"GOWORK=off", "GOFLAGS=-buildvcs=false"}, &log, "-count=1", "-v", "./...")
	if res.err == nil {
		t.Fatal("go test of failing tests succeeded")
	}
	// Passed: TestPass, found. Failed: TestFail, missing and its parents
	// getUser, memory, TestConformance. Skipped: TestSkip, other.
	if res.passed != 2 || res.failed != 5 || res.skipped != 2 {
		t.Errorf("passed %d, failed %d, skipped %d; want 2, 5, 2", res.passed, res.failed, res.skipped)
	}
	if !slices.Contains(res.failures, "example.com/m TestFail") {
		t.Errorf("failures %q lack TestFail", res.failures)
	}
	if out := strings.Join(res.output["example.com/m TestFail"], "\n"); !strings.Contains(out, "the reason it failed") {
		t.Errorf("TestFail's output %q lacks its message", out)
	}
	if !slices.Contains(res.skips, "example.com/m TestSkip: m_test.go:7: no server here") {
		t.Errorf("skips = %q", res.skips)
	}
	if c := res.conformance["memory"]; c == nil || *c != [3]int{1, 1, 1} {
		t.Errorf("conformance[memory] = %v, want 1 passed, 1 failed, 1 skipped", c)
	}
	for _, want := range []string{"=== RUN   TestPass", "--- FAIL: TestFail", "--- SKIP: TestSkip"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

// A package that does not build is a failure with the compiler's message.
func TestGoTestBuildFailure(t *testing.T) {
	res, log := testModule(t, "b", "package b\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { undefinedThing() }\n", "-count=1", "./...")
	if res.err == nil || len(res.failures) == 0 {
		t.Fatalf("a build failure was not reported: %+v", res)
	}
	if !strings.Contains(log, "undefinedThing") {
		t.Errorf("the log lacks the compiler's message: %s", log)
	}
}

// The fuzz runner finds the targets of the go.work modules, fuzzes the
// ones the filter names, and reports a crasher with its file.
func TestFuzzCrasher(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzes for a few seconds")
	}
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		"go.work":  "go 1.26\n\nuse ./m\n",
		"m/go.mod": "module example.com/m\n\ngo 1.26\n",
		"m/m.go":   "package m\n",
		"m/p/p.go": "package p\n",
		"m/p/f_test.go": `package p

import "testing"

func FuzzCrash(f *testing.F) {
	f.Add("a")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 0 && s[0] == 'z' {
			t.Fatal("found z")
		}
	})
}

func FuzzOther(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }
`,
	})
	t.Setenv("GOFLAGS", "-buildvcs=false")
	t.Setenv("GOWORK", "")
	targets, err := fuzzTargets(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"m/p FuzzCrash", "m/p FuzzOther"}; !slices.Equal(targets, want) {
		t.Fatalf("targets = %q, want %q", targets, want)
	}
	var out strings.Builder
	err = runFuzz(context.Background(), repo, t.TempDir(), "20s", "Crash", &out)
	if err == nil {
		t.Fatalf("a crasher did not fail the run:\n%s", out.String())
	}
	for _, want := range []string{"FAIL  m/p", "FuzzCrash", "crasher: m/p/testdata/fuzz/FuzzCrash/", "found z", "1 targets for 20s each, 1 failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

// golang/go#75804: a bare "context deadline exceeded" after the FAIL line
// is no failing input; anything else is.
func TestDeadlineOnly(t *testing.T) {
	bare := "fuzz: elapsed: 10s, execs: 5 (0/sec)\n--- FAIL: FuzzX (10.01s)\n    context deadline exceeded\nFAIL\n"
	if !deadlineOnly(bare, "FuzzX") {
		t.Error("the bare deadline was taken for a failure")
	}
	for _, real := range []string{
		strings.Replace(bare, "FAIL\n", "    Failing input written to testdata/fuzz/FuzzX/1\n", 1),
		strings.Replace(bare, "    context", "        x_test.go:3: boom\n    context", 1),
		strings.Replace(bare, "context deadline exceeded", "something else", 1),
	} {
		if deadlineOnly(real, "FuzzX") {
			t.Errorf("taken for the bare deadline:\n%s", real)
		}
	}
}

// The hash of a tool's sources changes with its Go files and go.mod, not
// with its tests.
func TestSourceHash(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"go.mod": "module x\n", "main.go": "package main\n", "images/a/Containerfile": "FROM x\n"})
	h1, err := sourceHash(dir, "go1.26", "")
	if err != nil || len(h1) != 16 {
		t.Fatalf("sourceHash = %q, %v", h1, err)
	}
	writeFiles(t, dir, map[string]string{"main_test.go": "package main\n"})
	if h, _ := sourceHash(dir, "go1.26", ""); h != h1 {
		t.Error("a test file changed the hash")
	}
	for _, change := range []map[string]string{{"main.go": "package main // changed\n"}, {"images/a/Containerfile": "FROM y\n"}} {
		writeFiles(t, dir, change)
		if h, _ := sourceHash(dir, "go1.26", ""); h == h1 {
			t.Errorf("%v left the hash unchanged", change)
		}
	}
	if h, _ := sourceHash(dir, "go1.26", "tag"); h == h1 {
		t.Error("build tags left the hash unchanged")
	}
}

func TestParagraph(t *testing.T) {
	text := "noise\nFault injection (tests/faults x)\n row 1\n\nmore noise\n"
	if got, want := paragraph(text, "Fault injection (tests/faults"), "Fault injection (tests/faults x)\n row 1\n\n"; got != want {
		t.Errorf("paragraph = %q, want %q", got, want)
	}
}

func TestURLs(t *testing.T) {
	if got := clusterURL([]int{7001, 7002}); got != "127.0.0.1:7001,127.0.0.1:7002" {
		t.Errorf("clusterURL = %q", got)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	table, err := readBackends(repo)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	steps := (&services{}).steps()
	for _, b := range table {
		if b.Start == startEmbedded {
			continue
		}
		if !strings.HasPrefix(b.Env, "AUTHPORT_") || seen[b.Env] {
			t.Errorf("bad table row %+v", b)
		}
		seen[b.Env] = true
		if b.Start == startServices && (b.URL == "" || steps[b.Name] == nil) {
			t.Errorf("%s starts by scripts/services.sh but has no URL or no step: %+v", b.Name, b)
		}
	}
	if len(seen) != 7 {
		t.Errorf("%d server backends, want 7", len(seen))
	}
	// The ports this program starts the Redis Cluster and the MongoDB
	// stand-in on by default serve the table's URLs.
	if b, _ := backendNamed(table, "redis-cluster"); b.URL != clusterURL([]int{7001, 7002, 7003}) {
		t.Errorf("redis-cluster's URL %q is not the one of the default ports %s", b.URL, defaultClusterPorts)
	}
	if b, _ := backendNamed(table, "mongodb"); b.URL != mongoURL(defaultMongoPort) {
		t.Errorf("mongodb's URL %q is not the one of the default port %d", b.URL, defaultMongoPort)
	}
	services := allServices(table)
	if got := strings.Join(services, " "); got != "redis redis-cluster redis-sentinel postgres postgres-ha mysql mongodb dex chromium containers" {
		t.Errorf("allServices = %s", got)
	}
	for value, want := range map[string]string{
		"":                      strings.Join(services, " "),
		"redis dex":             "redis dex",
		"none":                  "none",
		"-containers -chromium": "redis redis-cluster redis-sentinel postgres postgres-ha mysql mongodb dex",
	} {
		got, err := wantedServices(value, services)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("wantedServices(%q) = %q, %v; want %q", value, got, err, want)
		}
	}
	for _, bad := range []string{"redis -dex", "postgress", "-none"} {
		if _, err := wantedServices(bad, services); err == nil {
			t.Errorf("wantedServices(%q): no error", bad)
		}
	}
}

// A test still running when the package times out is named, with the
// panic's lines.
func TestGoTestTimeout(t *testing.T) {
	res, _ := testModule(t, "s", "package s\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestQuick(t *testing.T) {}\nfunc TestSlow(t *testing.T) { time.Sleep(time.Minute) }\n",
		"-count=1", "-v", "-timeout", "2s", "./...")
	key := "example.com/s TestSlow (did not finish)"
	if res.err == nil || !slices.Contains(res.failures, key) {
		t.Fatalf("failures = %q, want %q", res.failures, key)
	}
	if out := strings.Join(res.output[key], "\n"); !strings.Contains(out, "test timed out") {
		t.Errorf("TestSlow's lines lack the timeout panic:\n%s", out)
	}
}

// TestRequired: AUTHPORT_REQUIRE names backends in any case, as
// conformance/provision reads it, or "all".
func TestRequired(t *testing.T) {
	t.Setenv("AUTHPORT_REQUIRE", " Postgres, npm")
	if !required("postgres") || !required("npm") || required("redis") {
		t.Error("a comma list names exactly its backends, in any case")
	}
	t.Setenv("AUTHPORT_REQUIRE", "ALL")
	if !required("redis") {
		t.Error("ALL names every backend")
	}
	t.Setenv("AUTHPORT_REQUIRE", "")
	if required("postgres") {
		t.Error("an empty list names none")
	}
}
