package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/passkey/passkeytest"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"gorm.io/driver/postgres"
)

// TestSignInFaults runs the three sign-in flows through the real handler
// over HTTP, on PostgreSQL and Redis servers of the test's own reached
// through toxiproxy, and breaks the network to the database during the
// callback: every connection reset, a black hole, and a stall (every
// answer held past the request's deadline, so the server acts and the
// handler never hears of it). Each must give the error page and no
// session cookie, leave nothing half-written in the store (no user of an
// OAuth sign-in without its account, no account, session or authenticator
// without its user; read with the server's own driver), and a retry once
// the database answers again must sign the browser in.
//
// OAuth: an OAuth 2.0 provider whose token and userinfo requests are
// answered in process (the provider is not what is under test). E-mail:
// the link captured from the provider's send function. Passkey: a
// discoverable sign-in with passkeytest's software authenticator, the
// passkey registered beforehand.
func TestSignInFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own database servers; not in -short")
	}
	t.Parallel() // beside TestFaults: see there
	tp := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	started := time.Now()
	// The two backends run side by side (their servers, proxies and
	// applications are separate); the run is mostly waiting for deadlines.
	t.Run("backends", func(t *testing.T) {
		for name, mk := range map[string]func(*testing.T, *toxiproxy.ApiServer) *signInStore{"postgres": signInPostgres, "redis": signInRedis} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				st := mk(t, tp)
				signInFaults(t, st)
				t.Logf("%s: %s", name, st.summary())
			})
		}
	})
	t.Logf("sign-in under faults: %v in all", time.Since(started).Round(time.Millisecond))
}

// requestDeadline bounds every request the handler serves: an application
// gives its requests a deadline, and a black-holed database call ends
// with it.
const requestDeadline = time.Second

// cleanLimit is how long after the database answers again the store may
// still hold what a failed sign-in half-wrote (core/auth's background
// removal retries every second at most; a stalled answer lands 1.5 s
// after it was sent).
const cleanLimit = 5 * time.Second

// signInStore is one backend of TestSignInFaults.
type signInStore struct {
	mu       sync.Mutex
	notes    map[string]int // outcomes, counted, for the summary line
	maxClean time.Duration  // the longest wait for the store to be clean
	adapter  core.Adapter   // through the proxy
	proxy    *toxiproxy.Proxy
	probe    func(context.Context) error // through the proxy
	// halfWritten lists what the store holds that a sign-in must never
	// leave: an account, session or authenticator without its user, and a
	// user with one of oauthEmails that has no account.
	halfWritten func(ctx context.Context, oauthEmails []string) ([]string, error)
}

func (st *signInStore) note(s string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.notes == nil {
		st.notes = map[string]int{}
	}
	st.notes[s]++
}

func (st *signInStore) clean(d time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.maxClean = max(st.maxClean, d)
}

// summary is one line of what the failed callbacks answered.
func (st *signInStore) summary() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	keys := make([]string, 0, len(st.notes))
	for k := range st.notes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %d; ", k, st.notes[k])
	}
	fmt.Fprintf(&b, "store clean at most %v after the database was back", st.maxClean.Round(time.Millisecond))
	return b.String()
}

