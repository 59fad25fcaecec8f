package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// TestBoltReadRatios (run with AUTHPORT_BENCH_BOLT_RATIOS=1) measures the
// bbolt adapter's two reads against the bench's raw read transaction, and
// GET /auth/session through the handler against getSessionAndUser, in
// alternating blocks of calls (1,000 adapter calls, 1,000 raw calls, …) on
// 1 and 32 goroutines, over the bench's 10,000 users, and logs the median
// of the blocks' ratios (raw time ÷ adapter time): on a loaded machine a
// median of paired blocks is steadier than the bench's summed latencies,
// which a few descheduled calls dominate. It also logs the median ratio of
// the process's CPU time per block (CLOCK_PROCESS_CPUTIME_ID: the time the
// process ran, the garbage collector's included, not the time it waited
// for a CPU), which the machine's other load does not enter.
func TestBoltReadRatios(t *testing.T) {
	if os.Getenv("AUTHPORT_BENCH_BOLT_RATIOS") == "" {
		t.Skip("set AUTHPORT_BENCH_BOLT_RATIOS=1 to run")
	}
	s, err := openBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ctx := context.Background()
	const users = 10_000
	if err := seed(ctx, s.adapter, users); err != nil {
		t.Fatal(err)
	}
	raw := s.rawBolt()
	pick := func(i int) int { return (i * 7919) % users }
	ops := []struct {
		name         string
		adapter, raw func(i int) error
	}{
		{"getSessionAndUser", func(i int) error {
			_, err := s.adapter.GetSessionAndUser(ctx, sessionToken(pick(i)))
			return err
		}, func(i int) error { k := pick(i); return raw.getSessionAndUser(ctx, sessionToken(k), userID(k)) }},
		{"getUserByAccount", func(i int) error {
			_, err := s.adapter.GetUserByAccount(ctx, core.AccountKey{Provider: provider, ProviderAccountID: accountID(pick(i))})
			return err
		}, func(i int) error { k := pick(i); return raw.getUserByAccount(ctx, accountID(k), userID(k)) }},
	}
	// The handler-cost row of the HTTP bench (inprocOp: GET /auth/session
	// through the handler in process beside getSessionAndUser), its
	// UpdateAge as long as MaxAge so that no read is due an extension.
	maxAge := auth.DefaultMaxAge
	h, err := goHandler("http://127.0.0.1", goServerConfig{adapter: s.adapter, strategy: auth.StrategyDatabase, updateAge: &maxAge}, &linkStore{links: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	inproc := inprocOp(&httpBackend{users: users, inproc: h, getter: s.adapter})
	ops = append(ops, struct {
		name         string
		adapter, raw func(i int) error
	}{"handler GET /session ÷ getSessionAndUser", func(i int) error { return inproc.adapter(ctx, i) }, func(i int) error { return inproc.raw(ctx, i) }})
	for _, op := range ops {
		for _, c := range []int{1, 32} {
			wall, cpu := pairedRatios(t, op.adapter, op.raw, c, 200, 5000)
			t.Logf("%s c%d: adapter/raw, 200 paired blocks of 5,000 calls: wall %s, CPU %s", op.name, c, wall, cpu)
		}
	}
}

// pairedRatios runs blocks alternating blocks of n calls of a and of b on
// c goroutines (which goes first alternates too) and returns, by wall time
// and by the process's CPU time, the ratio of b's total time to a's (a's
// throughput relative to b's over all blocks: a garbage collection, which
// lands in one block, counts against the side whose allocations caused it
// in proportion) and the median and quartiles of the blocks' ratios.
func pairedRatios(t *testing.T, a, b func(i int) error, c, blocks, n int) (wall, cpu string) {
	type cost struct{ wall, cpu time.Duration }
	block := func(f func(int) error) cost {
		var wg sync.WaitGroup
		cpu0 := processCPU()
		start := time.Now()
		for w := range c {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += c {
					if err := f(i); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return cost{time.Since(start), processCPU() - cpu0}
	}
	var walls, cpus []float64
	var sumA, sumB cost
	for k := range blocks {
		var ta, tb cost
		if k%2 == 0 {
			ta, tb = block(a), block(b)
		} else {
			tb, ta = block(b), block(a)
		}
		sumA.wall, sumA.cpu, sumB.wall, sumB.cpu = sumA.wall+ta.wall, sumA.cpu+ta.cpu, sumB.wall+tb.wall, sumB.cpu+tb.cpu
		walls = append(walls, float64(tb.wall)/float64(ta.wall))
		cpus = append(cpus, float64(tb.cpu)/float64(ta.cpu))
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	q := func(total float64, r []float64) string {
		return fmt.Sprintf("%.3f of totals (block median %.3f, quartiles %.3f–%.3f)", total, r[len(r)/2], r[len(r)/4], r[3*len(r)/4])
	}
	return q(float64(sumB.wall)/float64(sumA.wall), walls), q(float64(sumB.cpu)/float64(sumA.cpu), cpus)
}
