package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), with the fields
// this command reads.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	Elapsed     float64 // seconds, on pass, fail and skip
	ImportPath  string  // build-output and build-fail events
	FailedBuild string  // a package's fail event when it did not build
}

// suiteTest is the top-level test every adapter module runs.
const suiteTest = "TestConformance"

// testState is what the collector keeps of one test while it runs.
type testState struct {
	output []string // the test's own output lines, without trailing newlines
	done   bool     // a pass, fail or skip arrived
}

// collector turns a stream of events into the matrix, writing failures to
// its log as they arrive.
type collector struct {
	log         io.Writer
	tests       map[string]*testState // by package + "\x00" + test
	order       []string              // keys of tests, first-seen order
	pkgOutput   map[string][]string   // package-level output lines
	buildOutput map[string][]string   // compiler output by import path
	testFailed  map[string]bool       // packages with a failed test
	m           *matrix
	// progress, when set, gets a line as each backend starts and ends.
	progress io.Writer
	counts   map[string]*[3]int // rules passed, failed, skipped by backend
}

func newCollector(log io.Writer) *collector {
	return &collector{
		log:         log,
		tests:       make(map[string]*testState),
		pkgOutput:   make(map[string][]string),
		buildOutput: make(map[string][]string),
		testFailed:  make(map[string]bool),
		m:           newMatrix(),
		counts:      make(map[string]*[3]int),
	}
}

// read consumes one stream. Lines that are not test2json events (a
// go command error, say) go to the log; those that report a failed
// build or a FAIL count as failures.
func (c *collector) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			c.foreign(string(line))
			continue
		}
		c.event(e)
	}
	return sc.Err()
}

// foreign handles a line that is not an event.
func (c *collector) foreign(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	fmt.Fprintln(c.log, line)
	if isFailLine(line) {
		c.m.broken = append(c.m.broken, strings.TrimSpace(line))
	}
}

// isFailLine reports whether a line of go test's text output says that a
// package failed or did not build.
func isFailLine(line string) bool {
	return strings.HasPrefix(line, "FAIL") || strings.Contains(line, "[build failed]") ||
		strings.Contains(line, "[setup failed]")
}

func (c *collector) event(e event) {
	switch e.Action {
	case "build-output":
		c.buildOutput[e.ImportPath] = append(c.buildOutput[e.ImportPath], strings.TrimSuffix(e.Output, "\n"))
		return
	case "build-fail":
		c.buildFailed(e.ImportPath)
		return
	}
	if e.Test == "" {
		c.packageEvent(e)
		return
	}
	key := e.Package + "\x00" + e.Test
	st := c.tests[key]
	if st == nil {
		st = &testState{}
		c.tests[key] = st
		c.order = append(c.order, key)
	}
	inSuite := e.Test == suiteTest || strings.HasPrefix(e.Test, suiteTest+"/")
	if inSuite {
		c.m.sawSuite = true
		c.report(e)
	}
	switch e.Action {
	case "output":
		st.output = append(st.output, strings.TrimSuffix(e.Output, "\n"))
	case "pass", "fail", "skip":
		st.done = true
		if e.Action == "fail" {
			c.testFailed[e.Package] = true
			c.passThrough(e.Package, e.Test, st.output)
			if !inSuite {
				c.m.otherFailed = append(c.m.otherFailed, e.Package+" "+e.Test)
			}
		}
		if inSuite {
			c.m.result(e.Package, strings.Split(e.Test, "/")[1:], e.Action, st.output)
		}
	}
}

// report writes the progress lines: one when a backend starts, one when
// it ends with its rule counts and time.
func (c *collector) report(e event) {
	if c.progress == nil {
		return
	}
	parts := strings.Split(e.Test, "/")
	if len(parts) < 2 {
		return
	}
	backend := parts[1]
	n := c.counts[backend]
	if n == nil {
		n = new([3]int)
		c.counts[backend] = n
	}
	switch {
	case len(parts) == 2 && e.Action == "run":
		fmt.Fprintf(c.progress, "  %-14s running\n", backend)
	case len(parts) == 2 && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		fmt.Fprintf(c.progress, "  %-14s %s in %.1fs: %d rules passed, %d failed, %d skipped\n", backend, e.Action, e.Elapsed, n[0], n[1], n[2])
	case len(parts) >= 4 && e.Action == "pass":
		n[0]++
	case len(parts) >= 4 && e.Action == "fail":
		n[1]++
	case len(parts) >= 4 && e.Action == "skip":
		n[2]++
	}
}