func signInPostgres(t *testing.T, tp *toxiproxy.ApiServer) *signInStore {
	s := newPostgres(t)
	newGorm(t, postgres.New(postgres.Config{Conn: openSQL(t, "pgx", s.url())}), true)
	p := newProxy(t, tp, "signin-postgres", "127.0.0.1:"+strconv.Itoa(s.port))
	proxiedURL := strings.Replace(s.url(), "127.0.0.1:"+strconv.Itoa(s.port), p.Listen, 1)
	a := newGorm(t, postgres.New(postgres.Config{Conn: openSQL(t, "pgx", proxiedURL)}), false)
	db := openSQL(t, "pgx", s.url())
	return &signInStore{adapter: a, proxy: p, probe: pgPing(proxiedURL),
		halfWritten: func(ctx context.Context, emails []string) ([]string, error) {
			var out []string
			for _, q := range []struct{ what, query string }{
				{"account without its user", `SELECT count(*) FROM "accounts" a WHERE NOT EXISTS (SELECT 1 FROM "users" u WHERE u."id" = a."userId")`},
				{"session without its user", `SELECT count(*) FROM "sessions" s WHERE NOT EXISTS (SELECT 1 FROM "users" u WHERE u."id" = s."userId")`},
				{"authenticator without its user", `SELECT count(*) FROM "authenticators" s WHERE NOT EXISTS (SELECT 1 FROM "users" u WHERE u."id" = s."userId")`},
			} {
				var n int
				if err := db.QueryRowContext(ctx, q.query).Scan(&n); err != nil {
					return nil, err
				}
				if n > 0 {
					out = append(out, fmt.Sprintf("%d %s", n, q.what))
				}
			}
			for _, e := range emails {
				var n int
				err := db.QueryRowContext(ctx, `SELECT count(*) FROM "users" u WHERE u."email" = $1 AND NOT EXISTS (SELECT 1 FROM "accounts" a WHERE a."userId" = u."id")`, e).Scan(&n)
				if err != nil {
					return nil, err
				}
				if n > 0 {
					out = append(out, "user "+e+" of an OAuth sign-in without its account")
				}
			}
			return out, nil
		}}
}

func signInRedis(t *testing.T, tp *toxiproxy.ApiServer) *signInStore {
	_, port := newRedis(t, func(port int) func(context.Context) error { return redisPing("127.0.0.1:" + strconv.Itoa(port)) })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := newProxy(t, tp, "signin-redis", addr)
	// An application's client: go-redis's defaults, bounded by the
	// request's context.
	c := redis.NewClient(&redis.Options{Addr: p.Listen, ContextTimeoutEnabled: true})
	a := newRedisAdapter(t, c)
	rc := redis.NewClient(redisOptions(addr))
	t.Cleanup(func() { _ = rc.Close() })
	return &signInStore{adapter: a, proxy: p, probe: redisPing(p.Listen),
		halfWritten: func(ctx context.Context, emails []string) ([]string, error) {
			// Each ref is a key holding a user id, with the count of what
			// it needs of that user (none: half-written) and its report.
			type ref struct {
				key     string
				needs   func(uid string) *redis.IntCmd
				without func(uid string) string
			}
			var refs []ref
			for _, kind := range []string{"account", "session", "authenticator"} {
				keys, err := rc.Keys(ctx, redisPrefix+kind+":{*").Result()
				if err != nil {
					return nil, err
				}
				for _, k := range keys {
					refs = append(refs, ref{k,
						func(uid string) *redis.IntCmd { return rc.Exists(ctx, redisPrefix+"user:{"+uid+"}") },
						func(uid string) string { return kind + " key " + k + " without its user " + uid }})
				}
			}
			for _, e := range emails {
				refs = append(refs, ref{redisPrefix + "email:{" + e + "}",
					func(uid string) *redis.IntCmd { return rc.HLen(ctx, redisPrefix+"user:{"+uid+"}:accounts") },
					func(uid string) string { return "user " + uid + " (" + e + ") of an OAuth sign-in without its account" }})
			}
			var out []string
			for _, r := range refs {
				uid, err := rc.Get(ctx, r.key).Result()
				if errors.Is(err, redis.Nil) {
					continue
				}
				if err != nil {
					return nil, err
				}
				n, err := r.needs(uid).Result()
				if err != nil {
					return nil, err
				}
				if n == 0 {
					out = append(out, r.without(uid))
				}
			}
			return out, nil
		}}
}

// signInApp is the application: core/auth with the three providers and
// database sessions, the handler at /auth on a real HTTP server whose
// requests have requestDeadline.
type signInApp struct {
	srv      *httptest.Server
	origin   string // http://localhost:PORT (passkeys want a domain)
	base     string
	pk       *passkey.Passkeys
	mu       sync.Mutex
	links    map[string]string // e-mail sign-in links by address
	profiles map[string]map[string]any
}

