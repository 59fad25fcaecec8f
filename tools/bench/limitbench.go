package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"
)

// The limit rows: GET /auth/session with a valid session cookie through
// authport's handler beside the limit server (limit.go), each on a
// loopback port of this process, on the same data with the same pool
// size, called by the same client. The two first answer the same cookies
// byte for byte alike (limitCheck); then they run in alternating rounds
// (one side's round, then the other's, the order swapped every round),
// each round timed by the wall clock and by the process's CPU time
// (getrusage), which holds the client's work too (the same on both
// sides), not the database server's.

// limitPoolSize is both sides' connection pool: the handler's store pool
// (sqlStore.openDB, newRedisStore) and the limit server's.
const limitPoolSize = 32

// limitSide is one side's totals over the rounds.
type limitSide struct {
	Calls int `json:"calls"`
	// ReqPerSec is the side's calls over its rounds' wall time.
	ReqPerSec float64 `json:"req_per_sec"`
	P50Micros float64 `json:"p50_us"`
	P99Micros float64 `json:"p99_us"`
	// CPUMicrosPerReq is the process's CPU time (user and system) over
	// the side's rounds, per request: server and client.
	CPUMicrosPerReq float64 `json:"cpu_us_per_req"`

	wall, cpu time.Duration
	lat       []time.Duration
}

// limitResult is one limit row: the handler beside the limit server.
type limitResult struct {
	Backend     string    `json:"backend"`
	Concurrency int       `json:"concurrency"`
	Handler     limitSide `json:"handler"`
	Limit       limitSide `json:"limit"`
	// Ratio is the handler's throughput over the limit server's;
	// CPURatio its CPU per request over the limit server's.
	Ratio    float64 `json:"ratio"`
	CPURatio float64 `json:"cpu_ratio"`
}

// limitPair is a read path served by the handler and by the limit server.
type limitPair struct {
	p               *readPath
	handler, limit  *server
	closeLimitStore func()
}

func (l *limitPair) close() {
	for _, s := range []*server{l.handler, l.limit} {
		if s != nil {
			s.close()
		}
	}
	if l.closeLimitStore != nil {
		l.closeLimitStore()
	}
}

// serveLoopback serves the handler h makes for its origin on a loopback
// port.
func serveLoopback(h func(origin string) (http.Handler, error)) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	handler, err := h("http://" + ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &server{origin: "http://" + ln.Addr().String(), close: func() { _ = srv.Close() }}, nil
}

// newLimitServer returns the limit server on p's store (its own pool of
// limitPoolSize connections on PostgreSQL and Redis).
func newLimitServer(ctx context.Context, p *readPath) (*limitServer, error) {
	ls := &limitServer{cookie: sessionCookie}
	var err error
	switch p.name {
	case "postgres":
		ls.read, ls.close, err = limitPostgres(ctx, p.pgDSN, limitPoolSize)
	case "redis":
		opts, perr := redis.ParseURL(os.Getenv("AUTHPORT_REDIS_URL"))
		if perr != nil {
			return nil, perr
		}
		ls.read, ls.close, err = limitRedis(ctx, opts, p.redis.prefix, limitPoolSize)
	case "jwt":
		ls.jwt = true
		ls.read, err = limitJWT(benchSecret, sessionCookie)
	default:
		err = fmt.Errorf("no limit server for %q", p.name)
	}
	if err != nil {
		return nil, err
	}
	return ls, nil
}

