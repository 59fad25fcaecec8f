package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// opFunc is one call of an operation; i numbers the call within its phase
// (0, 1, …), and the function checks its own result.
type opFunc func(ctx context.Context, i int) error

// operation is one row of the table: the adapter's implementation and the
// raw baseline's, and optionally prepare, which makes n fresh records
// before a phase of n calls (untimed; deleteUser needs users to delete).
type operation struct {
	name    string
	adapter opFunc
	raw     opFunc // nil: the backend has no raw baseline (memory)
	prepare func(ctx context.Context, side string, round, n int) error
	// keepCalls says that the rounds are not lengthened
	// (config.minRound): each call adds a record that stays
	// (createSession), or each call of a round needs a record no other
	// call of the round touches (the refresh rotation's compare-and-set:
	// the records are as many as a round's calls, not more).
	keepCalls bool
}

// backend is one database reached through one adapter, with its raw
// baseline on the same client.
type backend struct {
	name  string
	ops   []operation
	rt    *roundTrips // nil when the store is in-process
	close func()
	// concurrency, when set, replaces the run's (the MongoDB stand-in
	// serialises writes: 32 concurrent deleteUser calls outlast any
	// sensible deadline on it, so it runs at concurrency 1 only).
	concurrency []int
	note        string
}

// config says how much to run.
type config struct {
	rounds       int           // alternated adapter/raw rounds per operation and concurrency
	calls        int           // calls per phase at concurrency 1
	callsPerConc int           // calls per phase per worker at higher concurrency
	concurrency  []int         // e.g. 1, 32
	users        int           // users (with an account and a session) seeded per backend
	timeout      time.Duration // per call
	ops          []string      // the adapter rows to run; nil: all
	// minRound, when set, is the least time a round of a row that counts
	// no round trips (an in-process store's operations; the HTTP and
	// in-process handler rows) should take: an in-process call takes
	// microseconds, and a round of cfg.calls of them lasts a few
	// milliseconds, so that one garbage collection or one descheduled call
	// swings the row. The calls per round are raised (from the warm-up's
	// rate) until a round of each side lasts about this long. Operations
	// that prepare records per round (deleteUser) or add records that stay
	// (createSession) keep their count.
	minRound time.Duration
}

