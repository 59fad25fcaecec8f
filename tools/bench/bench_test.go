package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// operationNames are the eight rows every backend must have.
var operationNames = []string{"getSessionAndUser", "getUserByAccount", "updateSession",
	"createVerificationToken+useVerificationToken", "createSession", "deleteUser",
	"listSessionsByUserId", "refresh rotation"}

// reachable returns the environment the bench needs for backend, skipping
// (or, when AUTHPORT_REQUIRE names it, failing) when its service is not
// there.
func reachable(t *testing.T, backend string) {
	t.Helper()
	switch backend {
	case "postgres":
		t.Setenv("AUTHPORT_POSTGRES_URL", provision.Postgres(t))
	case "mysql":
		t.Setenv("AUTHPORT_MYSQL_URL", provision.MySQL(t))
	case "redis":
		t.Setenv("AUTHPORT_REDIS_URL", provision.Redis(t))
	case "redis-cluster":
		t.Setenv("AUTHPORT_REDIS_CLUSTER_URL", strings.Join(provision.RedisCluster(t), ","))
	case "mongodb":
		t.Setenv("AUTHPORT_MONGODB_URL", provision.MongoDB(t))
	}
}

// TestShort runs the bench's short mode on every backend and checks what
// it printed and wrote: every operation ran at both concurrencies the
// number of calls asked for (each call checks its own result, so a wrong
// answer fails the run), the raw baselines ran beside the adapter, the
// round trips were counted on the network stores, the JSON parses back
// and the table has a row per result.
func TestShort(t *testing.T) {
	cfg := shortConfig()
	cfg.rounds, cfg.calls, cfg.callsPerConc, cfg.users = 2, 10, 1, 50
	all, err := allBackends()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range all.Names() {
		t.Run(name, func(t *testing.T) {
			reachable(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var out bytes.Buffer
			rep, err := run(ctx, cfg, []string{name}, &out)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			if reason, ok := rep.Skipped[name]; ok {
				t.Fatalf("%s was skipped although its service is reachable: %s", name, reason)
			}
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var back report
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("the JSON does not parse back: %v", err)
			}
			levels := cfg.concurrency
			if name == "mongodb" {
				levels = []int{1}
			}
			if len(back.Results) != len(operationNames)*len(levels) {
				t.Fatalf("%d results, want %d:\n%s", len(back.Results), len(operationNames)*len(levels), out.String())
			}
			network := name != "memory" && name != "bbolt" && name != "sqlite"
			// Both reads are one statement or one script: one round trip
			// each; on a cluster the pointer key is read first: two.
			reads := 1.0
			if name == "redis-cluster" {
				reads = 2
			}
			for i, r := range back.Results {
				op, c := operationNames[i/len(levels)], levels[i%len(levels)]
				if r.Backend != name || r.Operation != op || r.Concurrency != c {
					t.Errorf("result %d is %s/%s/c%d, want %s/%s/c%d", i, r.Backend, r.Operation, r.Concurrency, name, op, c)
				}
				n := cfg.calls
				if c > 1 {
					n = cfg.callsPerConc * c
				}
				if r.Adapter.Calls != cfg.rounds*n || r.Adapter.OpsPerSec <= 0 || r.Adapter.P99Micros < r.Adapter.P50Micros {
					t.Errorf("%s %s c%d: adapter %+v, want %d calls, a rate, p99 ≥ p50", name, op, c, r.Adapter, cfg.rounds*n)
				}
				wantRaw := name != "memory" && name != "mongodb" && (name != "bbolt" || op == "getSessionAndUser" || op == "getUserByAccount")
				if (r.Raw != nil) != wantRaw {
					t.Errorf("%s %s c%d: raw baseline %+v, want one: %v", name, op, c, r.Raw, wantRaw)
				}
				if r.Raw != nil && (r.Raw.Calls != cfg.rounds*n || r.Ratio <= 0) {
					t.Errorf("%s %s c%d: raw %+v ratio %v", name, op, c, r.Raw, r.Ratio)
				}
				if network != (r.Adapter.RoundTrips >= 0) {
					t.Errorf("%s %s c%d: round trips %v (network store: %v)", name, op, c, r.Adapter.RoundTrips, network)
				}
				// (A little more only if a connection was opened during
				// the phase.)
				if network && (op == "getSessionAndUser" || op == "getUserByAccount") && r.Raw != nil && (r.Adapter.RoundTrips < reads || r.Adapter.RoundTrips > reads+0.5 || r.Raw.RoundTrips < reads || r.Raw.RoundTrips > reads+0.5) {
					t.Errorf("%s %s c%d: %v round trips per call (raw %v), want %v", name, op, c, r.Adapter.RoundTrips, r.Raw.RoundTrips, reads)
				}
				// The listing is one statement or one script in the
				// user's slot, on a cluster too; a refresh rotation is
				// at most two round trips (the read and the
				// compare-and-set) where it can be: PostgreSQL and a
				// single Redis.
				if want, ok := inventoryRoundTrips(name, op); ok && (r.Adapter.RoundTrips < 1 || r.Adapter.RoundTrips > want+0.5 || r.Raw != nil && (r.Raw.RoundTrips < 1 || r.Raw.RoundTrips > want+0.5)) {
					t.Errorf("%s %s c%d: %v round trips per call (raw %v), want at most %v", name, op, c, r.Adapter.RoundTrips, rawRoundTrips(r), want)
				}
			}
			table := out.String()
			for _, op := range operationNames {
				for _, c := range levels {
					row := fmt.Sprintf("| %s ", name)
					found := false
					for _, l := range strings.Split(table, "\n") {
						f := strings.Split(l, "|")
						if strings.HasPrefix(l, row) && len(f) > 3 && strings.TrimSpace(f[2]) == op && strings.TrimSpace(f[3]) == fmt.Sprint(c) {
							found = true
						}
					}
					if !found {
						t.Errorf("the table has no row %s %s c%d:\n%s", name, op, c, table)
					}
				}
			}
			if t.Failed() || testing.Verbose() {
				t.Log("\n" + table)
			}
		})
	}
}

