package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// testRun is one run of the test command.
type testRun struct {
	repo, logDir string
	started      time.Time
	// exclusive: the modules tested alone, and why (nil: exclusiveModules).
	exclusive map[string]string
	// mu guards failures and modules, and keeps each module's console
	// block whole: modules are tested side by side (schedule.go).
	mu       sync.Mutex
	failures []string
	modules  []moduleResult
}

type moduleResult struct {
	dir string
	testResult
	took time.Duration
}

// step prints the heading of a step of the run, with the time of day, so
// that the console shows where a run's time went.
func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "\n== %s  [%s]\n", fmt.Sprintf(format, args...), time.Now().Format(time.TimeOnly))
}

func (t *testRun) fail(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = append(t.failures, msg)
	fmt.Fprintf(os.Stderr, "FAILED: %s\n", msg)
}

// testCmd is the test command (scripts/test.sh): it makes the databases
// reachable, checks formatting, vets, checks `go mod tidy`, lints the
// workflows, installs the interop suites' npm packages, runs every
// module's tests with -race (which replays every fuzz corpus) and, beside
// them, the consumer check, fuzzes when AUTHPORT_FUZZTIME asks and prints
// the summary.
// Full output goes to AUTHPORT_LOG_DIR (default: a temporary directory).
func testCmd(ctx context.Context, repo string) error {
	logDir, err := prepare("authport-test.")
	if err != nil {
		return err
	}
	// The tests see it too, and save artifacts there (the browser tests'
	// screenshots, for one).
	os.Setenv("AUTHPORT_LOG_DIR", logDir)
	t := &testRun{repo: repo, logDir: logDir, started: time.Now()}
	if _, err := testJobs(); err != nil {
		return err // before anything runs
	}

	step("services")
	if os.Getenv("AUTHPORT_SERVICES") != "none" {
		exports, err := provide(ctx, repo, os.Getenv("AUTHPORT_SETUP_HOST") == "1")
		if err != nil {
			return err
		}
		for _, e := range exports {
			os.Setenv(e.name, e.value)
			fmt.Fprintf(os.Stderr, "  export %s='%s'\n", e.name, e.value)
		}
	}
	modules, outside, err := t.listModules(ctx)
	if err != nil {
		return err
	}
	t.checks(ctx, modules, outside)
	t.npmCI(ctx)

	// The consumer check (tools/release) builds while the tests wait: a
	// job of the schedule, its table printed in one piece when it ends.
	consumer := job{module: "consumer check", estimate: consumerEstimate, run: func() { t.consumerCheck(ctx) }}
	if err := t.testModules(ctx, slices.Concat(modules, outside), consumer); err != nil {
		return err
	}
	t.printFigures()

	// Fuzzing: `go test` above replays every committed corpus; the
	// open-ended search runs only when AUTHPORT_FUZZTIME asks for it, so
	// that a new random crasher cannot fail a run that only replays.
	if ft := os.Getenv("AUTHPORT_FUZZTIME"); ft != "" {
		step("fuzz (%s per target)", ft)
		if err := runFuzz(ctx, repo, filepath.Join(logDir, "fuzz"), ft, "", os.Stderr); err != nil {
			t.fail("fuzz: see the FAIL lines above")
		}
	}

	return t.summary()
}

