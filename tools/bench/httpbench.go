package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	coreprovider "github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// The HTTP rows: authport's handler, served by net/http on a loopback
// port, beside Auth.js's own Auth() (authjs/server.mjs) served by Node's
// http server, on the same database and the same seeded data, called by
// the same Go client. See README.md.

// benchSecret is the AUTH_SECRET both servers share.
const benchSecret = "authport-bench-secret-0123456789abcdef"

// sessionCookie is the session cookie's name on http (both sides).
const sessionCookie = "authjs.session-token"

// allHTTPBackends in the order the HTTP table lists them; "jwt" is JWT
// sessions, which touch no database.
var allHTTPBackends = []string{"bbolt", "postgres", "redis", "jwt"}

// httpRows are the HTTP operations, in table order.
var httpRows = []string{"GET /session (database)", "GET /session (extend)", "GET /session (jwt)", "e-mail sign-in"}

// server is one HTTP server the client calls: origin is
// "http://127.0.0.1:<port>"; its routes are under /auth, and
// /bench/link?email= answers the last sign-in link sent to an address.
type server struct {
	origin string
	close  func()
}

// linkStore keeps the last sign-in link per address (the bench's e-mail
// "delivery").
type linkStore struct {
	mu    sync.Mutex
	links map[string]string
}

func (l *linkStore) send(_ context.Context, req coreprovider.VerificationRequest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.links[req.Identifier] = req.URL
	return nil
}

func (l *linkStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	link, ok := l.links[r.URL.Query().Get("email")]
	l.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = io.WriteString(w, link)
}

// goServerConfig is what an authport server differs in.
type goServerConfig struct {
	adapter   any
	strategy  auth.Strategy
	updateAge *time.Duration
	newUserID func() (string, error)
}

// goHandler builds authport's handler for origin.
func goHandler(origin string, c goServerConfig, links *linkStore) (*handler.Handler, error) {
	var providers []coreprovider.Provider
	if c.adapter != nil {
		providers = append(providers, coreprovider.Email("bench@bench.example", links.send))
	} else {
		providers = append(providers, &coreprovider.CredentialsConfig{ID: "credentials", Name: "Credentials",
			Authorize: func(context.Context, coreprovider.AuthorizeRequest) (*coreprovider.User, error) { return nil, nil }})
	}
	a, err := auth.New(auth.Config{Adapter: c.adapter, Providers: providers, Secrets: []string{benchSecret},
		BaseURL: origin + "/auth", GenerateUserID: c.newUserID,
		Session: auth.SessionOptions{Strategy: c.strategy, UpdateAge: c.updateAge}})
	if err != nil {
		return nil, err
	}
	// Rate limits off: the bench signs one address in many times a second,
	// and Auth.js, beside it, has none.
	return handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
}

// startGo serves authport's handler on a loopback port.
func startGo(c goServerConfig) (*server, *handler.Handler, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	origin := "http://" + ln.Addr().String()
	links := &linkStore{links: map[string]string{}}
	h, err := goHandler(origin, c, links)
	if err != nil {
		_ = ln.Close()
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.Handle("/bench/link", links)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &server{origin: origin, close: func() { _ = srv.Close() }}, h, nil
}

// authjsDir is where authjs/server.mjs and its node_modules are (the
// bench runs in tools/bench).
const authjsDir = "authjs"

// authjsMissing says why Auth.js's server cannot run, or "".
func authjsMissing() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed: install Node.js 20+, then run npm ci in tools/bench/authjs"
	}
	for _, p := range []string{"@auth/core/index.js", "@auth/pg-adapter/index.js", "@auth/unstorage-adapter/index.js"} {
		if _, err := os.Stat(filepath.Join(authjsDir, "node_modules", filepath.FromSlash(p))); err != nil {
			return p + " is not installed: run npm ci in tools/bench/authjs"
		}
	}
	return ""
}

// nodeConfig is server.mjs's argument.
type nodeConfig struct {
	Secret    string `json:"secret"`
	Adapter   string `json:"adapter"` // pg, unstorage, none
	URL       string `json:"url,omitempty"`
	Schema    string `json:"schema,omitempty"`
	Base      string `json:"base,omitempty"`
	Strategy  string `json:"strategy"`
	UpdateAge *int   `json:"updateAge,omitempty"`
}

