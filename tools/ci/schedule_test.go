package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// plan puts the exclusive modules first in their given order, then the
// others longest first; a duration recorded on the machine wins over the
// built-in estimate, and a module known to neither gets defaultEstimate.
func TestPlan(t *testing.T) {
	modules := []string{"core", "tests/faults", "adapters/postgres-gorm", "newmodule", "tests/backends", "x/alone", "examples/demo"}
	recorded := map[string]time.Duration{"newmodule": 500 * time.Second, "examples/demo": time.Second}
	exclusive := map[string]string{"x/alone": "reason 1", "tests/faults": "reason 2"}
	var got []string
	for _, j := range plan(modules, recorded, exclusive) {
		got = append(got, fmt.Sprintf("%s %v %q", j.module, j.estimate, j.exclusive))
	}
	want := []string{
		`tests/faults 5m0s "reason 2"`,
		`x/alone 30s "reason 1"`,
		`adapters/postgres-gorm 14m6s ""`,
		`newmodule 8m20s ""`,
		`tests/backends 6m59s ""`,
		`core 30s ""`,
		`examples/demo 1s ""`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// insertJob puts a job after the exclusive ones, before the first shorter
// shared one, or last.
func TestInsertJob(t *testing.T) {
	jobs := []job{{module: "alone", estimate: time.Hour, exclusive: "x"}, {module: "long", estimate: 10 * time.Minute}, {module: "short", estimate: time.Minute}}
	names := func(js []job) string {
		var s []string
		for _, j := range js {
			s = append(s, j.module)
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		estimate time.Duration
		want     string
	}{
		{2 * time.Hour, "alone new long short"},
		{3 * time.Minute, "alone long new short"},
		{time.Second, "alone long short new"},
	} {
		if got := names(insertJob(slices.Clone(jobs), job{module: "new", estimate: tc.estimate})); got != tc.want {
			t.Errorf("insertJob at %v: %s, want %s", tc.estimate, got, tc.want)
		}
	}
}

// runSchedule never runs more than width jobs at once, runs an exclusive
// job with no other, and starts no job before the exclusive ones ahead of
// it have ended.
func TestRunSchedule(t *testing.T) {
	jobs := []job{{module: "x", exclusive: "alone"}, {module: "a"}, {module: "b"}, {module: "c"}, {module: "y", exclusive: "alone"}, {module: "d"}, {module: "e"}}
	var (
		mu      sync.Mutex
		running []string
		started []string
		peak    int
		bad     []string
	)
	runSchedule(jobs, 3, func(j job) {
		mu.Lock()
		running = append(running, j.module)
		started = append(started, j.module)
		peak = max(peak, len(running))
		if len(running) > 1 && (j.exclusive != "" || slices.ContainsFunc(running, func(m string) bool { return m == "x" || m == "y" })) {
			bad = append(bad, strings.Join(running, "+"))
		}
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		running = slices.DeleteFunc(running, func(m string) bool { return m == j.module })
		mu.Unlock()
	})
	// Between two exclusive jobs the others start in any order.
	for _, part := range [][2]int{{1, 4}, {5, 7}} {
		slices.Sort(started[part[0]:part[1]])
	}
	if want := []string{"x", "a", "b", "c", "y", "d", "e"}; !slices.Equal(started, want) {
		t.Errorf("started %q, want x, then a, b and c, then y, then d and e", started)
	}
	if peak != 3 {
		t.Errorf("at most %d ran at once, want 3 (the width)", peak)
	}
	if len(bad) > 0 {
		t.Errorf("an exclusive job ran beside others: %q", bad)
	}
}

// The test command's go test step runs real modules side by side: the
// shared ones overlap, the exclusive one overlaps none, every module has
// its log, the results are listed in the modules' order, and the
// durations of the modules that passed are recorded for the next run's
// order (a failed one is not).
func TestTestModulesSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in four modules")
	}
	repo, marks, logDir, cache := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	// Each test writes its start and end (Unix nanoseconds) to a file
	// named after its module. a's and b's tests each wait for the other's
	// to start (a rendezvous, whatever the machine's speed): they pass only
	// side by side.
	test := func(pkg, body string) string {
		return `package ` + pkg + `

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSpan(t *testing.T) {
	start := time.Now().UnixNano()
	time.Sleep(100 * time.Millisecond)
	` + body + `
	span := fmt.Sprintf("%d %d", start, time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(os.Getenv("MARKS"), "` + pkg + `"), []byte(span), 0o644); err != nil {
		t.Fatal(err)
	}
}
`
	}
	files := map[string]string{}
	for _, m := range []string{"a", "b", "c", "alone"} {
		body := ""
		switch m {
		case "c":
			body = `t.Error("c fails")`
		case "a", "b":
			other := map[string]string{"a": "b", "b": "a"}[m]
			body = `marks := os.Getenv("MARKS")
	if err := os.WriteFile(filepath.Join(marks, "` + m + `-started"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(marks, "` + other + `-started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("` + other + `'s test did not start while this one ran")
		}
	}`
		}
		files[m+"/go.mod"] = "module example.com/" + m + "\n\ngo 1.26\n"
		files[m+"/"+m+"_test.go"] = test(m, body)
	}
	writeFiles(t, repo, files)
	t.Setenv("MARKS", marks)
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-buildvcs=false")
	t.Setenv("AUTHPORT_TEST_JOBS", "3")
	t.Setenv("XDG_CACHE_HOME", cache)
	run := &testRun{repo: repo, logDir: logDir, exclusive: map[string]string{"alone": "the test's exclusive module"}}
	modules := []string{"a", "alone", "b", "c"}
	// An extra job (as the consumer check is) runs in the schedule too,
	// beside the shared modules, never beside the exclusive one.
	var extraSpan [2]int64
	extra := job{module: "extra", estimate: time.Hour, run: func() {
		extraSpan[0] = time.Now().UnixNano()
		time.Sleep(time.Second)
		extraSpan[1] = time.Now().UnixNano()
	}}
	if err := run.testModules(context.Background(), modules, extra); err != nil {
		t.Fatal(err)
	}

	var got []string
	for _, r := range run.modules {
		got = append(got, fmt.Sprintf("%s %d/%d", r.dir, r.passed, r.failed))
	}
	if want := []string{"a 1/0", "alone 1/0", "b 1/0", "c 0/1"}; !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
	if want := []string{"go test in c"}; !slices.Equal(run.failures, want) {
		t.Errorf("failures %q, want %q", run.failures, want)
	}
	spans := map[string][2]int64{}
	for _, m := range modules {
		b, err := os.ReadFile(filepath.Join(marks, m))
		if m == "c" {
			continue // it failed before writing
		}
		if err != nil {
			t.Fatalf("module %s's test left no mark (see the results above): %v", m, err)
		}
		f := strings.Fields(string(b))
		start, _ := strconv.ParseInt(f[0], 10, 64)
		end, _ := strconv.ParseInt(f[1], 10, 64)
		spans[m] = [2]int64{start, end}
	}
	overlap := func(x, y [2]int64) bool { return x[0] < y[1] && y[0] < x[1] }
	// a and b passed: each saw the other start (above, "a 1/0", "b 1/0").
	for _, m := range []string{"a", "b"} {
		if overlap(spans["alone"], spans[m]) {
			t.Errorf("the exclusive module %v ran beside %s %v", spans["alone"], m, spans[m])
		}
	}
	if spans["alone"][1] > spans["a"][0] {
		t.Error("the exclusive module did not run first")
	}
	if extraSpan[0] == 0 || overlap(spans["alone"], extraSpan) {
		t.Errorf("the extra job %v did not run, or ran beside the exclusive module %v", extraSpan, spans["alone"])
	}
	for _, m := range modules {
		if _, err := os.Stat(filepath.Join(logDir, m+".log")); err != nil {
			t.Errorf("no log of %s: %v", m, err)
		}
	}
	times := readTimes(filepath.Join(cache, "authport", "test-times.json"))
	if len(times) != 3 || times["c"] != 0 || times["a"] < time.Second {
		t.Errorf("recorded durations %v, want a, alone and b (over 1s each), not c", times)
	}
}

// Every module named in exclusiveModules, moduleEstimates and
// moduleParallel is a module
// of the repository (a renamed one would silently lose its place).
func TestScheduleTablesNameModules(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for m := range exclusiveModules {
		if _, err := os.Stat(filepath.Join(repo, m, "go.mod")); err != nil {
			t.Errorf("exclusiveModules names %s, which is not a module: %v", m, err)
		}
	}
	for m := range moduleEstimates {
		if _, err := os.Stat(filepath.Join(repo, m, "go.mod")); err != nil {
			t.Errorf("moduleEstimates names %s, which is not a module: %v", m, err)
		}
	}
	for m := range moduleParallel {
		if _, err := os.Stat(filepath.Join(repo, m, "go.mod")); err != nil {
			t.Errorf("moduleParallel names %s, which is not a module: %v", m, err)
		}
	}
}

// AUTHPORT_TEST_JOBS sets the width; anything but a positive number is
// refused with the variable named.
func TestTestJobs(t *testing.T) {
	t.Setenv("AUTHPORT_TEST_JOBS", "5")
	if n, err := testJobs(); n != 5 || err != nil {
		t.Errorf("testJobs() = %d, %v; want 5", n, err)
	}
	for _, bad := range []string{"0", "-1", "many"} {
		t.Setenv("AUTHPORT_TEST_JOBS", bad)
		if _, err := testJobs(); err == nil || !strings.Contains(err.Error(), "AUTHPORT_TEST_JOBS") {
			t.Errorf("AUTHPORT_TEST_JOBS=%s: error %v", bad, err)
		}
	}
	t.Setenv("AUTHPORT_TEST_JOBS", "")
	if n, err := testJobs(); n < 2 || n > 4 || err != nil {
		t.Errorf("default testJobs() = %d, %v; want 2 to 4", n, err)
	}
}