// listModules returns the go.work modules, then the modules outside go.work
// (built and tested with GOWORK=off, never released): the test-only suites
// under tests/ and the programs under tools/, relative to the repository.
func (t *testRun) listModules(ctx context.Context) (modules, outside []string, err error) {
	out, err := cmdSpec{args: []string{"go", "list", "-m", "-f", "{{.Dir}}"}, dir: t.repo}.output(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range strings.Fields(out) {
		rel, _ := filepath.Rel(t.repo, d)
		modules = append(modules, rel)
	}
	for _, dir := range outsideDirs() {
		mods, _ := filepath.Glob(filepath.Join(t.repo, dir, "*", "go.mod"))
		for _, m := range mods {
			rel, _ := filepath.Rel(t.repo, filepath.Dir(m))
			outside = append(outside, filepath.ToSlash(rel))
		}
	}
	slices.Sort(outside)
	return modules, outside, nil
}

// outsideDirs hold the modules outside go.work, one per subdirectory:
// tests/ the test-only suites, tools/ the programs.
func outsideDirs() []string { return []string{"tests", "tools"} }

// checks: gofmt, go vet, go mod tidy -diff, actionlint.
func (t *testRun) checks(ctx context.Context, modules, outside []string) {
	step("gofmt")
	files, _ := cmdSpec{args: []string{"git", "ls-files", "*.go"}, dir: t.repo}.output(ctx)
	var out strings.Builder
	_ = cmdSpec{args: append([]string{"gofmt", "-l"}, strings.Fields(files)...), dir: t.repo, stdout: &out, stderr: &out}.run(ctx)
	if s := strings.TrimSpace(out.String()); s != "" {
		fmt.Fprintln(os.Stderr, s)
		t.fail("gofmt: run gofmt -w on the files above")
	}

	// go vet builds what it checks with -race, as go test then does: the
	// dependencies it compiles are the ones the tests link (one build
	// cache entry each), so vetting costs the run little beyond the
	// analysis. The go.work modules are vetted by one go command, which
	// compiles each shared dependency once; the modules outside go.work
	// side by side. (-race also sets the race build tag: files built only
	// without it, //go:build !race, are left out, as go test -race leaves
	// them out.)
	width, _ := testJobs()
	step("go vet -race")
	var vetOut strings.Builder
	if err := (cmdSpec{args: []string{"go", "vet", "-race", "work"}, dir: t.repo, stdout: &vetOut, stderr: &vetOut}).run(ctx); err != nil {
		fmt.Fprint(os.Stderr, vetOut.String())
		t.fail("go vet in the go.work modules: see the packages above")
	}
	eachModule(outside, width, func(m string) (string, bool) {
		var out strings.Builder
		err := cmdSpec{args: []string{"go", "vet", "-race", "./..."}, dir: filepath.Join(t.repo, m), env: goworkEnv(m), stdout: &out, stderr: &out}.run(ctx)
		return out.String(), err == nil
	}, func(m, out string, ok bool) {
		fmt.Fprint(os.Stderr, out)
		if !ok {
			t.fail("go vet in " + m)
		}
	})

	step("go mod tidy")
	eachModule(slices.Concat(modules, outside), width, func(m string) (string, bool) {
		var diff strings.Builder
		err := cmdSpec{args: []string{"go", "mod", "tidy", "-diff"}, dir: filepath.Join(t.repo, m), env: []string{"GOWORK=off"}, stdout: &diff, stderr: &diff}.run(ctx)
		return diff.String(), err == nil
	}, func(m, diff string, ok bool) {
		if !ok {
			fmt.Fprint(os.Stderr, diff)
			t.fail("go mod tidy would change " + m + "/go.mod or go.sum: run it there")
		}
	})

	step("actionlint")
	const version = "v1.7.12"
	gobin := filepath.Join(cacheDir(), "bin")
	bin := filepath.Join(gobin, "actionlint-"+version)
	if !fileExecutable(bin) {
		err := cmdSpec{args: []string{"go", "install", "github.com/rhysd/actionlint/cmd/actionlint@" + version}, env: []string{"GOBIN=" + gobin, "GOWORK=off"}}.run(ctx)
		if err == nil {
			err = os.Rename(filepath.Join(gobin, "actionlint"), bin)
		}
		if err != nil {
			t.fail("actionlint: could not install it: " + err.Error())
			return
		}
	}
	workflows, _ := filepath.Glob(filepath.Join(t.repo, ".github/workflows/*.yml"))
	if err := (cmdSpec{args: append([]string{bin}, workflows...), dir: t.repo}).run(ctx); err != nil {
		t.fail("actionlint")
	}
}

// goworkEnv: the modules under tests/ and tools/ are built with GOWORK=off.
func goworkEnv(module string) []string {
	for _, dir := range outsideDirs() {
		if strings.HasPrefix(module, dir+"/") {
			return []string{"GOWORK=off"}
		}
	}
	return nil
}

// required reports whether AUTHPORT_REQUIRE is all or names backend.
// Names are compared without regard to case, as conformance/provision
// compares them.
func required(backend string) bool {
	for r := range strings.SplitSeq(os.Getenv("AUTHPORT_REQUIRE"), ",") {
		if r = strings.TrimSpace(r); strings.EqualFold(r, "all") || strings.EqualFold(r, backend) {
			return true
		}
	}
	return false
}

// testModules runs every module's tests, as many modules at once as
// testJobs says, in the order of plan (schedule.go): the exclusive modules
// alone first, then the others longest first, with the extra jobs among
// them by their estimates. The summary lists the modules in the order of
// modules, whatever order they ended in.
func (t *testRun) testModules(ctx context.Context, modules []string, extra ...job) error {
	width, err := testJobs()
	if err != nil {
		return err
	}
	exclusive := t.exclusive
	if exclusive == nil {
		exclusive = exclusiveModules
	}
	jobs := plan(modules, readTimes(timesFile()), exclusive)
	step("go test -race, %d modules at once, the longest first (full -v logs in %s)", width, t.logDir)
	for _, j := range jobs {
		if j.exclusive != "" {
			fmt.Fprintf(os.Stderr, "  alone first: %s (%s)\n", j.module, j.exclusive)
		}
	}
	for _, j := range extra {
		jobs = insertJob(jobs, j)
	}
	runSchedule(jobs, width, func(j job) {
		if j.run != nil {
			j.run()
			return
		}
		t.testModule(ctx, j.module)
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	slices.SortStableFunc(t.modules, func(a, b moduleResult) int {
		return slices.Index(modules, a.dir) - slices.Index(modules, b.dir)
	})
	if err := writeTimes(timesFile(), t.modules); err != nil {
		fmt.Fprintf(os.Stderr, "  could not record the modules' durations for the next run's order: %v\n", err)
	}
	return nil
}

// testModule runs `go test -race` in module m, its full output in
// logDir/<m with / as _>.log; when it ends, its block (the result line,
// failures and skips) goes to the console in one piece.
func (t *testRun) testModule(ctx context.Context, m string) {
	start := time.Now()
	name := strings.ReplaceAll(m, "/", "_") + ".log"
	log, err := os.Create(filepath.Join(t.logDir, name))
	if err != nil {
		t.fail("go test in " + m + ": " + err.Error())
		return
	}
	env := goworkEnv(m)
	// -timeout guards against a hang: 30 minutes, since a package shares
	// the machine with other modules' tests (adapters/postgres-gorm, one
	// package, took 14 minutes alone on a 2-core machine).
	args := []string{"-race", "-count=1", "-v", "-timeout", "30m"}
	if n := moduleParallel[m]; n > 0 {
		args = append(args, "-parallel", strconv.Itoa(n))
	}
	res := goTest(ctx, filepath.Join(t.repo, m), env, log, append(args, "./...")...)
	log.Close()
	r := moduleResult{dir: m, testResult: res, took: time.Since(start)}
	var b strings.Builder
	status := "ok  "
	failed := res.err != nil || res.failed > 0
	if failed {
		status = "FAIL"
		fmt.Fprintf(&b, "FAILED: go test in %s\n", m)
	}
	fmt.Fprintf(&b, "%s  %-28s %4d passed, %d failed, %d skipped (%ds)\n", status, m, res.passed, res.failed, res.skipped, int(r.took.Seconds()))
	for _, s := range res.skips {
		fmt.Fprintf(&b, "      skip %s\n", s)
	}
	for _, f := range res.failures {
		fmt.Fprintf(&b, "      FAIL %s\n", f)
		for _, l := range res.output[f] {
			fmt.Fprintf(&b, "          %s\n", l)
		}
	}
	if lines := res.output["go"]; len(lines) > 0 {
		fmt.Fprintln(&b, "      "+strings.Join(lines, "\n      "))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.modules = append(t.modules, r)
	if failed {
		t.failures = append(t.failures, "go test in "+m)
	}
	io.WriteString(os.Stderr, b.String())
}

// consumerCheck is the consumer check (tools/release): every adapter and
// sign-in module from a module outside the repository, through a local
// module proxy made of this tree. Its table goes to the console in one
// piece when it ends.
func (t *testRun) consumerCheck(ctx context.Context) {
	var out strings.Builder
	err := cmdSpec{args: []string{"go", "run", ".", "-C", t.repo, "consumers"}, dir: filepath.Join(t.repo, "tools/release"), env: []string{"GOWORK=off"}, stdout: &out, stderr: &out}.run(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(os.Stderr, "\n== consumer check (every adapter and sign-in module from a module outside the repository)  [%s]\n%s", time.Now().Format(time.TimeOnly), out.String())
	if err != nil {
		t.failures = append(t.failures, "consumer check: see the table above (tools/release/consumer.go)")
		fmt.Fprintf(os.Stderr, "FAILED: consumer check: %v\n", err)
	}
}

// printFigures copies the fault-injection tables (tests/faults) and the
// container suite's one line per backend (tests/backends) from their
// logs to the console.
func (t *testRun) printFigures() {
	if b, err := os.ReadFile(filepath.Join(t.logDir, "tests_faults.log")); err == nil {
		for _, title := range []string{"Fault injection (tests/faults", "Password sign-up and reset under a killed server (tests/faults", "Failover under load (tests/faults"} {
			fmt.Fprint(os.Stderr, paragraph(string(b), title))
		}
	}
	if b, err := os.ReadFile(filepath.Join(t.logDir, "tests_backends.log")); err == nil {
		for l := range strings.Lines(string(b)) {
			if strings.Contains(l, "through testcontainers:") {
				fmt.Fprint(os.Stderr, l)
			}
		}
	}
}

// checkTable fails the run when a backend of the table of backends that
// AUTHPORT_REQUIRE names passed no conformance rule (conf, by backend: its
// module's TestConformance has no subtest of its name, or skipped it), or
// when its module is not one the run tested.
func (t *testRun) checkTable(conf map[string]*[3]int) {
	table, err := readBackends(t.repo)
	if err != nil {
		t.fail(err.Error())
		return
	}
	for _, b := range table {
		if !required(b.Name) {
			continue
		}
		if !slices.ContainsFunc(t.modules, func(m moduleResult) bool { return m.dir == b.Module }) {
			t.fail(fmt.Sprintf("backend %s: its module %s (%s) is not one this run tested: add it to go.work", b.Name, b.Module, tablePath))
		} else if c := conf[b.Name]; c == nil || c[0] == 0 {
			t.fail(fmt.Sprintf("backend %s passed no conformance rule: %s's TestConformance/%s did not run (%s)", b.Name, b.Module, b.Name, tablePath))
		}
	}
}

// paragraph returns the lines of text from each line that starts with
// title up to the next empty line, inclusive.
func paragraph(text, title string) string {
	var b strings.Builder
	in := false
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, title) {
			in = true
		}
		if in {
			b.WriteString(l)
			if strings.TrimRight(l, "\n") == "" {
				in = false
			}
		}
	}
	return b.String()
}

// summary prints the table per module, the conformance results per
// backend, the failed tests and the failures of the run, then the closing
// count line on stdout; it fails when anything failed.
func (t *testRun) summary() error {
	step("summary (per module: passed, failed, skipped)")
	var passed, failed, skipped int
	conf := map[string]*[3]int{}
	var failedTests []string
	for _, m := range t.modules {
		fmt.Fprintf(os.Stderr, "  %-30s %5d %4d %4d  %4ds\n", m.dir, m.passed, m.failed, m.skipped, int(m.took.Seconds()))
		passed, failed, skipped = passed+m.passed, failed+m.failed, skipped+m.skipped
		for b, c := range m.conformance {
			if conf[b] == nil {
				conf[b] = new([3]int)
			}
			for i := range c {
				conf[b][i] += c[i]
			}
		}
		for _, f := range m.failures {
			failedTests = append(failedTests, m.dir+": "+f)
		}
	}
	step("conformance, per backend and variant (pass/fail/skip of TestConformance*/<backend>/<method>/<rule>)")
	backends := slices.Sorted(maps.Keys(conf))
	for _, b := range backends {
		c := conf[b]
		fmt.Fprintf(os.Stderr, "  %-30s %4d rules: %4d passed, %d failed, %d skipped\n", b, c[0]+c[1]+c[2], c[0], c[1], c[2])
	}
	t.checkTable(conf)
	if len(failedTests) > 0 {
		fmt.Fprintln(os.Stderr, "\nFailed tests:")
		for _, f := range failedTests {
			fmt.Fprintf(os.Stderr, "  %s\n", f)
		}
	}
	if len(t.failures) > 0 {
		fmt.Fprintln(os.Stderr, "\nThe run failed:")
		for _, f := range t.failures {
			fmt.Fprintf(os.Stderr, "  %s\n", f)
		}
	}
	fmt.Fprintf(os.Stderr, "\nThe run took %s.\n", time.Since(t.started).Round(time.Second))
	fmt.Printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if len(t.failures) > 0 {
		return errReported
	}
	return nil
}