// startNode runs authjs/server.mjs and waits for its port.
func startNode(ctx context.Context, c nodeConfig) (*server, error) {
	c.Secret = benchSecret
	arg, _ := json.Marshal(c)
	cmd := exec.Command("node", "server.mjs", string(arg))
	cmd.Dir = authjsDir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if os.Getenv("AUTHPORT_BENCH_DEBUG") != "" {
		cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting node: %w", err)
	}
	stop := func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		port, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
		if !ok {
			stop()
			return nil, fmt.Errorf("authjs/server.mjs did not start: %q %s", s, stderr.String())
		}
		return &server{origin: "http://127.0.0.1:" + port, close: stop}, nil
	case <-time.After(30 * time.Second):
		stop()
		return nil, fmt.Errorf("authjs/server.mjs did not answer in 30s: %s", stderr.String())
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}

// client is the one HTTP client of both sides: keep-alive connections,
// redirects not followed, cookies sent by hand.
func newClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, DisableCompression: true,
			IdleConnTimeout: time.Minute},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// answer is a read response.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	cookies []*http.Cookie
}

func do(ctx context.Context, c *http.Client, method, u, cookie string, form url.Values) (*answer, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &answer{status: res.StatusCode, header: res.Header, body: b, cookies: res.Cookies()}, nil
}

