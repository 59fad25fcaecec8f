package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The modules' tests run side by side: most of a module's time is spent
// waiting on databases, browsers, containers and sleeps, not computing, so
// a few at once on two cores take far less than one after another. The
// schedule (plan) starts the longest first, so that the run does not end
// waiting on one long module started last, and runs the exclusive modules
// alone, before the others.

// exclusiveModules are the modules whose tests run with no other module's,
// and why. A module belongs here when its tests stop, restart or
// reconfigure a server another module's tests use, or when they judge
// timings that other modules' load would upset.
var exclusiveModules = map[string]string{
	// Its servers are its own (private PostgreSQL, MariaDB, Redis, Redis
	// Cluster, Sentinel, pg_auto_failover and the MongoDB stand-in on free
	// ports), but it kills them under load and judges the recovery against
	// fixed limits (the first call within 2 s of a restart, a clean store
	// within 5 s, a Sentinel promotion within 2 minutes), and reports
	// failover timings: beside other modules' load those would measure the
	// machine, not the adapters.
	"tests/faults": "kills its own database servers under load and judges recovery against fixed time limits",
	// Its rows hold pools of 32 connections per side (the limit server's
	// and the handler's, on PostgreSQL and MariaDB, as the bench measures
	// them): beside postgres-gorm's parallel suites they would take the
	// shared PostgreSQL past its 100 connections.
	"tools/bench": "holds pools of 32 connections per side on the shared PostgreSQL and MariaDB, which beside other suites pass the servers' connection limit",
}

// moduleEstimates are the seconds each long module's tests took in a CI
// run, one module at a time on a 2-core machine (the schedule's order when
// no run on this machine recorded its own, timesFile). Modules not named
// are estimated at defaultEstimate.
var moduleEstimates = map[string]int{
	"adapters/postgres-gorm": 846,
	"tests/backends":         419,
	"tests/faults":           300,
	"examples/demo":          281,
	"adapters/redis":         150,
	"handler":                120,
	"examples/webapp":        100,
	"adapters/mongodb":       90,
}

const defaultEstimate = 30 * time.Second

// moduleParallel raises go test's -parallel (GOMAXPROCS by default: two
// on a 2-core machine) for modules whose parallel tests mostly wait:
// adapters/postgres-gorm runs a dozen full conformance suites in parallel
// (each rule on a database of its own), tests/backends one container and
// one adapter suite per backend, four of them.
var moduleParallel = map[string]int{
	"adapters/postgres-gorm": 4,
	"tests/backends":         4,
}

// job is one module's place in the schedule.
type job struct {
	module    string
	estimate  time.Duration
	exclusive string // why it runs alone; empty when it shares the machine
	// run, when set, is what the job does instead of testing module (then
	// a name for the console).
	run func()
}

// consumerEstimate is about what the consumer check (tools/release) took
// on a 2-core machine.
const consumerEstimate = 180 * time.Second

// insertJob puts a shared job among planned jobs: after the exclusive ones
// and before the first shared job with a shorter estimate.
func insertJob(jobs []job, j job) []job {
	i := slices.IndexFunc(jobs, func(o job) bool { return o.exclusive == "" && o.estimate < j.estimate })
	if i < 0 {
		i = len(jobs)
	}
	return slices.Insert(jobs, i, j)
}

// plan orders modules for the schedule: the exclusive ones first (in
// their given order), then the others longest estimate first, ties in
// their given order. recorded holds durations measured by earlier runs on
// this machine, which win over moduleEstimates.
func plan(modules []string, recorded map[string]time.Duration, exclusive map[string]string) []job {
	jobs := make([]job, 0, len(modules))
	for _, m := range modules {
		j := job{module: m, estimate: defaultEstimate, exclusive: exclusive[m]}
		if s, ok := moduleEstimates[m]; ok {
			j.estimate = time.Duration(s) * time.Second
		}
		if d, ok := recorded[m]; ok && d > 0 {
			j.estimate = d
		}
		jobs = append(jobs, j)
	}
	slices.SortStableFunc(jobs, func(a, b job) int {
		if (a.exclusive != "") != (b.exclusive != "") {
			if a.exclusive != "" {
				return -1
			}
			return 1
		}
		if a.exclusive != "" {
			return 0 // the exclusive ones keep their order
		}
		return cmp.Compare(b.estimate, a.estimate)
	})
	return jobs
}

// runSchedule calls run for every job, in the order of jobs, with at most
// width running at once; an exclusive job starts once every job before it
// has ended, and no job after it starts before it ends. It returns when
// every run has returned.
func runSchedule(jobs []job, width int, run func(job)) {
	width = max(width, 1)
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		running int
		wg      sync.WaitGroup
	)
	for _, j := range jobs {
		need := 1
		if j.exclusive != "" {
			need = width
		}
		mu.Lock()
		for running+need > width {
			cond.Wait()
		}
		running += need
		mu.Unlock()
		wg.Go(func() {
			defer func() {
				mu.Lock()
				running -= need
				cond.Broadcast()
				mu.Unlock()
			}()
			run(j)
		})
	}
	wg.Wait()
}

// testJobs is how many modules' tests run at once: AUTHPORT_TEST_JOBS, or
// else twice the number of CPUs, at least 2 and at most 4 (the modules
// mostly wait; more than four at once on a small machine would make the
// slowest of them slower than they save).
func testJobs() (int, error) {
	if v := os.Getenv("AUTHPORT_TEST_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("AUTHPORT_TEST_JOBS=%q: want a number of modules to test at once, 1 or more", v)
		}
		return n, nil
	}
	return min(max(2*runtime.NumCPU(), 2), 4), nil
}

// timesFile holds the duration of each module's tests in the last run on
// this machine that passed them, in seconds: the schedule's estimates.
func timesFile() string { return filepath.Join(cacheDir(), "test-times.json") }

// readTimes reads timesFile; a missing or unreadable file is no estimates.
func readTimes(path string) map[string]time.Duration {
	var secs map[string]float64
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &secs) != nil {
		return nil
	}
	out := make(map[string]time.Duration, len(secs))
	for m, s := range secs {
		out[m] = time.Duration(s * float64(time.Second))
	}
	return out
}

// writeTimes records the durations of the modules whose tests passed,
// keeping the earlier figures of the others.
func writeTimes(path string, results []moduleResult) error {
	secs := map[string]float64{}
	for m, d := range readTimes(path) {
		secs[m] = d.Seconds()
	}
	for _, r := range results {
		if r.err == nil && r.failed == 0 {
			secs[r.dir] = r.took.Round(time.Second).Seconds()
		}
	}
	b, err := json.MarshalIndent(secs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// eachModule calls check for every module, width at once, then report
// with each one's result in the order of modules, so that the console
// reads the same whatever order the checks ended in.
func eachModule(modules []string, width int, check func(m string) (string, bool), report func(m, out string, ok bool)) {
	type result struct {
		out string
		ok  bool
	}
	results := make([]result, len(modules))
	jobs := make([]job, len(modules))
	for i, m := range modules {
		jobs[i] = job{module: m}
	}
	runSchedule(jobs, width, func(j job) {
		i := slices.Index(modules, j.module)
		out, ok := check(j.module)
		results[i] = result{out, ok}
	})
	for i, m := range modules {
		report(m, results[i].out, results[i].ok)
	}
}
