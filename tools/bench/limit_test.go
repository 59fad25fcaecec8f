package main

import (
	"context"
	"testing"
	"time"
)

// TestLimitAlike serves GET /auth/session through the handler and through
// the limit server on each read-path backend available (PostgreSQL and
// Redis skipped when their servers are missing, failed when
// AUTHPORT_REQUIRE names them) and checks that they answer the same
// session cookies, and a request without one, byte for byte alike
// (status, headers but Date, body), then runs one short limit row at
// concurrency 1 and 4 (each call checks its answer). Nothing is timed.
func TestLimitAlike(t *testing.T) {
	cfg := config{rounds: 2, calls: 6, callsPerConc: 2, concurrency: []int{1, 4}, users: 20, timeout: 20 * time.Second}
	for _, name := range readPathBackends {
		t.Run(name, func(t *testing.T) {
			reachable(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := openReadPath(ctx, name, cfg.users)
			if err != nil {
				t.Fatal(err)
			}
			defer p.close()
			l, err := openLimit(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			c := newClient()
			defer c.CloseIdleConnections()
			if err := limitCheck(ctx, c, l, []int{0, 7, cfg.users - 1}); err != nil {
				t.Fatal(err)
			}
			for _, conc := range cfg.concurrency {
				r, err := measureLimit(ctx, c, l, conc, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if r.Handler.Calls != cfg.rounds*6 && conc == 1 || r.Handler.Calls != r.Limit.Calls || r.Ratio <= 0 {
					t.Errorf("c%d: %+v", conc, r)
				}
			}
		})
	}
}