func newSignInApp(t *testing.T, store core.Adapter) *signInApp {
	t.Helper()
	app := &signInApp{links: map[string]string{}, profiles: map[string]map[string]any{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app.origin = "http://localhost:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	app.base = app.origin + "/auth"
	oauthProvider := &provider.OAuth2Config[map[string]any]{
		ID: "fake", Name: "Fake", ClientID: "client-id", ClientSecret: "client-secret",
		Authorization: provider.Endpoint{URL: "https://provider.invalid/authorize"},
		Token: provider.TokenEndpoint{URL: "https://provider.invalid/token",
			Request: func(_ context.Context, req provider.TokenRequest) (provider.TokenSet, error) {
				return provider.TokenSet{AccessToken: "at-" + req.Params.Get("code"), TokenType: "bearer"}, nil
			}},
		Userinfo: provider.UserinfoEndpoint[map[string]any]{URL: "https://provider.invalid/userinfo",
			Request: func(_ context.Context, req provider.UserinfoRequest) (map[string]any, error) {
				app.mu.Lock()
				defer app.mu.Unlock()
				p, ok := app.profiles[strings.TrimPrefix(req.Tokens.AccessToken, "at-")]
				if !ok {
					return nil, errors.New("unknown code")
				}
				return p, nil
			}},
	}
	email := provider.Email("Faults <no-reply@example.com>", func(_ context.Context, req provider.VerificationRequest) error {
		app.mu.Lock()
		app.links[req.Identifier] = req.URL
		app.mu.Unlock()
		return nil
	})
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{signInSecret}, BaseURL: app.base,
		Providers: []provider.Provider{oauthProvider, email, provider.Passkey()}})
	if err != nil {
		t.Fatal(err)
	}
	app.pk, err = passkey.New(passkey.Config{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, Passkeys: app.pk,
		RateLimit: handler.RateLimit{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "home") })
	app.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), requestDeadline)
		defer cancel()
		mux.ServeHTTP(w, r.WithContext(ctx))
	})}}
	app.srv.Start()
	t.Cleanup(app.srv.Close)
	return app
}

// browser is a client with its own cookie jar that does not follow
// redirects.
func (app *signInApp) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (app *signInApp) csrf(c *http.Client) (string, error) {
	res, err := c.Get(app.base + "/csrf")
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var body struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.CSRFToken == "" {
		return "", fmt.Errorf("GET /auth/csrf: %d, %v", res.StatusCode, err)
	}
	return body.CSRFToken, nil
}

func (app *signInApp) post(c *http.Client, path string, form url.Values) (*http.Response, error) {
	res, err := c.PostForm(app.base+path, form)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res, nil
}

func (app *signInApp) get(c *http.Client, u string) (*http.Response, error) {
	res, err := c.Get(u)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res, nil
}

