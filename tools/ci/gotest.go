package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json); ImportPath is
// set on the build-output events of a package that does not build.
type event struct{ Action, Package, Test, Output, ImportPath string }

// testResult is what one `go test -json` run did.
type testResult struct {
	passed, failed, skipped int
	// failures are the failed tests ("package Test/Sub"), and packages that
	// failed without a failed test (a build failure, a panic, a timeout).
	failures []string
	skips    []string // "package Test: reason"
	// output holds each failed test's or package's last lines of output.
	output map[string][]string
	// conformance counts the TestConformance*/<backend>/<method>/<rule>
	// results per backend: [passed, failed, skipped].
	conformance map[string]*[3]int
	err         error // go test's own exit status
}

// keepLines is how many lines of a failed test's output are kept, the
// first keepHead of them and the last ones.
const (
	keepLines = 32
	keepHead  = 10
)

// goTest runs `go test -json ARGS` in dir, writes the text of the run (what
// `go test -v` would print, and anything the go command printed besides) to
// log, and counts its results.
func goTest(ctx context.Context, dir string, env []string, log io.Writer, args ...string) testResult {
	res := testResult{output: map[string][]string{}, conformance: map[string]*[3]int{}}
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	r, w, err := os.Pipe()
	if err != nil {
		res.err = err
		return res
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		w.Close()
		r.Close()
		res.err = err
		return res
	}
	w.Close()
	res.read(r, log)
	r.Close()
	res.err = cmd.Wait()
	if res.err == nil {
		delete(res.output, "go")
	} else if res.failed == 0 && len(res.failures) == 0 {
		res.failures = append(res.failures, "go test: "+res.err.Error())
	}
	return res
}

// read consumes the stream of a `go test -json` run.
func (res *testResult) read(r io.Reader, log io.Writer) {
	recent := map[string]*kept{} // test key → its lines
	ended := map[string]bool{}
	keep := func(key, line string) {
		if recent[key] == nil {
			recent[key] = &kept{}
		}
		recent[key].add(strings.TrimRight(line, "\n"))
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			// The go command's own output (a build error without -json support).
			fmt.Fprintln(log, line)
			keep("", line)
			continue
		}
		pkg := e.Package
		if pkg == "" {
			// "example.com/p [example.com/p.test]": the package's build.
			pkg, _, _ = strings.Cut(e.ImportPath, " ")
		}
		key := pkg
		if e.Test != "" {
			key = pkg + " " + e.Test
		}
		switch e.Action {
		case "output", "build-output":
			io.WriteString(log, e.Output)
			keep(key, e.Output)
		case "pass", "fail", "skip":
			// A fuzz target's failing input reports the target's end twice
			// ("--- FAIL: FuzzX" nested in itself): count it once.
			if ended[key] {
				res.output[key] = append(res.output[key], recent[key].all()...)
			} else {
				res.count(e, key, recent[key].all())
			}
			if e.Test == "" && e.Action == "fail" {
				res.unfinished(pkg, recent, ended)
			}
			ended[key] = true
			delete(recent, key)
		}
	}
	// The go command's own lines, shown when it fails.
	res.output["go"] = recent[""].all()
}

// count records the end of one test or package.
func (res *testResult) count(e event, key string, lines []string) {
	if e.Test == "" {
		if e.Action == "fail" && !res.hasFailureIn(e.Package) {
			res.failures = append(res.failures, e.Package+" (the package failed; see its output)")
			res.output[e.Package+" (the package failed; see its output)"] = lines
		}
		return
	}
	switch e.Action {
	case "pass":
		res.passed++
	case "fail":
		res.failed++
		res.failures = append(res.failures, key)
		res.output[key] = lines
	case "skip":
		res.skipped++
		res.skips = append(res.skips, key+": "+skipReason(lines))
	}
	if parts := strings.SplitN(e.Test, "/", 4); len(parts) == 4 && strings.HasPrefix(parts[0], "TestConformance") {
		c := res.conformance[parts[1]]
		if c == nil {
			c = new([3]int)
			res.conformance[parts[1]] = c
		}
		c[map[string]int{"pass": 0, "fail": 1, "skip": 2}[e.Action]]++
	}
}

func (res *testResult) hasFailureIn(pkg string) bool {
	for _, f := range res.failures {
		if strings.HasPrefix(f, pkg+" ") {
			return true
		}
	}
	return false
}

// skipReason is the last message a skipped test logged ("file.go:12: why").
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "--- SKIP") && !strings.HasPrefix(l, "=== ") {
			return l
		}
	}
	return "no reason given"
}

// unfinished reports the tests of pkg that were running when it failed
// without their end (a -timeout panic, a crash), with their last lines.
func (res *testResult) unfinished(pkg string, recent map[string]*kept, ended map[string]bool) {
	var keys []string
	for key := range recent {
		if strings.HasPrefix(key, pkg+" ") && !ended[key] {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		res.failures = append(res.failures, key+" (did not finish)")
		res.output[key+" (did not finish)"] = recent[key].all()
		delete(recent, key)
	}
}

// kept holds the first and the last lines of a test's output.
type kept struct {
	head, tail []string
	left       int // lines between them, left out
}

func (k *kept) add(line string) {
	if len(k.head) < keepHead {
		k.head = append(k.head, line)
		return
	}
	k.tail = append(k.tail, line)
	if len(k.tail) > keepLines-keepHead {
		k.tail = k.tail[1:]
		k.left++
	}
}

// all returns the lines kept (none for nil).
func (k *kept) all() []string {
	if k == nil {
		return nil
	}
	out := slices.Clone(k.head)
	if k.left > 0 {
		out = append(out, fmt.Sprintf("… %d lines left out (see the log)", k.left))
	}
	return append(out, k.tail...)
}