func (a *answer) cookie(name string) *http.Cookie {
	for _, c := range a.cookies {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// sessionJSON is the body of GET /auth/session.
type sessionJSON struct {
	User *struct {
		Name  *string `json:"name"`
		Email *string `json:"email"`
		Image *string `json:"image"`
	} `json:"user"`
	Expires string `json:"expires"`
}

// checkSession checks a GET /auth/session answer for user k: 200, JSON,
// the user's name and e-mail, an expiry after minExpires.
func checkSession(a *answer, k int, minExpires time.Time) error {
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("GET /session: %d %s %q", a.status, a.header.Get("Content-Type"), a.body)
	}
	var s sessionJSON
	if err := json.Unmarshal(a.body, &s); err != nil || s.User == nil {
		return fmt.Errorf("GET /session: body %q (%v), want a session", a.body, err)
	}
	want := userID(k) + "@bench.example"
	if s.User.Email == nil || *s.User.Email != want || s.User.Name == nil || *s.User.Name != "Ada Lovelace" {
		return fmt.Errorf("GET /session: body %q, want user %s", a.body, want)
	}
	exp, err := time.Parse(time.RFC3339Nano, s.Expires)
	if err != nil || !exp.After(minExpires) {
		return fmt.Errorf("GET /session: expires %q (%v), want after %s", s.Expires, err, minExpires.Format(time.RFC3339))
	}
	return nil
}

// emailSignIn makes an e-mail sign-in for user k against origin: GET
// /auth/csrf (token and cookie), POST /auth/signin/email, the link from
// /bench/link, GET the link. It returns the new session cookie's value.
func emailSignIn(ctx context.Context, c *http.Client, origin string, k int) (string, error) {
	csrf, err := do(ctx, c, "GET", origin+"/auth/csrf", "", nil)
	if err != nil {
		return "", err
	}
	var tok struct {
		CSRFToken string `json:"csrfToken"`
	}
	cc := csrf.cookie("authjs.csrf-token")
	if csrf.status != http.StatusOK || json.Unmarshal(csrf.body, &tok) != nil || len(tok.CSRFToken) != 64 || cc == nil {
		return "", fmt.Errorf("GET /csrf: %d %q, cookie %v", csrf.status, csrf.body, cc)
	}
	email := userID(k) + "@bench.example"
	signin, err := do(ctx, c, "POST", origin+"/auth/signin/email", cc.Name+"="+cc.Value,
		url.Values{"csrfToken": {tok.CSRFToken}, "email": {email}, "callbackUrl": {origin + "/"}})
	if err != nil {
		return "", err
	}
	if (signin.status != http.StatusFound && signin.status != http.StatusSeeOther) || !strings.Contains(signin.header.Get("Location"), "/auth/verify-request") {
		return "", fmt.Errorf("POST /signin/email: %d Location %q %q", signin.status, signin.header.Get("Location"), signin.body)
	}
	link, err := do(ctx, c, "GET", origin+"/bench/link?email="+url.QueryEscape(email), "", nil)
	if err != nil {
		return "", err
	}
	if link.status != http.StatusOK || !strings.HasPrefix(string(link.body), origin+"/auth/callback/email?") {
		return "", fmt.Errorf("no sign-in link for %s: %d %q", email, link.status, link.body)
	}
	cb, err := do(ctx, c, "GET", string(link.body), "", nil)
	if err != nil {
		return "", err
	}
	sc := cb.cookie(sessionCookie)
	if cb.status != http.StatusFound || cb.header.Get("Location") != origin+"/" || sc == nil || sc.Value == "" {
		return "", fmt.Errorf("GET the link: %d Location %q, session cookie %v, %q", cb.status, cb.header.Get("Location"), sc, cb.body)
	}
	return sc.Value, nil
}

// httpSide is one server setup: authport's or Auth.js's servers for one
// backend.
type httpSide struct {
	db, extend *server // database sessions, with default UpdateAge and with UpdateAge 0
	jwt        *server
}

func (s *httpSide) close() {
	for _, v := range []*server{s.db, s.extend, s.jwt} {
		if v != nil {
			v.close()
		}
	}
}

// httpBackend is a backend's two sides, its seeded data and its in-process
// handler-vs-adapter row.
type httpBackend struct {
	name       string
	users      int
	authport   *httpSide
	authjs     *httpSide // nil: no Auth.js column (bbolt)
	jwtCookies []string  // the JWT backend's cookies, by user
	inproc     *handler.Handler
	getter     core.SessionAndUserGetter
	adapter    any
	closeStore func()
	authjsSkip string
	maxAge     time.Duration
}

func (b *httpBackend) close() {
	b.authport.close()
	if b.authjs != nil {
		b.authjs.close()
	}
	if b.closeStore != nil {
		b.closeStore()
	}
}

// openHTTP opens the backend's store, seeds it with users users, each
// with a session, and starts authport's servers on it and, when node and
// the npm packages are there, Auth.js's.
func openHTTP(ctx context.Context, name string, users int) (*httpBackend, error) {
	b := &httpBackend{name: name, users: users, authport: &httpSide{}, maxAge: auth.DefaultMaxAge}
	zero := time.Duration(0)
	zeroSecs := 0
	var adapter any
	var newUserID func() (string, error)
	var node nodeConfig
	switch name {
	case "jwt":
		codec, err := jwt.NewCodec(benchSecret)
		if err != nil {
			return nil, err
		}
		b.jwtCookies = make([]string, users)
		for i := range users {
			if b.jwtCookies[i], err = codec.Encode(sessionCookie, map[string]any{"sub": userID(i), "name": "Ada Lovelace",
				"email": userID(i) + "@bench.example", "picture": "https://bench.example/" + userID(i) + ".png"}, auth.DefaultMaxAge); err != nil {
				return nil, err
			}
		}
		// auth.New wants an adapter; JWT sessions never reach it.
		if b.authport.jwt, _, err = startGo(goServerConfig{adapter: newMemory(), strategy: auth.StrategyJWT}); err != nil {
			return nil, err
		}
		node = nodeConfig{Adapter: "none", Strategy: "jwt"}
	case "bbolt":
		s, err := openBolt("")
		if err != nil {
			return nil, err
		}
		b.closeStore = s.close
		if err := seedSessions(ctx, s.adapter, users); err != nil {
			b.close()
			return nil, err
		}
		adapter, b.getter = s.adapter, s.adapter
	case "postgres":
		u, err := env("AUTHPORT_POSTGRES_URL")
		if err != nil {
			return nil, err
		}
		s, schema, err := openAuthJSPg(ctx, u, users)
		if err != nil {
			return nil, err
		}
		b.closeStore = s.close
		adapter, b.getter = s.adapter, s.adapter
		newUserID = func() (string, error) { return s.adapter.NewUserID(context.Background()) }
		node = nodeConfig{Adapter: "pg", URL: u, Schema: schema}
	case "redis":
		u, err := env("AUTHPORT_REDIS_URL")
		if err != nil {
			return nil, err
		}
		s, base, err := openUnstorage(ctx, u)
		if err != nil {
			return nil, err
		}
		b.closeStore = s.close
		if err := seedSessions(ctx, s.adapter, users); err != nil {
			b.close()
			return nil, err
		}
		adapter, b.getter = s.adapter, s.adapter
		node = nodeConfig{Adapter: "unstorage", URL: u, Base: base}
	default:
		return nil, fmt.Errorf("unknown HTTP backend %q (known: %s)", name, strings.Join(allHTTPBackends, ", "))
	}
	if adapter != nil {
		b.adapter = adapter
		var err error
		if b.authport.db, _, err = startGo(goServerConfig{adapter: adapter, strategy: auth.StrategyDatabase, newUserID: newUserID}); err == nil {
			b.authport.extend, _, err = startGo(goServerConfig{adapter: adapter, strategy: auth.StrategyDatabase, updateAge: &zero, newUserID: newUserID})
		}
		if err == nil {
			b.inproc, err = goHandler("http://127.0.0.1", goServerConfig{adapter: adapter, strategy: auth.StrategyDatabase, newUserID: newUserID}, &linkStore{links: map[string]string{}})
		}
		if err != nil {
			b.close()
			return nil, err
		}
	}
	if name == "bbolt" {
		b.authjsSkip = "bbolt: Auth.js has no bbolt adapter"
		return b, nil
	}
	if why := authjsMissing(); why != "" {
		b.authjsSkip = why
		return b, nil
	}
	b.authjs = &httpSide{}
	var err error
	if name == "jwt" {
		b.authjs.jwt, err = startNode(ctx, node)
	} else if b.authjs.db, err = startNode(ctx, node); err == nil {
		node.UpdateAge = &zeroSecs
		b.authjs.extend, err = startNode(ctx, node)
	}
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// seedSessions creates users u0…u(n-1) (benchUser) with the session s<i>
// each, expiring in MaxAge less an hour (not due for an extension).
func seedSessions(ctx context.Context, a fullAdapter, users int) error {
	exp := time.Now().Add(auth.DefaultMaxAge - time.Hour)
	return parallel(users, 8, func(i int) error {
		if _, err := a.CreateUser(ctx, benchUser(userID(i))); err != nil {
			return err
		}
		_, err := a.CreateSession(ctx, core.Session{SessionToken: sessionToken(i), UserID: userID(i), Expires: exp})
		return err
	})
}

// authJSPgSchema is @auth/pg-adapter's schema, with the unique
// constraints of its repository's schema.sql (an index on the session
// token and the e-mail; Auth.js's queries need them as much as ours).
var authJSPgSchema = []string{
	`CREATE TABLE verification_token (identifier TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL, token TEXT NOT NULL, PRIMARY KEY (identifier, token))`,
	`CREATE TABLE accounts (id SERIAL, "userId" INTEGER NOT NULL, type VARCHAR(255) NOT NULL, provider VARCHAR(255) NOT NULL,
  "providerAccountId" VARCHAR(255) NOT NULL, refresh_token TEXT, access_token TEXT, expires_at BIGINT, id_token TEXT,
  scope TEXT, session_state TEXT, token_type TEXT, PRIMARY KEY (id), UNIQUE (provider, "providerAccountId"))`,
	`CREATE TABLE sessions (id SERIAL, "userId" INTEGER NOT NULL, expires TIMESTAMPTZ NOT NULL,
  "sessionToken" VARCHAR(255) NOT NULL UNIQUE, PRIMARY KEY (id))`,
	`CREATE TABLE users (id SERIAL, name VARCHAR(255), email VARCHAR(255) UNIQUE, "emailVerified" TIMESTAMPTZ, image TEXT, PRIMARY KEY (id))`,
	`CREATE INDEX ON sessions ("userId")`,
	`CREATE INDEX ON accounts ("userId")`,
}

// openAuthJSPg makes a schema of its own with Auth.js's pg tables, seeds
// users users (ids 1…n from the SERIAL, e-mail u<i>@bench.example) with
// the session s<i> each, and opens the gorm adapter with AuthJSPg on it.
func openAuthJSPg(ctx context.Context, base string, users int) (*sqlStore, string, error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, "", err
	}
	s := &sqlStore{dialect: "postgres", rt: &roundTrips{}}
	s.cleanup = append(s.cleanup, func() { _ = admin.Close() })
	schema := randomName("authport_bench_http_")
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		s.close()
		return nil, "", err
	}
	s.cleanup = append(s.cleanup, func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(base)
	if err != nil {
		s.close()
		return nil, "", err
	}
	qv := u.Query()
	qv.Set("search_path", schema)
	u.RawQuery = qv.Encode()
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		s.close()
		return nil, "", err
	}
	s.db = sql.OpenDB(stdlib.GetConnector(*cfg))
	pool(s.db)
	s.cleanup = append(s.cleanup, func() { _ = s.db.Close() })
	for _, q := range authJSPgSchema {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			s.close()
			return nil, "", fmt.Errorf("%s: %w", q, err)
		}
	}
	exp := time.Now().Add(auth.DefaultMaxAge - time.Hour)
	for _, q := range []string{
		`INSERT INTO users (name, email, "emailVerified", image) SELECT 'Ada Lovelace', 'u' || g || '@bench.example', now(),
		  'https://bench.example/u' || g || '.png' FROM generate_series(0, $1 - 1) g ORDER BY g`,
		`INSERT INTO sessions ("userId", expires, "sessionToken") SELECT g + 1, $2, 's' || g FROM generate_series(0, $1 - 1) g`,
	} {
		args := []any{users}
		if strings.Contains(q, "$2") {
			args = append(args, exp)
		}
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			s.close()
			return nil, "", fmt.Errorf("seeding: %w", err)
		}
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
		s.close()
		return nil, "", err
	}
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: s.db}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		s.close()
		return nil, "", err
	}
	if s.adapter, err = gormadapter.New(gdb, gormadapter.AuthJSPg()); err != nil {
		s.close()
		return nil, "", err
	}
	return s, schema, nil
}

