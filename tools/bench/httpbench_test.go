package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/core/auth"
)

// TestShortHTTP runs the HTTP rows' short mode on every backend, against
// authport's handler and (except on bbolt) Auth.js's own Auth() on the
// same data: every call checks its answer (GET /auth/session: 200, JSON
// with the user's name and e-mail and an unexpired expiry; the extension:
// the session cookie re-sent with an expiry MaxAge from now; the e-mail
// sign-in: the CSRF token and cookie, 302/303 to verify-request, the link,
// then 302 to the callback URL with a session cookie), so a wrong answer
// fails it. Before the rows, one e-mail sign-in on each side is followed
// by GET /auth/session with the cookie it set. Node and the npm packages
// of authjs/ are required under AUTHPORT_REQUIRE=all (or naming npm).
func TestShortHTTP(t *testing.T) {
	cfg := config{rounds: 1, calls: 8, callsPerConc: 1, concurrency: []int{1, 32}, users: 40, timeout: 20 * time.Second}
	for _, name := range allHTTPBackends {
		t.Run(name, func(t *testing.T) {
			reachable(t, name)
			if name != "bbolt" {
				nodeproc.Check(t, authjsDir, "@auth/core/index.js", "@auth/pg-adapter/index.js", "@auth/unstorage-adapter/index.js")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			b, err := openHTTP(ctx, name, cfg.users)
			if err != nil {
				t.Fatal(err)
			}
			defer b.close()
			if (b.authjs == nil) != (name == "bbolt") {
				t.Fatalf("Auth.js side: %v (%s)", b.authjs != nil, b.authjsSkip)
			}
			c := newClient()
			defer c.CloseIdleConnections()
			sides := map[string]*httpSide{"authport": b.authport, "Auth.js": b.authjs}
			for side, s := range sides {
				if s == nil || s.db == nil {
					continue
				}
				cookie, err := emailSignIn(ctx, c, s.db.origin, 3)
				if err != nil {
					t.Fatalf("%s: e-mail sign-in: %v", side, err)
				}
				a, err := do(ctx, c, "GET", s.db.origin+"/auth/session", sessionCookie+"="+cookie, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := checkSession(a, 3, time.Now().Add(auth.DefaultMaxAge-time.Minute)); err != nil {
					t.Errorf("%s: the session the link made: %v", side, err)
				}
				// No cookie, or an unknown token: null, not an error.
				for _, ck := range []string{"", sessionCookie + "=no-such-session"} {
					a, err := do(ctx, c, "GET", s.db.origin+"/auth/session", ck, nil)
					if err != nil {
						t.Fatal(err)
					}
					if a.status != http.StatusOK || strings.TrimSpace(string(a.body)) != "null" && strings.TrimSpace(string(a.body)) != "{}" {
						t.Errorf("%s: GET /session with cookie %q: %d %q, want 200 null", side, ck, a.status, a.body)
					}
				}
			}
			rep := &report{Skipped: map[string]string{}}
			if err := measureHTTPBackend(ctx, b, c, cfg, rep); err != nil {
				t.Fatal(err)
			}
			var want []string
			switch name {
			case "jwt":
				want = []string{httpRows[2]}
			default:
				want = []string{httpRows[0], httpRows[1], httpRows[3]}
			}
			if len(rep.HTTP) != len(want)*len(cfg.concurrency) {
				t.Fatalf("%d HTTP results, want %d: %+v", len(rep.HTTP), len(want)*len(cfg.concurrency), rep.HTTP)
			}
			for i, r := range rep.HTTP {
				op, conc := want[i/len(cfg.concurrency)], cfg.concurrency[i%len(cfg.concurrency)]
				n := cfg.calls
				if conc > 1 {
					n = cfg.callsPerConc * conc
				}
				if r.Operation != op || r.Concurrency != conc || r.Authport.Calls != cfg.rounds*n || r.Authport.OpsPerSec <= 0 {
					t.Errorf("result %d: %+v, want %s c%d with %d calls", i, r, op, conc, cfg.rounds*n)
				}
				if (r.Authjs != nil) != (name != "bbolt") || r.Authjs != nil && (r.Authjs.Calls != cfg.rounds*n || r.Ratio <= 0) {
					t.Errorf("result %d (%s c%d): Auth.js %+v ratio %v", i, op, conc, r.Authjs, r.Ratio)
				}
			}
			if name != "jwt" && len(rep.Handler) != len(cfg.concurrency) {
				t.Errorf("%d in-process handler rows, want %d", len(rep.Handler), len(cfg.concurrency))
			}
			if name == "postgres" {
				// The burst's answers were checked in measureBurst; two
				// instances must have written the extension once.
				if len(rep.Burst) != 1 || rep.Burst[0].AuthportWrites != 1 || rep.Burst[0].AuthjsWrites < 1 {
					t.Errorf("burst rows %+v; want one, with authport writing once and Auth.js at least once", rep.Burst)
				}
			} else if len(rep.Burst) != 0 {
				t.Errorf("burst rows on %s: %+v; want none (PostgreSQL only)", name, rep.Burst)
			}
			var out bytes.Buffer
			printHTTPTable(&out, rep.HTTP)
			printHandlerTable(&out, rep.Handler)
			printBurst(&out, rep.Burst)
			if _, err := json.Marshal(rep); err != nil {
				t.Fatal(err)
			}
			for _, op := range want {
				if !strings.Contains(out.String(), "| "+name+" ") || !strings.Contains(out.String(), op) {
					t.Errorf("the table lacks %s %s:\n%s", name, op, out.String())
				}
			}
			t.Log("\n" + out.String())
		})
	}
}