// outcome classifies a callback's answer: "signed in" (a redirect to the
// callback URL with a session cookie), "error page" (a redirect to the
// error or sign-in page with ?error= and no session cookie), or what else
// it was.
func (app *signInApp) outcome(res *http.Response) string {
	var session bool
	for _, c := range res.Cookies() {
		if c.Name == "authjs.session-token" && c.Value != "" && c.MaxAge >= 0 {
			session = true
		}
	}
	loc := res.Header.Get("Location")
	switch {
	case res.StatusCode/100 == 3 && session && loc == app.origin+"/done":
		return "signed in"
	case res.StatusCode/100 == 3 && !session && (strings.HasPrefix(loc, app.base+"/error?error=") || strings.HasPrefix(loc, app.base+"/signin?error=")):
		u, _ := url.Parse(loc)
		return "error page (" + u.Query().Get("error") + ")"
	}
	return fmt.Sprintf("%d to %q, session cookie %v", res.StatusCode, loc, session)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ---- the flows -------------------------------------------------------------

// flow is one sign-in: prepare does what comes before the callback (not
// under the fault), callback the request the fault hits. A retry runs
// prepare and callback again.
type flow struct {
	name     string
	oauth    string // the e-mail address of an OAuth identity, checked for its account
	prepare  func(c *http.Client) (callback func() (*http.Response, error), err error)
	reusable bool // the callback may be sent again as is after a failure (an e-mail link not yet used)
}

func (app *signInApp) oauthFlow(email string) flow {
	accountID := "acc-" + randomID()
	return flow{name: "oauth", oauth: email, prepare: func(c *http.Client) (func() (*http.Response, error), error) {
		tok, err := app.csrf(c)
		if err != nil {
			return nil, err
		}
		res, err := app.post(c, "/signin/fake", url.Values{"csrfToken": {tok}, "callbackUrl": {app.origin + "/done"}})
		if err != nil {
			return nil, err
		}
		to, err := url.Parse(res.Header.Get("Location"))
		if err != nil || to.Host != "provider.invalid" {
			return nil, fmt.Errorf("POST /auth/signin/fake: %d to %q, want the provider", res.StatusCode, res.Header.Get("Location"))
		}
		code := "code-" + randomID()
		app.mu.Lock()
		app.profiles[code] = map[string]any{"id": accountID, "email": email, "name": "Fault Tester"}
		app.mu.Unlock()
		q := url.Values{"code": {code}}
		if s := to.Query().Get("state"); s != "" {
			q.Set("state", s)
		}
		return func() (*http.Response, error) { return app.get(c, app.base+"/callback/fake?"+q.Encode()) }, nil
	}}
}

func (app *signInApp) emailFlow(email string) flow {
	return flow{name: "email", reusable: true, prepare: func(c *http.Client) (func() (*http.Response, error), error) {
		tok, err := app.csrf(c)
		if err != nil {
			return nil, err
		}
		res, err := app.post(c, "/signin/email", url.Values{"csrfToken": {tok}, "email": {email}, "callbackUrl": {app.origin + "/done"}})
		if err != nil {
			return nil, err
		}
		if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "/verify-request") {
			return nil, fmt.Errorf("POST /auth/signin/email: %d to %q", res.StatusCode, res.Header.Get("Location"))
		}
		app.mu.Lock()
		link := app.links[email]
		app.mu.Unlock()
		if link == "" {
			return nil, errors.New("no sign-in link sent")
		}
		return func() (*http.Response, error) { return app.get(c, link) }, nil
	}}
}

// passkeyFlow registers a passkey for a new user (in process, through the
// same Passkeys), then signs in with it over HTTP: a discoverable sign-in.
func (app *signInApp) passkeyFlow(t *testing.T, store core.Adapter, email string) flow {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	u, err := store.CreateUser(ctx, core.User{ID: uuid.NewString(), Email: email, EmailVerified: &now})
	if err != nil {
		t.Fatal(err)
	}
	authr, err := passkeytest.NewAuthenticator()
	if err != nil {
		t.Fatal(err)
	}
	pc := passkeytest.Client{Passkeys: app.pk, BaseURL: app.base, Provider: "passkey"}
	o, challenge, err := pc.Options(ctx, "action=register", u)
	if err != nil {
		t.Fatal(err)
	}
	data, err := authr.Create(o, passkeytest.Ceremony{Origin: app.origin})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Callback(ctx, challenge, o.Action, data, u); err != nil {
		t.Fatalf("registering the passkey: %v", err)
	}
	return flow{name: "passkey", prepare: func(c *http.Client) (func() (*http.Response, error), error) {
		tok, err := app.csrf(c)
		if err != nil {
			return nil, err
		}
		res, err := c.Get(app.base + "/webauthn-options/passkey")
		if err != nil {
			return nil, err
		}
		var o passkeytest.Options
		err = json.NewDecoder(res.Body).Decode(&o)
		res.Body.Close()
		if err != nil || o.Action != "authenticate" {
			return nil, fmt.Errorf("GET /auth/webauthn-options/passkey: %d, action %q, %v", res.StatusCode, o.Action, err)
		}
		data, err := authr.Get(o, passkeytest.Ceremony{Origin: app.origin})
		if err != nil {
			return nil, err
		}
		form := url.Values{"action": {o.Action}, "data": {data}, "csrfToken": {tok}, "callbackUrl": {app.origin + "/done"}}
		return func() (*http.Response, error) { return app.post(c, "/callback/passkey", form) }, nil
	}}
}