// openUnstorage opens the Redis adapter in @auth/unstorage-adapter's
// layout under a base of its own (its keys deleted at close).
func openUnstorage(ctx context.Context, rawURL string) (*redisStore, string, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, "", err
	}
	base := randomName("authport-bench-http-")
	s := &redisStore{rt: &roundTrips{}, prefix: base + ":"}
	opts.PoolSize = 32
	opts.MinIdleConns = 32
	opts.ContextTimeoutEnabled = true
	s.c = redis.NewClient(opts)
	if err := s.c.Ping(ctx).Err(); err != nil {
		_ = s.c.Close()
		return nil, "", err
	}
	if s.adapter, err = redisadapter.New(s.c, redisadapter.WithUnstorageLayout(base)); err != nil {
		_ = s.c.Close()
		return nil, "", err
	}
	return s, base, nil
}

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

// serveSession calls h's GET /auth/session in process with the database
// session cookie of user k and checks the answer.
func serveSession(ctx context.Context, h http.Handler, k int) error {
	r, err := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/auth/session", nil)
	if err != nil {
		return err
	}
	r.Header.Set("Cookie", sessionCookie+"="+sessionToken(k))
	w := &inprocResponse{h: http.Header{}}
	h.ServeHTTP(w, r)
	return checkSession(&answer{status: w.status, header: w.h, body: w.body}, k, time.Now().Add(time.Hour))
}

// inprocOp is the handler's own cost: GET /auth/session through the
// handler in process (no socket) beside the adapter's getSessionAndUser
// for the same session, on the same store.
func inprocOp(b *httpBackend) operation {
	pick := func(i int) int { return (i * 7919) % b.users }
	return operation{
		name:    "handler GET /session ÷ getSessionAndUser",
		adapter: func(ctx context.Context, i int) error { return serveSession(ctx, b.inproc, pick(i)) },
		raw: func(ctx context.Context, i int) error {
			k := pick(i)
			su, err := b.getter.GetSessionAndUser(ctx, sessionToken(k))
			if err != nil {
				return err
			}
			if su == nil || su.User.Email != userID(k)+"@bench.example" {
				return fmt.Errorf("getSessionAndUser(%s) = %+v", sessionToken(k), su)
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