// sideStats is what one side (adapter or raw) of one row measured.
type sideStats struct {
	Calls      int     `json:"calls"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	P50Micros  float64 `json:"p50_us"`
	P99Micros  float64 `json:"p99_us"`
	RoundTrips float64 `json:"round_trips_per_op"` // -1: not a network store
}

// result is one row: backend × operation × concurrency.
type result struct {
	Backend     string     `json:"backend"`
	Operation   string     `json:"operation"`
	Concurrency int        `json:"concurrency"`
	Adapter     sideStats  `json:"adapter"`
	Raw         *sideStats `json:"raw,omitempty"`
	// Ratio is the adapter's throughput over the raw baseline's.
	Ratio float64 `json:"ratio,omitempty"`
}

// phase runs n calls of f on c workers and returns the wall time, every
// call's latency and the round trips made.
func phase(ctx context.Context, f opFunc, n, c int, rt *roundTrips, timeout time.Duration) (time.Duration, []time.Duration, int64, error) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	before := rt.load()
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				cctx, cancel := context.WithTimeout(ctx, timeout)
				t0 := time.Now()
				err := f(cctx, i)
				lat[i] = time.Since(t0)
				cancel()
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("call %d: %w", i, err) })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), lat, rt.load() - before, firstErr
}

// accum gathers one side's latencies over the rounds, and its share of the
// rounds' wall time.
type accum struct {
	lat  []time.Duration
	wall time.Duration
}

func (a *accum) add(lat []time.Duration, wall time.Duration) {
	a.lat = append(a.lat, lat...)
	a.wall += wall
}

// stats summarises the calls: ops/s is the calls over the side's share of
// the wall time.
func (a *accum) stats() sideStats {
	slices.Sort(a.lat)
	pct := func(p float64) float64 {
		if len(a.lat) == 0 {
			return 0
		}
		i := int(p * float64(len(a.lat)-1))
		return float64(a.lat[i].Nanoseconds()) / 1e3
	}
	s := sideStats{Calls: len(a.lat), P50Micros: pct(0.50), P99Micros: pct(0.99), RoundTrips: -1}
	if a.wall > 0 {
		s.OpsPerSec = float64(len(a.lat)) / a.wall.Seconds()
	}
	return s
}

// measure runs one operation at concurrency c. After a warm-up phase of
// each side, and a serial phase of each that counts its round trips,
// cfg.rounds rounds run both sides interleaved call by call: each worker
// alternates an adapter call and a raw call, so that whatever the machine
// does meanwhile (a shared, loaded machine: other processes, a checkpoint,
// a garbage collection) hits both alike. Each round's wall time is shared
// between the sides in proportion to their calls' summed latencies; a
// side's ops/s is its calls over its share, so adapter/raw is the raw
// baseline's total latency over the adapter's.
func measure(ctx context.Context, b *backend, op operation, c int, cfg config) (result, error) {
	n := cfg.calls
	if c > 1 {
		n = cfg.callsPerConc * c
	}
	sides := []*side{{name: "adapter", f: op.adapter}}
	if op.raw != nil {
		sides = append(sides, &side{name: "raw", f: op.raw})
	}
	prepare := func(s *side, round, n int) error {
		if op.prepare == nil {
			return nil
		}
		if err := op.prepare(ctx, s.name, round, n); err != nil {
			return fmt.Errorf("%s %s: preparing %s round %d: %w", b.name, op.name, s.name, round, err)
		}
		return nil
	}
	const rtCalls = 50
	rts := make([]float64, len(sides))
	var slowest time.Duration // the slower side's warm-up
	for k, s := range sides { // warm-up (pools filled, statements prepared), then round trips
		if err := prepare(s, -2, n); err != nil {
			return result{}, err
		}
		took, _, _, err := phase(ctx, s.f, n, c, b.rt, cfg.timeout)
		if err != nil {
			return result{}, fmt.Errorf("%s %s (%s, concurrency %d): %w", b.name, op.name, s.name, c, err)
		}
		slowest = max(slowest, took)
		if err := prepare(s, -1, rtCalls); err != nil {
			return result{}, err
		}
		_, _, count, err := phase(ctx, s.f, rtCalls, 1, b.rt, cfg.timeout)
		if err != nil {
			return result{}, fmt.Errorf("%s %s (%s, serial): %w", b.name, op.name, s.name, err)
		}
		rts[k] = float64(count) / rtCalls
	}
	n = roundCalls(n, slowest, b.rt == nil && op.prepare == nil && !op.keepCalls, cfg.minRound)
	for r := range cfg.rounds {
		for _, s := range sides {
			if err := prepare(s, r, n); err != nil {
				return result{}, err
			}
		}
		if err := mixed(ctx, sides, n, c, r, cfg.timeout); err != nil {
			return result{}, fmt.Errorf("%s %s (concurrency %d): %w", b.name, op.name, c, err)
		}
	}
	network := b.rt != nil
	stats := func(k int) sideStats {
		st := sides[k].acc.stats()
		st.RoundTrips = -1
		if network {
			st.RoundTrips = rts[k]
		}
		return st
	}
	res := result{Backend: b.name, Operation: op.name, Concurrency: c, Adapter: stats(0)}
	if len(sides) == 2 {
		raw := stats(1)
		res.Raw = &raw
		if raw.OpsPerSec > 0 {
			res.Ratio = res.Adapter.OpsPerSec / raw.OpsPerSec
		}
	}
	return res, nil
}

// maxRoundCalls bounds the calls of a round that roundCalls raises.
const maxRoundCalls = 1 << 21

// roundCalls is the calls per side in a round: n, or for a row that
// counts no round trips (inProcess; see config.minRound) whose warm-up of
// n calls took less than minRound, as many as take about minRound at the
// warm-up's rate (at most maxRoundCalls).
func roundCalls(n int, warmup time.Duration, inProcess bool, minRound time.Duration) int {
	if !inProcess || minRound <= 0 || warmup >= minRound {
		return n
	}
	scaled := float64(n) * float64(minRound) / float64(max(warmup, time.Microsecond))
	return int(min(max(scaled, float64(n)), maxRoundCalls))
}

// side is the adapter's or the raw baseline's part of a row.
type side struct {
	name string
	f    opFunc
	acc  accum
}

// mixed runs n calls of every side on c workers, each worker alternating
// between the sides call by call (worker w starts with side w mod sides).
func mixed(ctx context.Context, sides []*side, n, c, round int, timeout time.Duration) error {
	next := make([]atomic.Int64, len(sides))
	lat := make([][]time.Duration, len(sides))
	for k := range sides {
		lat[k] = make([]time.Duration, n)
	}
	var firstErr error
	var once sync.Once
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			turn := w + round
			for !stop.Load() {
				progressed := false
				for range sides {
					k := turn % len(sides)
					turn++
					i := int(next[k].Add(1) - 1)
					if i >= n {
						continue
					}
					cctx, cancel := context.WithTimeout(ctx, timeout)
					t0 := time.Now()
					err := sides[k].f(cctx, i)
					lat[k][i] = time.Since(t0)
					cancel()
					if err != nil {
						once.Do(func() { firstErr = fmt.Errorf("%s call %d: %w", sides[k].name, i, err) })
						stop.Store(true)
						return
					}
					progressed = true
					break
				}
				if !progressed {
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	// The phase's wall time is shared between the sides in proportion to
	// the time their calls took.
	wall := time.Since(start)
	sums := make([]time.Duration, len(sides))
	var total time.Duration
	for k := range sides {
		for _, l := range lat[k] {
			sums[k] += l
		}
		total += sums[k]
	}
	for k, s := range sides {
		share := wall
		if total > 0 {
			share = time.Duration(float64(wall) * float64(sums[k]) / float64(total))
		}
		s.acc.add(lat[k], share)
	}
	return nil
}