// openLimit serves p's handler (under /auth/) and a limit server on p's
// store on loopback ports.
func openLimit(ctx context.Context, p *readPath) (*limitPair, error) {
	ls, err := newLimitServer(ctx, p)
	if err != nil {
		return nil, err
	}
	l := &limitPair{p: p, closeLimitStore: ls.close}
	l.handler, err = serveLoopback(func(origin string) (http.Handler, error) {
		// The handler is the server's handler, as the limit server is:
		// it routes by its BaseURL's path itself, and a ServeMux in
		// front (about 2,000 instructions a request, -instructions)
		// is the application's, whichever server it routes to.
		_, h, err := p.newHandler(origin)
		return h, err
	})
	if err == nil {
		l.limit, err = serveLoopback(func(string) (http.Handler, error) { return ls, nil })
	}
	if err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// limitHeaders are the response headers limitCheck compares (all but
// Date, which the clock sets).
func limitHeaders(h http.Header) string {
	var b strings.Builder
	keys := make([]string, 0, len(h))
	for k := range h {
		if k != "Date" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %q\n", k, h[k])
	}
	return b.String()
}

// limitCheck sends the same requests to the handler and the limit server
// (the session cookies of users, and none) and fails unless the answers
// are alike byte for byte: status, headers (Date aside) and body.
func limitCheck(ctx context.Context, c *http.Client, l *limitPair, users []int) error {
	cookies := []string{""}
	for _, k := range users {
		cookies = append(cookies, sessionCookie+"="+l.p.cookies[k])
	}
	for _, cookie := range cookies {
		var answers [2]*answer
		for i, s := range []*server{l.handler, l.limit} {
			a, err := do(ctx, c, "GET", s.origin+"/auth/session", cookie, nil)
			if err != nil {
				return err
			}
			answers[i] = a
		}
		h, m := answers[0], answers[1]
		if h.status != m.status || !bytes.Equal(h.body, m.body) || limitHeaders(h.header) != limitHeaders(m.header) {
			return fmt.Errorf("%s: GET /auth/session with cookie %.40q: the handler answered %d\n%s%s\nthe limit server %d\n%s%s",
				l.p.name, cookie, h.status, limitHeaders(h.header), h.body, m.status, limitHeaders(m.header), m.body)
		}
		if os.Getenv("AUTHPORT_BENCH_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "limit %s: %d\n%s%s\n", l.p.name, h.status, limitHeaders(h.header), h.body)
		}
		if cookie != "" && (h.status != http.StatusOK || !bytes.Contains(h.body, []byte(`"email":"`))) {
			return fmt.Errorf("%s: GET /auth/session with a valid cookie: %d %s", l.p.name, h.status, h.body)
		}
	}
	return nil
}

// limitGet returns the call the rounds make against origin: GET
// /auth/session with user pick(i)'s cookie, checking the status and the
// user's e-mail in the body, alike on both sides.
func limitGet(c *http.Client, origin string, p *readPath) opFunc {
	u := origin + "/auth/session"
	pick := func(i int) int { return (i * 7919) % p.users }
	return func(ctx context.Context, i int) error {
		k := pick(i)
		req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
		if err != nil {
			return err
		}
		req.Header["Cookie"] = []string{sessionCookie + "=" + p.cookies[k]}
		res, err := c.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"email":"`+userID(k)+`@bench.example"`)) {
			return fmt.Errorf("GET %s for user %d: %d %q", u, k, res.StatusCode, body)
		}
		return nil
	}
}

// processCPU returns the CPU time the process has used.
func processCPU() time.Duration {
	var ts syscall.Timespec
	const clockProcessCPUTimeID = 2
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// measureLimit runs the limit row of l at concurrency c: a warm-up of
// each side, then cfg.rounds rounds of n calls of each side, one side
// after the other, the order swapped every round.
func measureLimit(ctx context.Context, cl *http.Client, l *limitPair, c int, cfg config) (limitResult, error) {
	n := cfg.calls
	if c > 1 {
		n = cfg.callsPerConc * c
	}
	sides := []*limitSide{{}, {}}
	calls := []opFunc{limitGet(cl, l.handler.origin, l.p), limitGet(cl, l.limit.origin, l.p)}
	names := []string{"handler", "limit"}
	var slowest time.Duration
	for k, f := range calls {
		took, _, _, err := phase(ctx, f, n, c, nil, cfg.timeout)
		if err != nil {
			return limitResult{}, fmt.Errorf("limit %s (%s, concurrency %d): %w", l.p.name, names[k], c, err)
		}
		slowest = max(slowest, took)
	}
	n = roundCalls(n, slowest, true, cfg.minRound)
	for r := range cfg.rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, k := range order {
			cpu := processCPU()
			took, lat, _, err := phase(ctx, calls[k], n, c, nil, cfg.timeout)
			if err != nil {
				return limitResult{}, fmt.Errorf("limit %s (%s, concurrency %d): %w", l.p.name, names[k], c, err)
			}
			s := sides[k]
			s.cpu += processCPU() - cpu
			s.wall += took
			s.lat = append(s.lat, lat...)
			s.Calls += n
		}
	}
	for _, s := range sides {
		st := (&accum{lat: s.lat, wall: s.wall}).stats()
		s.ReqPerSec, s.P50Micros, s.P99Micros = st.OpsPerSec, st.P50Micros, st.P99Micros
		s.CPUMicrosPerReq = float64(s.cpu.Microseconds()) / float64(s.Calls)
	}
	res := limitResult{Backend: l.p.name, Concurrency: c, Handler: *sides[0], Limit: *sides[1]}
	if res.Limit.ReqPerSec > 0 {
		res.Ratio = res.Handler.ReqPerSec / res.Limit.ReqPerSec
	}
	if res.Limit.CPUMicrosPerReq > 0 {
		res.CPURatio = res.Handler.CPUMicrosPerReq / res.Limit.CPUMicrosPerReq
	}
	return res, nil
}

// runLimit measures the limit rows of every named backend (postgres,
// redis, jwt) and prints their table to out.
func runLimit(ctx context.Context, cfg config, names []string, out io.Writer, rep *report) error {
	c := newClient()
	defer c.CloseIdleConnections()
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(readPathBackends, name) {
			rep.Skipped["limit "+name] = "no limit server (postgres, redis and jwt have one)"
			continue
		}
		p, err := openReadPath(ctx, name, cfg.users)
		if err != nil {
			rep.Skipped["limit "+name] = err.Error()
			fmt.Fprintf(out, "limit %s: skipped: %v\n", name, err)
			continue
		}
		err = func() error {
			defer p.close()
			l, err := openLimit(ctx, p)
			if err != nil {
				return err
			}
			defer l.close()
			if err := limitCheck(ctx, c, l, []int{0, p.users / 2, p.users - 1}); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "bench: limit %s seeded (%d users), answers alike, measuring…\n", name, cfg.users)
			for _, conc := range cfg.concurrency {
				r, err := measureLimit(ctx, c, l, conc, cfg)
				if err != nil {
					return err
				}
				rep.Limit = append(rep.Limit, r)
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	printLimitTable(out, rep.Limit)
	return nil
}

func printLimitTable(out io.Writer, rs []limitResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(out, "\nThe limit: GET /auth/session through the handler beside the hand-written limit server (same store, same pool size, byte-for-byte alike answers), alternating rounds; CPU is the process's (servers and client) per request")
	fmt.Fprintln(out)
	tw := newTable(out)
	fmt.Fprintln(tw, "| backend\t c\t handler req/s\t p50 µs\t p99 µs\t CPU µs/req\t limit req/s\t p50 µs\t p99 µs\t CPU µs/req\t handler/limit\t CPU handler/limit\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t")
	for _, r := range rs {
		h, l := r.Handler, r.Limit
		fmt.Fprintf(tw, "| %s\t %d\t %.0f\t %.0f\t %.0f\t %.1f\t %.0f\t %.0f\t %.0f\t %.1f\t %.2f\t %.2f\t\n", r.Backend, r.Concurrency,
			h.ReqPerSec, h.P50Micros, h.P99Micros, h.CPUMicrosPerReq, l.ReqPerSec, l.P50Micros, l.P99Micros, l.CPUMicrosPerReq, r.Ratio, r.CPURatio)
	}
	_ = tw.Flush()
}