// ---- the faults ------------------------------------------------------------

// signInFault is a toxic held while the callback runs.
type signInFault struct{ name, toxic, spec string }

var (
	faultReset = signInFault{"connection reset", "reset", `{"name":"reset","type":"reset_peer","stream":"upstream","attributes":{"timeout":0}}`}
	faultHole  = signInFault{"black hole (timeout toxic)", "hole", `{"name":"hole","type":"timeout","stream":"upstream","attributes":{"timeout":0}}`}
	// The requests reach the server, which acts; its answers come after
	// the request's deadline.
	faultStall = signInFault{"stall (answers 1.5 s late)", "stall", `{"name":"stall","type":"latency","stream":"downstream","attributes":{"latency":1500}}`}
)

// signInFaults runs each flow with: a black hole from the start of the
// callback (its first read fails); and a connection reset and a stall
// starting at its k-th write, for every k the flow reaches (the first
// write, then with the earlier ones done: the half-written cases).
func signInFaults(t *testing.T, st *signInStore) {
	wt := &writeTrigger{Adapter: st.adapter}
	app := newSignInApp(t, wt)
	checkSeesHalfWritten(t, st, wt)
	for _, mk := range []func(email string) flow{
		app.oauthFlow,
		app.emailFlow,
		func(email string) flow { return app.passkeyFlow(t, wt, email) },
	} {
		newFlow := func() flow { return mk("signin-" + randomID() + "@example.com") }
		fl := newFlow()
		t.Run(fl.name+"/"+faultHole.toxic+"@start", func(t *testing.T) {
			runSignInFault(t, app, st, wt, fl, faultHole, 0)
		})
		for _, f := range []signInFault{faultReset, faultStall} {
			for k := 1; k < 10; k++ {
				fl := newFlow()
				var reached bool
				t.Run(fmt.Sprintf("%s/%s@write%d", fl.name, f.toxic, k), func(t *testing.T) {
					reached = runSignInFault(t, app, st, wt, fl, f, k)
				})
				if !reached {
					break
				}
			}
		}
	}
}

// checkSeesHalfWritten proves the store inspection can fail: a user of an
// OAuth e-mail address without its account is reported (and on Redis, a
// session key whose user does not exist).
func checkSeesHalfWritten(t *testing.T, st *signInStore, a core.Adapter) {
	t.Helper()
	ctx := context.Background()
	email := "planted-" + randomID() + "@example.com"
	u, err := a.CreateUser(ctx, core.User{ID: uuid.NewString(), Email: email})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := st.halfWritten(ctx, []string{email})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "without its account") {
		t.Errorf("the store inspection did not see a planted user without its account: %v", bad)
	}
	if _, err := a.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
}