// inventoryRoundTrips is the most round trips per call of the row op on
// backend that TestShort accepts, and whether it checks them: one for a
// listing on every server backend, two for a refresh rotation on
// PostgreSQL and a single Redis.
func inventoryRoundTrips(backend, op string) (float64, bool) {
	switch {
	case op == "listSessionsByUserId" && backend != "memory" && backend != "bbolt" && backend != "sqlite":
		return 1, true
	case op == "refresh rotation" && (backend == "postgres" || backend == "redis"):
		return 2, true
	}
	return 0, false
}

// rawRoundTrips is the raw side's round trips per call of r, or -1.
func rawRoundTrips(r result) float64 {
	if r.Raw == nil {
		return -1
	}
	return r.Raw.RoundTrips
}

// TestUnknownBackend: a name the bench does not know is reported as
// skipped with the list of the known ones, not run.
func TestUnknownBackend(t *testing.T) {
	rep, err := run(context.Background(), shortConfig(), []string{"oracle"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if reason := rep.Skipped["oracle"]; !strings.Contains(reason, "unknown backend") || !strings.Contains(reason, "postgres") {
		t.Errorf("skipped = %q", reason)
	}
	if len(rep.Results) != 0 {
		t.Errorf("results for an unknown backend: %+v", rep.Results)
	}
}

// TestRoundCalls: an in-process store's fast operation gets rounds of
// about minRound, bounded; a network store, an operation that prepares
// records, a slow operation and a run without minRound keep their count.
func TestRoundCalls(t *testing.T) {
	const round = 250 * time.Millisecond
	for _, tc := range []struct {
		name      string
		n         int
		warmup    time.Duration
		inProcess bool
		minRound  time.Duration
		want      int
	}{
		{"in-process, fast", 200, 500 * time.Microsecond, true, round, 100_000},
		{"in-process, bounded", 200, time.Microsecond, true, round, maxRoundCalls},
		{"in-process, no warm-up time", 200, 0, true, round, maxRoundCalls},
		{"in-process, slow enough", 200, time.Second, true, round, 200},
		{"network store", 200, 500 * time.Microsecond, false, round, 200},
		{"no minRound (the short run)", 200, 500 * time.Microsecond, true, 0, 200},
	} {
		if got := roundCalls(tc.n, tc.warmup, tc.inProcess, tc.minRound); got != tc.want {
			t.Errorf("%s: roundCalls(%d, %v, %v, %v) = %d, want %d", tc.name, tc.n, tc.warmup, tc.inProcess, tc.minRound, got, tc.want)
		}
	}
}

// memorySession returns a memory adapter holding one user (every field
// set) and its session.
func memorySession(tb testing.TB) *memory.Adapter {
	tb.Helper()
	a := memory.New()
	ctx := context.Background()
	if err := createChain(ctx, a, "u1", "a1", "s1", time.Now().Add(time.Hour)); err != nil {
		tb.Fatal(err)
	}
	return a
}

// TestMemoryGetSessionAndUserAllocs holds the memory adapter's hot path to
// its goal of at most two allocations (allocations are deterministic; its
// time goal, under 1 µs, is BenchmarkMemoryGetSessionAndUser's).
func TestMemoryGetSessionAndUserAllocs(t *testing.T) {
	a := memorySession(t)
	ctx := context.Background()
	var su *core.SessionAndUser
	allocs := testing.AllocsPerRun(1000, func() { su, _ = a.GetSessionAndUser(ctx, "s1") })
	if su == nil || su.User.ID != "u1" || su.User.Name == nil || su.User.Image == nil || su.User.EmailVerified == nil {
		t.Fatalf("getSessionAndUser = %+v", su)
	}
	if allocs > 2 {
		t.Errorf("getSessionAndUser makes %v allocations, want at most 2", allocs)
	}
}

// BenchmarkMemoryGetSessionAndUser: the goal is under 1 µs per call.
func BenchmarkMemoryGetSessionAndUser(b *testing.B) {
	a := memorySession(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if su, err := a.GetSessionAndUser(ctx, "s1"); err != nil || su == nil {
			b.Fatal(su, err)
		}
	}
}

// BenchmarkBoltGetSessionAndUser compares the bbolt adapter's
// getSessionAndUser with the raw read transaction of the bench (the goal:
// the adapter at ≥ 0.95 of the raw transaction's speed).
func BenchmarkBoltGetSessionAndUser(b *testing.B) {
	benchBoltPair(b, func(ctx context.Context, s *boltStore) error {
		if su, err := s.adapter.GetSessionAndUser(ctx, "s7"); err != nil || su == nil {
			return fmt.Errorf("getSessionAndUser = %+v, %v", su, err)
		}
		return nil
	}, func(ctx context.Context, raw *rawOps) error { return raw.getSessionAndUser(ctx, "s7", "u7") })
}

// benchBoltPair runs adapter and raw as the sub-benchmarks "adapter" and
// "raw" on a bbolt store seeded with 1000 users.
func benchBoltPair(b *testing.B, adapter func(context.Context, *boltStore) error, raw func(context.Context, *rawOps) error) {
	s := openSeeded(b, openBolt, func(s *boltStore) fullAdapter { return s.adapter })
	ctx := context.Background()
	r := s.rawBolt()
	benchLoop(b, "adapter", func() error { return adapter(ctx, s) })
	benchLoop(b, "raw", func() error { return raw(ctx, r) })
}

// openSeeded opens a store in a temporary directory of b's with open,
// closed when b ends, and seeds its adapter (adapterOf) with 1000 users.
func openSeeded[S interface{ close() }](b *testing.B, open func(dir string) (S, error), adapterOf func(S) fullAdapter) S {
	s, err := open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.close)
	if err := seed(context.Background(), adapterOf(s), 1000); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchLoop runs f as the sub-benchmark name, serially, reporting
// allocations.
func benchLoop(b *testing.B, name string, f func() error) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSQLiteGetUserByAccount compares the SQL adapter's
// getUserByAccount on SQLite with the bench's raw statement (the same
// JOIN, prepared, through the same pool), serially and from 32 goroutines.
func BenchmarkSQLiteGetUserByAccount(b *testing.B) {
	s := openSeeded(b, func(dir string) (*sqlStore, error) { return openSQLite(dir, nil) },
		func(s *sqlStore) fullAdapter { return s.adapter })
	ctx := context.Background()
	raw, err := s.rawSQL(ctx)
	if err != nil {
		b.Fatal(err)
	}
	key := core.AccountKey{Provider: provider, ProviderAccountID: accountID(7)}
	sides := map[string]func() error{
		"adapter": func() error {
			u, err := s.adapter.GetUserByAccount(ctx, key)
			if err == nil && (u == nil || u.ID != userID(7)) {
				err = fmt.Errorf("getUserByAccount = %+v", u)
			}
			return err
		},
		"raw": func() error { return raw.getUserByAccount(ctx, accountID(7), userID(7)) },
	}
	for _, name := range []string{"adapter", "raw"} {
		f := sides[name]
		benchLoop(b, name, f)
		b.Run(name+"/c32", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16) // 32 goroutines on 2 CPUs
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := f(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkBoltGetUserByAccount compares the bbolt adapter's
// getUserByAccount with the bench's raw read transaction (the goal: the
// adapter at ≥ 0.95 of the raw transaction's speed).
func BenchmarkBoltGetUserByAccount(b *testing.B) {
	key := core.AccountKey{Provider: provider, ProviderAccountID: accountID(7)}
	benchBoltPair(b, func(ctx context.Context, s *boltStore) error {
		if u, err := s.adapter.GetUserByAccount(ctx, key); err != nil || u == nil {
			return fmt.Errorf("getUserByAccount = %+v, %v", u, err)
		}
		return nil
	}, func(ctx context.Context, raw *rawOps) error {
		return raw.getUserByAccount(ctx, accountID(7), userID(7))
	})
}