// buildFailed records a package that did not build and logs its compiler
// output, once per package.
func (c *collector) buildFailed(importPath string) {
	pkg, _, _ := strings.Cut(importPath, " [")
	if importPath == "" || c.m.hasBroken(pkg) {
		return
	}
	c.m.broken = append(c.m.broken, importPath)
	if out := c.buildOutput[importPath]; len(out) > 0 {
		fmt.Fprintln(c.log, strings.Join(out, "\n"))
	}
}

// packageEvent handles an event of a package rather than of a test.
func (c *collector) packageEvent(e event) {
	switch e.Action {
	case "output":
		c.pkgOutput[e.Package] = append(c.pkgOutput[e.Package], strings.TrimSuffix(e.Output, "\n"))
	case "fail":
		if e.FailedBuild != "" {
			c.buildFailed(e.FailedBuild)
			return
		}
		for _, l := range c.pkgOutput[e.Package] {
			// Before Go 1.24 the fail event did not name the failed build.
			if strings.Contains(l, "[build failed]") || strings.Contains(l, "[setup failed]") {
				c.buildFailed(e.Package)
				return
			}
		}
		if c.m.hasBroken(e.Package) || c.testFailed[e.Package] {
			return // the matrix or the build failures say why
		}
		c.m.failedPackages = append(c.m.failedPackages, e.Package)
		c.passThrough(e.Package, "", c.pkgOutput[e.Package])
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// passThrough writes the output of a failed test to the log, without the
// === RUN/PAUSE/CONT lines; a test whose only output is its own
// "--- FAIL" line (a parent of a failed subtest) writes nothing.
func (c *collector) passThrough(pkg, test string, output []string) {
	var lines []string
	substantial := false
	for _, l := range output {
		if strings.HasPrefix(l, "=== ") {
			continue
		}
		lines = append(lines, l)
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "--- FAIL") && t != "FAIL" && !strings.HasPrefix(t, "FAIL\t") {
			substantial = true
		}
	}
	if !substantial {
		return
	}
	name := test
	if name == "" {
		name = "(package)"
	}
	fmt.Fprintf(c.log, "=== failed: %s %s\n%s\n", pkg, name, strings.Join(lines, "\n"))
}

// finish closes the stream: a conformance rule that started but never
// ended (the test binary crashed or timed out) counts as failed.
func (c *collector) finish() *matrix {
	for _, key := range c.order {
		st := c.tests[key]
		if st.done {
			continue
		}
		pkg, test, _ := strings.Cut(key, "\x00")
		if test == suiteTest || strings.HasPrefix(test, suiteTest+"/") {
			c.m.result(pkg, strings.Split(test, "/")[1:], "unfinished", st.output)
		}
	}
	return c.m
}

// message returns what a test logged, without the framing lines and the
// file:line prefixes, in one line.
func message(output []string) string {
	var parts []string
	for _, l := range output {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, stripFileLine(t))
	}
	return strings.Join(parts, " ")
}

// notImplemented reports whether a skipped test's output says the adapter
// lacks a method.
func notImplemented(output []string) bool {
	for _, l := range output {
		if strings.Contains(l, "does not implement") {
			return true
		}
	}
	return false
}

// stripFileLine removes the "file.go:12: " prefix that t.Log puts before a
// test's log line.
func stripFileLine(l string) string {
	prefix, rest, ok := strings.Cut(l, ": ")
	if !ok || strings.ContainsAny(prefix, " \t") {
		return l
	}
	file, lineNo, ok := strings.Cut(prefix, ".go:")
	if !ok || file == "" || lineNo == "" || strings.Trim(lineNo, "0123456789") != "" {
		return l
	}
	return rest
}
