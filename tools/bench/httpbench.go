package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The HTTP rows: authport's handler, served by net/http on a loopback
// port, beside Auth.js's own Auth() (authjs/server.mjs) served by Node's
// http server, on the same database and the same seeded data, called by
// the same Go client. See README.md.

// allHTTPBackends in the order the HTTP table lists them; "jwt" is JWT
// sessions, which touch no database.
var allHTTPBackends = []string{"bbolt", "postgres", "redis", "jwt"}

// httpRows are the HTTP operations, in table order.
var httpRows = []string{"GET /session (database)", "GET /session (extend)", "GET /session (jwt)", "e-mail sign-in"}

// httpResult is one HTTP row: authport beside Auth.js.
type httpResult struct {
	Backend     string     `json:"backend"`
	Operation   string     `json:"operation"`
	Concurrency int        `json:"concurrency"`
	Authport    sideStats  `json:"authport"`
	Authjs      *sideStats `json:"authjs,omitempty"`
	// AllocsPerRequest are the Go process's allocations per authport
	// request (server and client) less the client's, measured as the
	// process's allocations per Auth.js request; -1 without Auth.js.
	AllocsPerRequest float64 `json:"allocs_per_request"`
	// Ratio is authport's throughput over Auth.js's.
	Ratio float64 `json:"ratio,omitempty"`
}

// httpOps returns the rows of backend b: for each, the call against a
// side's servers (nil when the side has no server for it).
func httpOps(b *httpBackend, c *http.Client) []operation {
	pick := func(i int) int { return (i * 7919) % b.users }
	// The e-mail row's sides sign different users in, so that one side's
	// tokens never meet the other's.
	other := func(k int) int { return (k + b.users/2) % b.users }
	get := func(srv func(*httpSide) *server, side *httpSide, extend bool) opFunc {
		if side == nil || srv(side) == nil {
			return nil
		}
		s := srv(side)
		return func(ctx context.Context, i int) error {
			k := pick(i)
			cookie := sessionCookie + "=" + sessionToken(k)
			if b.jwtCookies != nil {
				cookie = sessionCookie + "=" + b.jwtCookies[k]
			}
			start := time.Now()
			a, err := do(ctx, c, "GET", s.origin+"/auth/session", cookie, nil)
			if err != nil {
				return err
			}
			min := start.Add(time.Hour) // not expired (and a day old at most)
			if extend {
				min = start.Add(b.maxAge - time.Minute)
			}
			if err := checkSession(a, k, min); err != nil {
				return err
			}
			if extend {
				if sc := a.cookie(sessionCookie); sc == nil || sc.Value != sessionToken(k) || (sc.MaxAge <= 0 && sc.Expires.IsZero()) {
					return fmt.Errorf("GET /session (extend): session cookie %v, want %s re-sent with its new expiry", sc, sessionToken(k))
				}
			}
			return nil
		}
	}
	email := func(side *httpSide, who func(int) int) opFunc {
		if side == nil || side.db == nil {
			return nil
		}
		return func(ctx context.Context, i int) error {
			_, err := emailSignIn(ctx, c, side.db.origin, who(pick(i)))
			return err
		}
	}
	var authjs *httpSide
	if b.authjs != nil {
		authjs = b.authjs
	}
	db := func(s *httpSide) *server { return s.db }
	ext := func(s *httpSide) *server { return s.extend }
	jw := func(s *httpSide) *server { return s.jwt }
	ops := []operation{
		{name: httpRows[0], adapter: get(db, b.authport, false), raw: get(db, authjs, false)},
		{name: httpRows[1], adapter: get(ext, b.authport, true), raw: get(ext, authjs, true)},
		{name: httpRows[2], adapter: get(jw, b.authport, false), raw: get(jw, authjs, false)},
		{name: httpRows[3], adapter: email(b.authport, func(k int) int { return k }), raw: email(authjs, other)},
	}
	out := ops[:0]
	for _, op := range ops {
		if op.adapter != nil {
			out = append(out, op)
		}
	}
	return out
}

// mallocsPerCall runs n calls of f serially and returns the process's
// allocations per call.
func mallocsPerCall(ctx context.Context, f opFunc, n int) (float64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		if err := f(ctx, i); err != nil {
			return 0, err
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n), nil
}

// measureHTTP measures one HTTP row at concurrency c: the machinery of the
// adapter rows (warm-up, then rounds in which every worker alternates an
// authport call and an Auth.js call), then the Go side's allocations per
// request: the process's allocations over serial authport calls less those
// over the same calls to Auth.js, which are the client's alone.
func measureHTTP(ctx context.Context, b *httpBackend, op operation, c int, cfg config) (httpResult, error) {
	r, err := measure(ctx, &backend{name: b.name}, op, c, cfg)
	if err != nil {
		return httpResult{}, err
	}
	res := httpResult{Backend: b.name, Operation: op.name, Concurrency: c, Authport: r.Adapter, Authjs: r.Raw, Ratio: r.Ratio}
	if c == 1 {
		n := max(cfg.calls, 20)
		goAllocs, err := mallocsPerCall(ctx, op.adapter, n)
		if err != nil {
			return res, fmt.Errorf("%s %s: %w", b.name, op.name, err)
		}
		res.AllocsPerRequest = -1
		if op.raw != nil {
			client, err := mallocsPerCall(ctx, op.raw, n)
			if err != nil {
				return res, fmt.Errorf("%s %s (Auth.js): %w", b.name, op.name, err)
			}
			res.AllocsPerRequest = goAllocs - client
		}
	}
	return res, nil
}