// runSignInFault runs one flow with fault f: from the start of the
// callback when at is 0, else from just before its at-th write. It reports
// whether the callback reached that write (false: the flow has fewer
// writes; it then signed in without a fault).
func runSignInFault(t *testing.T, app *signInApp, st *signInStore, wt *writeTrigger, fl flow, f signInFault, at int) bool {
	var oauthEmails []string
	if fl.oauth != "" {
		oauthEmails = []string{fl.oauth}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := app.browser()
	callback, err := fl.prepare(c)
	if err != nil {
		t.Fatalf("before the fault: %v", err)
	}
	addToxic := func() {
		if _, err := st.proxy.Toxics.AddToxicJson(strings.NewReader(f.spec)); err != nil {
			t.Errorf("adding the toxic: %v", err)
		}
	}
	if at == 0 {
		addToxic()
	} else {
		wt.arm(at, addToxic)
	}
	res, err := callback()
	fired, writes := wt.disarm()
	if at == 0 || fired {
		if rerr := st.proxy.Toxics.RemoveToxic(ctx, f.toxic); rerr != nil {
			t.Fatal(rerr)
		}
	}
	if err != nil {
		t.Fatalf("the callback under %s: %v", f.name, err)
	}
	if at > 0 && !fired {
		// Fewer writes than at: the sign-in ran without a fault.
		if got := app.outcome(res); got != "signed in" {
			t.Errorf("the callback without a fault (writes %v): %s; want signed in", writes, got)
		}
		st.note(fmt.Sprintf("%s writes %v", fl.name, writes))
		return false
	}
	where := f.name
	if at > 0 {
		where += fmt.Sprintf(" at write %d (%s, after %v; then %v)", at, writes[at-1], writes[:at-1], writes[at:])
	} else {
		where += " from the callback's start"
	}
	if got := app.outcome(res); !strings.HasPrefix(got, "error page") {
		t.Errorf("the callback with the database failing (%s): %s; want the error page and no session cookie", where, got)
	} else {
		st.note(got)
	}
	if err := waitFor(ctx, st.probe); err != nil {
		t.Fatalf("the database did not answer again: %v", err)
	}
	// A stalled write lands after the handler gave up on it, and a
	// removal core/auth could not make while the store was failing is
	// retried in the background: give them cleanLimit.
	back := time.Now()
	var bad []string
	for {
		time.Sleep(100 * time.Millisecond)
		if bad, err = st.halfWritten(ctx, oauthEmails); err != nil {
			t.Fatal(err)
		}
		if len(bad) == 0 || time.Since(back) > cleanLimit {
			break
		}
	}
	if len(bad) > 0 {
		t.Errorf("%v after the failed callback (%s) the store still holds half-written records: %v", cleanLimit, where, bad)
	} else {
		st.clean(time.Since(back))
	}

	// The retry: the same link for an e-mail sign-in (unless the failed
	// attempt used it up: then a new one), a new sign-in otherwise.
	var retry string
	if fl.reusable {
		if res, err = callback(); err != nil {
			t.Fatal(err)
		}
		retry = app.outcome(res)
		if retry == "error page (Verification)" {
			st.note("e-mail link used up by the failed attempt, a new one asked for")
			retry = ""
		}
	}
	if retry == "" {
		c = app.browser()
		callback, err = fl.prepare(c)
		if err != nil {
			t.Fatalf("retrying after the fault: %v", err)
		}
		if res, err = callback(); err != nil {
			t.Fatal(err)
		}
		retry = app.outcome(res)
	}
	if retry != "signed in" {
		t.Errorf("the retry after the database recovered from %s: %s; want signed in", where, retry)
		return true
	}
	// The session the retry made is the browser's and is stored.
	sres, err := c.Get(app.base + "/session")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		User struct {
			Email string `json:"email"`
		} `json:"user"`
	}
	err = json.NewDecoder(sres.Body).Decode(&s)
	sres.Body.Close()
	if err != nil || s.User.Email == "" {
		t.Errorf("GET /auth/session after the retry: %d, %v, user %+v; want the signed-in user", sres.StatusCode, err, s.User)
	}
	if bad, err := st.halfWritten(ctx, oauthEmails); err != nil {
		t.Fatal(err)
	} else if len(bad) > 0 {
		t.Errorf("after the retry the store holds half-written records: %v", bad)
	}
	return true
}

// signInSecret signs the test application's cookies (32 bytes or more).
const signInSecret = "faults-signin-secret-0123456789abcdef"
