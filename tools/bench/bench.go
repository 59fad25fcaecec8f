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

type accum struct {
	wall  time.Duration
	lat   []time.Duration
	rts   int64
	calls int
}

func (a *accum) add(wall time.Duration, lat []time.Duration, rts int64) {
	a.wall += wall
	a.lat = append(a.lat, lat...)
	a.rts += rts
	a.calls += len(lat)
}

func (a *accum) stats(network bool) sideStats {
	slices.Sort(a.lat)
	pct := func(p float64) float64 {
		if len(a.lat) == 0 {
			return 0
		}
		i := int(p * float64(len(a.lat)-1))
		return float64(a.lat[i].Nanoseconds()) / 1e3
	}
	s := sideStats{Calls: a.calls, P50Micros: pct(0.50), P99Micros: pct(0.99), RoundTrips: -1}
	if a.wall > 0 {
		s.OpsPerSec = float64(a.calls) / a.wall.Seconds()
	}
	if network && a.calls > 0 {
		s.RoundTrips = float64(a.rts) / float64(a.calls)
	}
	return s
}

// measure runs one operation at concurrency c: a warm-up phase of each
// side, then cfg.rounds rounds in which the adapter and the raw baseline
// each run one phase, in alternating order, so that drift in the machine's
// load hits both.
func measure(ctx context.Context, b *backend, op operation, c int, cfg config) (result, error) {
	n := cfg.calls
	if c > 1 {
		n = cfg.callsPerConc * c
	}
	type side struct {
		name string
		f    opFunc
		acc  accum
	}
	sides := []*side{{name: "adapter", f: op.adapter}}
	if op.raw != nil {
		sides = append(sides, &side{name: "raw", f: op.raw})
	}
	run := func(s *side, round int, record bool) error {
		if op.prepare != nil {
			if err := op.prepare(ctx, s.name, round, n); err != nil {
				return fmt.Errorf("%s %s: preparing %s round %d: %w", b.name, op.name, s.name, round, err)
			}
		}
		wall, lat, rts, err := phase(ctx, s.f, n, c, b.rt, cfg.timeout)
		if err != nil {
			return fmt.Errorf("%s %s (%s, concurrency %d): %w", b.name, op.name, s.name, c, err)
		}
		if record {
			s.acc.add(wall, lat, rts)
		}
		return nil
	}
	for _, s := range sides { // warm-up: pools filled, statements prepared
		if err := run(s, -1, false); err != nil {
			return result{}, err
		}
	}
	for r := range cfg.rounds {
		order := sides
		if r%2 == 1 {
			order = slices.Clone(sides)
			slices.Reverse(order)
		}
		for _, s := range order {
			if err := run(s, r, true); err != nil {
				return result{}, err
			}
		}
	}
	network := b.rt != nil
	res := result{Backend: b.name, Operation: op.name, Concurrency: c, Adapter: sides[0].acc.stats(network)}
	if len(sides) == 2 {
		raw := sides[1].acc.stats(network)
		res.Raw = &raw
		if raw.OpsPerSec > 0 {
			res.Ratio = res.Adapter.OpsPerSec / raw.OpsPerSec
		}
	}
	return res, nil
}