// inprocResponse is the bare http.ResponseWriter the in-process row hands
// the handler.
type inprocResponse struct {
	h      http.Header
	status int
	body   []byte
}

func (w *inprocResponse) Header() http.Header { return w.h }
func (w *inprocResponse) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *inprocResponse) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body = append(w.body, b...)
	return len(b), nil
}

// reset makes w ready for the next request, keeping its header map and
// body buffer: a loop that reuses it counts the request's allocations
// alone (net/http's response has its own).
func (w *inprocResponse) reset() {
	clear(w.h)
	w.status, w.body = 0, w.body[:0]
}

// inprocOp is the handler's own cost: GET /auth/session through the
// handler in process (no socket) beside the adapter's getSessionAndUser
// for the same session, on the same store. The requests are built
// beforehand (ServeHTTP only reads them) and both sides check their
// answer alike, by the user's e-mail, so that the row weighs the
// handler, not the bench's request building and JSON decoding.
func inprocOp(b *httpBackend) operation {
	pick := func(i int) int { return (i * 7919) % b.users }
	reqs := make([]*http.Request, b.users)
	emails, tokens := make([]string, b.users), make([]string, b.users)
	quoted := make([][]byte, b.users) // "email":"…" in the JSON
	for k := range b.users {
		tokens[k], emails[k] = sessionToken(k), userID(k)+"@bench.example"
		quoted[k] = []byte(`"email":"` + emails[k] + `"`)
		reqs[k], _ = http.NewRequestWithContext(context.Background(), "GET", "http://127.0.0.1/auth/session", nil)
		reqs[k].Header.Set("Cookie", sessionCookie+"="+tokens[k])
	}
	return operation{
		name: "handler GET /session ÷ getSessionAndUser",
		adapter: func(ctx context.Context, i int) error {
			k := pick(i)
			w := &inprocResponse{h: http.Header{}, body: make([]byte, 0, 256)}
			// The request carries the call's context, as the adapter side's
			// call does and as a server's request does (net/http cancels it
			// when the client goes): with context.Background the handler's
			// reads skipped the driver's context watch that the adapter side
			// paid for, and on PostgreSQL the handler came out faster than
			// the adapter (1.09 at c1, 1.45 at c32).
			b.inproc.ServeHTTP(w, reqs[k].WithContext(ctx))
			if w.status != http.StatusOK || !bytes.Contains(w.body, quoted[k]) {
				return fmt.Errorf("GET /session for %s: %d %q", emails[k], w.status, w.body)
			}
			return nil
		},
		raw: func(ctx context.Context, i int) error {
			k := pick(i)
			su, err := b.getter.GetSessionAndUser(ctx, tokens[k])
			if err != nil {
				return err
			}
			if su == nil || su.User.Email != emails[k] {
				return fmt.Errorf("getSessionAndUser(%s) = %+v", tokens[k], su)
			}
			return nil
		},
	}
}

// handlerResult is the in-process row: the handler's GET /auth/session
// (adapter side) beside getSessionAndUser (raw side), with both's
// allocations per call.
type handlerResult struct {
	result
	// HandlerAllocs are ServeHTTP's allocations per GET /auth/session
	// (the request built beforehand), the adapter's included.
	HandlerAllocs float64 `json:"handler_allocs"`
	// AdapterAllocs are getSessionAndUser's allocations per call.
	AdapterAllocs float64 `json:"adapter_allocs"`
}

// sessionAllocs returns the allocations per call of h's GET
// /auth/session for user k's database session (the request and the
// ResponseWriter made beforehand), serially over n calls.
func sessionAllocs(ctx context.Context, h http.Handler, n int, k func(i int) int) (float64, error) {
	reqs := make([]*http.Request, n)
	ws := make([]*inprocResponse, n)
	for i := range n {
		r, err := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/auth/session", nil)
		if err != nil {
			return 0, err
		}
		r.Header.Set("Cookie", sessionCookie+"="+sessionToken(k(i)))
		reqs[i], ws[i] = r, &inprocResponse{h: http.Header{}, body: make([]byte, 0, 512)}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		h.ServeHTTP(ws[i], reqs[i])
	}
	runtime.ReadMemStats(&after)
	for i := range n {
		if err := checkSession(&answer{status: ws[i].status, header: ws[i].h, body: ws[i].body}, k(i), time.Now().Add(time.Hour)); err != nil {
			return 0, err
		}
	}
	return float64(after.Mallocs-before.Mallocs) / float64(n), nil
}

// runHTTP measures the HTTP rows of every named backend and prints their
// tables to out.
func runHTTP(ctx context.Context, cfg config, names []string, out io.Writer, rep *report) error {
	fmt.Fprintf(out, "\nHTTP: authport's handler (net/http) beside Auth.js's Auth() (@auth/core, Node's http server), %d users, one Go client, every worker alternating the two\n\n", cfg.users)
	c := newClient()
	defer c.CloseIdleConnections()
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		b, err := openHTTP(ctx, name, cfg.users)
		if err != nil {
			rep.Skipped["http "+name] = err.Error()
			fmt.Fprintf(out, "http %s: skipped: %v\n", name, err)
			continue
		}
		if b.authjsSkip != "" {
			rep.Extra = append(rep.Extra, "no Auth.js column for "+b.authjsSkip)
		}
		fmt.Fprintf(os.Stderr, "bench: http %s seeded (%d users), measuring…\n", name, cfg.users)
		err = measureHTTPBackend(ctx, b, c, cfg, rep)
		b.close()
		if err != nil {
			return err
		}
	}
	printHTTPTable(out, rep.HTTP)
	printBurst(out, rep.Burst)
	if len(rep.Handler) > 0 {
		fmt.Fprintln(out, "\nThe handler's own cost: GET /auth/session through the handler in process (ServeHTTP, no socket) beside the adapter's getSessionAndUser, alternated")
		fmt.Fprintln(out)
		printHandlerTable(out, rep.Handler)
	}
	return nil
}

func printHTTPTable(out io.Writer, rs []httpResult) {
	if len(rs) == 0 {
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "| backend\t request\t c\t authport req/s\t p50 µs\t p99 µs\t allocs/req\t Auth.js req/s\t p50 µs\t p99 µs\t authport/Auth.js\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t")
	for _, r := range rs {
		js := "–\t –\t –\t –"
		if r.Authjs != nil {
			js = fmt.Sprintf("%.0f\t %.0f\t %.0f\t %.2f", r.Authjs.OpsPerSec, r.Authjs.P50Micros, r.Authjs.P99Micros, r.Ratio)
		}
		allocs := "–"
		if r.Concurrency == 1 && r.AllocsPerRequest >= 0 {
			allocs = strconv.FormatFloat(r.AllocsPerRequest, 'f', 0, 64)
		}
		fmt.Fprintf(tw, "| %s\t %s\t %d\t %.0f\t %.0f\t %.0f\t %s\t %s\t\n", r.Backend, r.Operation, r.Concurrency,
			r.Authport.OpsPerSec, r.Authport.P50Micros, r.Authport.P99Micros, allocs, js)
	}
	_ = tw.Flush()
}

func printHandlerTable(out io.Writer, rs []handlerResult) {
	tw := newTable(out)
	fmt.Fprintln(tw, "| backend\t c\t handler req/s\t p50 µs\t p99 µs\t allocs/req\t getSessionAndUser ops/s\t p50 µs\t p99 µs\t allocs/call\t handler/adapter\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t")
	for _, r := range rs {
		ha, aa := "–", "–"
		if r.Concurrency == 1 {
			ha, aa = strconv.FormatFloat(r.HandlerAllocs, 'f', 0, 64), strconv.FormatFloat(r.AdapterAllocs, 'f', 0, 64)
		}
		fmt.Fprintf(tw, "| %s\t %d\t %.0f\t %.0f\t %.0f\t %s\t %.0f\t %.0f\t %.0f\t %s\t %.2f\t\n", r.Backend, r.Concurrency,
			r.Adapter.OpsPerSec, r.Adapter.P50Micros, r.Adapter.P99Micros, ha, r.Raw.OpsPerSec, r.Raw.P50Micros, r.Raw.P99Micros, aa, r.Ratio)
	}
	_ = tw.Flush()
}

// measureHTTPBackend measures b's HTTP rows and its in-process row into rep.
func measureHTTPBackend(ctx context.Context, b *httpBackend, c *http.Client, cfg config, rep *report) error {
	name := b.name
	for _, op := range httpOps(b, c) {
		for _, conc := range cfg.concurrency {
			r, err := measureHTTP(ctx, b, op, conc, cfg)
			if err != nil {
				return err
			}
			rep.HTTP = append(rep.HTTP, r)
		}
	}
	if b.sqlDB != nil {
		r, err := measureBurst(ctx, b, c)
		if err != nil {
			return err
		}
		rep.Burst = append(rep.Burst, r)
	}
	if b.inproc == nil {
		return nil
	}
	for _, conc := range cfg.concurrency {
		r, err := measure(ctx, &backend{name: name}, inprocOp(b), conc, cfg)
		if err != nil {
			return err
		}
		hr := handlerResult{result: r}
		if conc == 1 {
			op := inprocOp(b)
			pick := func(i int) int { return (i * 7919) % b.users }
			if hr.HandlerAllocs, err = sessionAllocs(ctx, b.inproc, max(cfg.calls, 20), pick); err == nil {
				hr.AdapterAllocs, err = mallocsPerCall(ctx, op.raw, max(cfg.calls, 20))
			}
			if err != nil {
				return fmt.Errorf("%s: counting allocations: %w", name, err)
			}
		}
		rep.Handler = append(rep.Handler, hr)
	}
	return nil
}
