package handler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// baFixture is testdata/betterauth-cookies.json: cookies Better Auth
// 1.7.25 set on an e-mail sign-up (testdata/betterauth-fixture.mjs).
type baFixture struct {
	Note  string
	Cases []baCase
}

type baCase struct {
	Name     string
	Strategy handler.CookieCacheStrategy
	Secure   bool
	Secret   string
	Now      int64    // Unix milliseconds of the sign-up
	Cookies  []string // name=value
	User     baUser
	Session  baSession
}

type baUser struct {
	ID, Email, Name string
	Image           *string
	EmailVerified   bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

type baSession struct {
	ID, Token, UserID string
	ExpiresAt         time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

func loadBAFixture(t testing.TB) map[string]baCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "betterauth-cookies.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f baFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	cases := map[string]baCase{}
	for _, c := range f.Cases {
		cases[c.Name] = c
	}
	return cases
}

// cookie returns the case's cookie named name (a suffix of the full name,
// e.g. "session_token"), or "".
func (c baCase) cookie(suffix string) string {
	for _, nv := range c.Cookies {
		name, _, _ := strings.Cut(nv, "=")
		if strings.HasSuffix(name, "."+suffix) {
			return nv
		}
	}
	return ""
}

// data returns the case's cookie cache cookies (whole or chunks).
func (c baCase) data() []string {
	var out []string
	for _, nv := range c.Cookies {
		if name, _, _ := strings.Cut(nv, "="); strings.Contains(name, ".session_data") {
			out = append(out, nv)
		}
	}
	return out
}

func (c baCase) at() time.Time { return time.UnixMilli(c.Now) }

func cookieRequest(cookies ...string) *http.Request {
	r := httptest.NewRequest("GET", "/api/x", nil)
	if len(cookies) > 0 {
		r.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	return r
}

func baReader(t testing.TB, cfg handler.ReaderConfig) *handler.Reader {
	t.Helper()
	rd, err := handler.NewReader(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// wantBASession checks that s is the session of Better Auth's user and
// session rows.
func wantBASession(t *testing.T, s *handler.Session, err error, u baUser, sess baSession) {
	t.Helper()
	if err != nil || s == nil {
		t.Fatalf("session %v, %v; want %s's", s, err, u.Email)
	}
	if s.User.ID != u.ID || s.User.Email == nil || *s.User.Email != u.Email || s.User.Name == nil || *s.User.Name != u.Name {
		t.Errorf("user %q %v %v, want %q %q %q", s.User.ID, s.User.Email, s.User.Name, u.ID, u.Email, u.Name)
	}
	if (s.User.Image == nil) != (u.Image == nil) || s.User.Image != nil && *s.User.Image != *u.Image {
		t.Errorf("image %v, want %v", s.User.Image, u.Image)
	}
	if !s.Expires.Equal(sess.ExpiresAt) {
		t.Errorf("expires %v, want the stored %v", s.Expires, sess.ExpiresAt)
	}
	if s.Strategy != auth.StrategyDatabase || s.Claims != nil {
		t.Errorf("strategy %q, claims %v: want a database session", s.Strategy, s.Claims)
	}
}

// A Reader reads the cookie cache Better Auth wrote, in each strategy,
// with no store, and refuses it when anything about it is off.
func TestBetterAuthCookieCacheFixture(t *testing.T) {
	cases := loadBAFixture(t)
	for _, name := range []string{"compact", "jwt", "jwe", "jwe-https", "compact-chunked", "compact-escapes"} {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			if c.Strategy == "" || c.cookie("session_token") == "" || len(c.data()) == 0 {
				t.Fatalf("fixture case %+v lacks cookies", c)
			}
			if name == "compact-chunked" && len(c.data()) < 2 {
				t.Fatalf("Better Auth did not chunk the cache: %v", c.data())
			}
			at := func(d time.Duration) func() time.Time { return func() time.Time { return c.at().Add(d) } }
			read := func(cfg handler.BetterAuthCookies, now func() time.Time, secure bool, cookies ...string) *handler.Session {
				t.Helper()
				rd := baReader(t, handler.ReaderConfig{BetterAuth: &cfg, Now: now, Secure: secure})
				s, err := rd.Session(cookieRequest(cookies...))
				if err != nil {
					t.Fatalf("Session: %v", err)
				}
				return s
			}
			cfg := handler.BetterAuthCookies{Secrets: []string{c.Secret}, CookieCache: c.Strategy}
			all := append([]string{c.cookie("session_token")}, c.data()...)

			rd := baReader(t, handler.ReaderConfig{BetterAuth: &cfg, Now: at(time.Second), Secure: c.Secure})
			s, err := rd.Session(cookieRequest(all...))
			wantBASession(t, s, err, c.User, c.Session)
			if s != nil && *s.User.Email != "ada@example.com" {
				t.Errorf("email %q, want it lowercased as Better Auth stores it", *s.User.Email)
			}
			// The cache holds until its maxAge (300 s, Better Auth's default).
			if s := read(cfg, at(299*time.Second), c.Secure, all...); s == nil {
				t.Error("refused at 299 s")
			}
			// Reversed chunk order is the same cookie.
			if len(c.data()) > 1 {
				rev := []string{c.cookie("session_token")}
				for i := len(c.data()) - 1; i >= 0; i-- {
					rev = append(rev, c.data()[i])
				}
				if s := read(cfg, at(time.Second), c.Secure, rev...); s == nil {
					t.Error("chunks in another order refused")
				}
				if s := read(cfg, at(time.Second), c.Secure, all[:len(all)-1]...); s != nil {
					t.Error("a cache missing its last chunk read")
				}
			}

			other := "another-better-auth-secret-0123456789"
			refused := map[string]func() *handler.Session{
				"foreign secret": func() *handler.Session {
					return read(handler.BetterAuthCookies{Secrets: []string{other}, CookieCache: c.Strategy}, at(time.Second), c.Secure, all...)
				},
				// Better Auth 1.7 signs and checks the session cookie with
				// its newest secret alone: rotating it signs everyone out.
				"rotated secret": func() *handler.Session {
					return read(handler.BetterAuthCookies{Secrets: []string{other, c.Secret}, CookieCache: c.Strategy}, at(time.Second), c.Secure, all...)
				},
				"no session cookie": func() *handler.Session { return read(cfg, at(time.Second), c.Secure, c.data()...) },
				"tampered session cookie": func() *handler.Session {
					tok := c.cookie("session_token")
					i := strings.IndexByte(tok, '=') + 3
					flip := tok[:i] + string(tok[i]^1) + tok[i+1:]
					return read(cfg, at(time.Second), c.Secure, append([]string{flip}, c.data()...)...)
				},
				"another session's cookie": func() *handler.Session {
					return read(cfg, at(time.Second), c.Secure, append([]string{cases["none"].cookie("session_token")}, c.data()...)...)
				},
				"tampered cache": func() *handler.Session {
					d := c.data()[0]
					i := len(d) / 2
					flip := d[:i] + string(d[i]^1) + d[i+1:]
					return read(cfg, at(time.Second), c.Secure, append([]string{c.cookie("session_token"), flip}, c.data()[1:]...)...)
				},
				"expired cache": func() *handler.Session { return read(cfg, at(301*time.Second), c.Secure, all...) },
				"other version": func() *handler.Session {
					return read(handler.BetterAuthCookies{Secrets: []string{c.Secret}, CookieCache: c.Strategy, CookieCacheVersion: "2"}, at(time.Second), c.Secure, all...)
				},
				"other prefix": func() *handler.Session {
					return read(handler.BetterAuthCookies{Secrets: []string{c.Secret}, CookieCache: c.Strategy, CookiePrefix: "my-app"}, at(time.Second), c.Secure, all...)
				},
				"other strategy": func() *handler.Session {
					s := handler.CookieCacheJWT
					if c.Strategy == handler.CookieCacheJWT {
						s = handler.CookieCacheJWE
					}
					return read(handler.BetterAuthCookies{Secrets: []string{c.Secret}, CookieCache: s}, at(time.Second), c.Secure, all...)
				},
				"other scheme": func() *handler.Session { return read(cfg, at(time.Second), !c.Secure, all...) },
			}
			for why, f := range refused {
				if s := f(); s != nil {
					t.Errorf("%s: read as %q's session", why, s.User.ID)
				}
			}
		})
	}
}

// Without a cookie cache, a Reader checks the session cookie's signature
// and looks its token up through the Auth's adapter: here the memory
// adapter holding the session Better Auth created.
func TestBetterAuthSessionTokenLookup(t *testing.T) {
	cases := loadBAFixture(t)
	c := cases["none"]
	e := newEnv(t, envOpts{providers: noProviders})
	ctx := context.Background()
	if _, err := e.store.CreateUser(ctx, core.User{ID: c.User.ID, Email: c.User.Email, Name: &c.User.Name, Image: c.User.Image}); err != nil {
		t.Fatal(err)
	}
	// Due for no extension (the Auth's MaxAge, 30 days).
	expires := e.clock.Now().Add(30 * 24 * time.Hour).Truncate(time.Millisecond)
	if _, err := e.store.CreateSession(ctx, core.Session{SessionToken: c.Session.Token, UserID: c.User.ID, Expires: expires}); err != nil {
		t.Fatal(err)
	}
	rd := baReader(t, handler.ReaderConfig{Auth: e.a, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{c.Secret}}})
	s, err := rd.Session(cookieRequest(c.cookie("session_token")))
	wantBASession(t, s, err, c.User, baSession{ExpiresAt: expires})

	// A cache is not needed, and one the Reader does not read is ignored.
	s, err = rd.Session(cookieRequest(c.cookie("session_token"), cases["compact"].data()[0]))
	wantBASession(t, s, err, c.User, baSession{ExpiresAt: expires})

	// The raw token (unsigned), a bad signature, or a signed token that is
	// no stored session read as signed out.
	name, _, _ := strings.Cut(c.cookie("session_token"), "=")
	for _, v := range []string{
		c.Session.Token,
		c.Session.Token + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D",
		strings.TrimSuffix(c.cookie("session_token")[len(name)+1:], "%3D"),
		cases["jwt"].cookie("session_token")[len(name)+1:],
	} {
		if s, err := rd.Session(cookieRequest(name + "=" + v)); s != nil || err != nil {
			t.Errorf("cookie %q: %v, %v; want signed out", v, s, err)
		}
	}

	// A bearer token is the raw session token.
	bearer := baReader(t, handler.ReaderConfig{Auth: e.a, Bearer: true, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{c.Secret}}})
	r := cookieRequest()
	r.Header.Set("Authorization", "Bearer "+c.Session.Token)
	s, err = bearer.Session(r)
	wantBASession(t, s, err, c.User, baSession{ExpiresAt: expires})

	// With a cookie cache configured, a cache miss falls back to the store.
	rd = baReader(t, handler.ReaderConfig{Auth: e.a, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{c.Secret}, CookieCache: handler.CookieCacheJWE}})
	s, err = rd.Session(cookieRequest(c.cookie("session_token"), cases["jwe"].data()[0]))
	wantBASession(t, s, err, c.User, baSession{ExpiresAt: expires})
}

func TestBetterAuthConfig(t *testing.T) {
	e := newEnv(t, envOpts{providers: noProviders})
	good := "better-auth-config-secret-0123456789"
	for name, cfg := range map[string]handler.ReaderConfig{
		"no Auth and no cache":  {BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}}},
		"Bearer without Auth":   {Bearer: true, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}, CookieCache: handler.CookieCacheJWE}},
		"JWT strategy":          {Auth: e.a, Strategy: auth.StrategyJWT, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}}},
		"unknown cache":         {BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}, CookieCache: "jws"}},
		"no secret":             {BetterAuth: &handler.BetterAuthCookies{CookieCache: handler.CookieCacheJWE}},
		"short secret":          {BetterAuth: &handler.BetterAuthCookies{Secrets: []string{"short"}, CookieCache: handler.CookieCacheJWE}},
		"prefix with a space":   {BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}, CookieCache: handler.CookieCacheJWE, CookiePrefix: "my app"}},
		"prefix with a semicol": {BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}, CookieCache: handler.CookieCacheJWE, CookiePrefix: "a;b"}},
	} {
		if _, err := handler.NewReader(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Secrets default to the Auth's; a short one is allowed for
	// development with AllowShortSecrets.
	if _, err := handler.NewReader(handler.ReaderConfig{Auth: e.a, BetterAuth: &handler.BetterAuthCookies{}}); err != nil {
		t.Error(err)
	}
	if _, err := handler.NewReader(handler.ReaderConfig{AllowShortSecrets: true, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{"short"}, CookieCache: handler.CookieCacheCompact}}); err != nil {
		t.Error(err)
	}
	if _, err := handler.New(handler.Config{Auth: e.a, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}}}); err != nil {
		t.Error(err)
	}
	jwtEnv := newEnv(t, envOpts{strategy: auth.StrategyJWT, providers: noProviders})
	if _, err := handler.New(handler.Config{Auth: jwtEnv.a, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{good}}}); err == nil {
		t.Error("a JWT-session handler took BetterAuth")
	}
}

// baApp runs testdata/betterauth-app.mjs: Better Auth's own betterAuth()
// on its memory adapter, one app (its own database) per input, all in one
// Node process.
func baApp(t *testing.T, apps ...baAppIn) []baAppOut {
	t.Helper()
	var out []baAppOut
	runBetterAuthNode(t, "betterauth-app.mjs", apps, &out)
	if len(out) != len(apps) {
		t.Fatalf("betterauth-app.mjs answered %d apps of %d", len(out), len(apps))
	}
	for i := range apps {
		if len(out[i].Answers) != len(apps[i].Requests) {
			t.Fatalf("betterauth-app.mjs answered %d responses to %d requests", len(out[i].Answers), len(apps[i].Requests))
		}
	}
	return out
}

type baAppIn struct {
	Secret      string           `json:"secret"`
	Secrets     []map[string]any `json:"secrets,omitempty"` // Better Auth's secrets option: version, value
	BaseURL     string           `json:"baseURL"`
	CookieCache map[string]any   `json:"cookieCache,omitempty"`
	Seed        map[string][]any `json:"seed,omitempty"`
	Requests    []baAppReq       `json:"requests"`
}

type baAppReq struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Cookie string `json:"cookie,omitempty"`
	Body   any    `json:"body,omitempty"`
	// CookiesFrom, when set, sends the cookies the answer to that
	// request set instead of Cookie.
	CookiesFrom *int `json:"cookiesFrom,omitempty"`
}

type baAppOut struct {
	Answers []struct {
		Status     int
		SetCookies []string
		Body       string
	}
	DB struct {
		User    []baUser
		Session []baSession
	}
}

// cookiesOf returns the name=value pairs of Set-Cookie lines that set a
// value (not the ones deleting a cookie).
func cookiesOf(setCookies []string) []string {
	var out []string
	for _, sc := range setCookies {
		if nv, _, _ := strings.Cut(sc, ";"); !strings.HasSuffix(nv, "=") {
			out = append(out, nv)
		}
	}
	return out
}

// A Go service reads the session Better Auth signs in, in each cookie
// cache strategy, with no store; and Better Auth's getSession agrees.
func TestBetterAuthAppCookiesReadByReader(t *testing.T) {
	const baSecret = "better-auth-app-secret-0123456789abcdef"
	strategies := []handler.CookieCacheStrategy{handler.CookieCacheCompact, handler.CookieCacheJWT, handler.CookieCacheJWE}
	signUp := baAppReq{Method: "POST", Path: "/sign-up/email", Body: map[string]any{"email": "Grace@Example.com", "password": "correct horse battery", "name": "Grace Hopper"}}
	// Better Auth's own getSession reads the cookies it set.
	getSession := baAppReq{Method: "GET", Path: "/get-session", CookiesFrom: ptr(0)}
	var apps []baAppIn
	for _, strategy := range strategies {
		apps = append(apps, baAppIn{Secret: baSecret, BaseURL: "http://localhost:3000", CookieCache: map[string]any{"strategy": strategy}, Requests: []baAppReq{signUp, getSession}})
	}
	outs := baApp(t, apps...)
	jweCookies := ""
	for i, strategy := range strategies {
		t.Run(string(strategy), func(t *testing.T) {
			out := outs[i]
			res := out.Answers[0]
			cookies := cookiesOf(res.SetCookies)
			if res.Status != 200 || len(cookies) < 2 || len(out.DB.User) != 1 || len(out.DB.Session) != 1 {
				t.Fatalf("Better Auth's sign-up: %d %v %s", res.Status, res.SetCookies, res.Body)
			}
			if strategy == handler.CookieCacheJWE {
				jweCookies = strings.Join(cookies, "; ")
			}
			rd := baReader(t, handler.ReaderConfig{BetterAuth: &handler.BetterAuthCookies{Secrets: []string{baSecret}, CookieCache: strategy}})
			s, err := rd.Session(cookieRequest(cookies...))
			wantBASession(t, s, err, out.DB.User[0], out.DB.Session[0])

			// Better Auth's getSession answered the same user from the
			// same cookies.
			var got struct {
				User    baUser
				Session baSession
			}
			if err := json.Unmarshal([]byte(out.Answers[1].Body), &got); err != nil || s == nil || got.User.ID != s.User.ID || got.User.Email != *s.User.Email || !got.Session.ExpiresAt.Equal(s.Expires) {
				t.Errorf("Better Auth's getSession answered %s (%v); the Reader %v", out.Answers[1].Body, err, s)
			}
		})
	}
	if jweCookies == "" {
		return
	}
	// A rotation of the newest secret signs the session out, in Better
	// Auth (its secrets option, the old one second) as in the Reader,
	// though the old secret still opens a jwe cache.
	const newer = "better-auth-app-secret-rotated-0123456789"
	rotated := baApp(t, baAppIn{Secret: baSecret, Secrets: []map[string]any{{"version": 2, "value": newer}, {"version": 1, "value": baSecret}},
		BaseURL: "http://localhost:3000", CookieCache: map[string]any{"strategy": "jwe"},
		Requests: []baAppReq{{Method: "GET", Path: "/get-session", Cookie: jweCookies}}})
	if rotated[0].Answers[0].Body != "null" {
		t.Errorf("Better Auth after a rotation answered %s", rotated[0].Answers[0].Body)
	}
	rd := baReader(t, handler.ReaderConfig{BetterAuth: &handler.BetterAuthCookies{Secrets: []string{newer, baSecret}, CookieCache: handler.CookieCacheJWE}})
	if s, err := rd.Session(cookieRequest(strings.Split(jweCookies, "; ")...)); s != nil || err != nil {
		t.Errorf("the Reader after a rotation: %v, %v", s, err)
	}
}

// A Handler with BetterAuth signs a user in with a session cookie that
// Better Auth's getSession accepts (its memory adapter seeded with the
// session the handler stored), and reads Better Auth's own cookie back.
func TestBetterAuthAcceptsHandlerSession(t *testing.T) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{
		providers: func(t *testing.T, base string) []provider.Provider { return []provider.Provider{smtp.emailProvider(t)} },
		config:    func(c *handler.Config) { c.BetterAuth = &handler.BetterAuthCookies{} }, // the Auth's secret
	})
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"ada@example.com"}})
	wantStatus(t, res, http.StatusSeeOther)
	res = e.get(smtp.link(t))
	wantStatus(t, res, http.StatusFound)
	c := setCookie(res, "better-auth.session_token")
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || setCookie(res, "authjs.session-token") != nil {
		t.Fatalf("session cookie %v: want Better Auth's, HttpOnly, Lax, and no Auth.js cookie", c)
	}
	snap := e.store.Snapshot()
	if len(snap.Sessions) != 1 || len(snap.Users) != 1 || !strings.HasPrefix(c.Value, snap.Sessions[0].SessionToken+".") {
		t.Fatalf("stored %v; cookie %q: want the stored token, signed", snap.Sessions, c.Value)
	}
	st, u := snap.Sessions[0], snap.Users[0]
	// The handler reads its cookie back: /session and Require.
	if s := e.session(); s["user"].(map[string]any)["email"] != "ada@example.com" {
		t.Errorf("/session answered %v", s)
	}

	now := e.clock.Now().UTC().Format(time.RFC3339Nano)
	seed := map[string][]any{
		"user": {map[string]any{"id": u.ID, "email": u.Email, "name": "Ada", "emailVerified": true, "createdAt": now, "updatedAt": now}},
		"session": {map[string]any{"id": "s-" + u.ID, "token": st.SessionToken, "userId": u.ID,
			"expiresAt": st.Expires.UTC().Format(time.RFC3339Nano), "createdAt": now, "updatedAt": now}},
	}
	cookie := c.Name + "=" + c.Value
	tampered := c.Name + "=" + string(c.Value[0]^1) + c.Value[1:]
	// Without a cookie cache, and with one (whose cookie the handler does
	// not write: Better Auth then reads its table).
	caches := []map[string]any{nil, {"strategy": "compact"}}
	var apps []baAppIn
	for _, cache := range caches {
		apps = append(apps, baAppIn{Secret: secret, BaseURL: "http://localhost:3000", CookieCache: cache, Seed: seed, Requests: []baAppReq{
			{Method: "GET", Path: "/get-session", Cookie: cookie},
			{Method: "GET", Path: "/get-session", Cookie: tampered},
		}})
	}
	for i, out := range baApp(t, apps...) {
		cache := caches[i]
		var got struct{ User baUser }
		if err := json.Unmarshal([]byte(out.Answers[0].Body), &got); err != nil || got.User.ID != u.ID || got.User.Email != "ada@example.com" {
			t.Errorf("cache %v: Better Auth's getSession answered %d %s for the handler's cookie", cache, out.Answers[0].Status, out.Answers[0].Body)
		}
		if out.Answers[1].Body != "null" {
			t.Errorf("cache %v: Better Auth took a tampered cookie: %s", cache, out.Answers[1].Body)
		}
	}

	// Another browser presenting the cookie is signed in with the handler
	// too.
	req, _ := http.NewRequest("GET", e.base+"/session", nil)
	req.Header.Set("Cookie", cookie)
	if body := e.do(e.newClient(), req).body; !strings.Contains(body, `"email":"ada@example.com"`) {
		t.Errorf("the handler's /session with the cookie answered %s", body)
	}

	// Signing out clears it and a cookie cache the app left, and the
	// session is gone for both.
	srv, _ := url.Parse(e.srv.URL)
	e.client.Jar.SetCookies(srv, []*http.Cookie{{Name: "better-auth.session_data", Value: "cache", Path: "/"}})
	res = e.post("/auth/signout", url.Values{"csrfToken": {e.csrf()}})
	wantStatus(t, res, http.StatusSeeOther)
	if c := setCookie(res, "better-auth.session_token"); c == nil || c.MaxAge >= 0 {
		t.Errorf("sign-out left the cookie: %v", c)
	}
	if c := setCookie(res, "better-auth.session_data"); c == nil || c.MaxAge >= 0 {
		t.Errorf("sign-out left the cookie cache: %v", c)
	}
	if len(e.store.Snapshot().Sessions) != 0 {
		t.Error("sign-out left the stored session")
	}
}

// FuzzBetterAuthSessionToken presents arbitrary session cookie values to a
// Reader whose store holds one session Better Auth made: none panics, and
// a value that reads as signed in names that session's user.
func FuzzBetterAuthSessionToken(f *testing.F) {
	cases := loadBAFixture(f)
	c := cases["none"]
	store := memoryStore()
	ctx := context.Background()
	if _, err := store.CreateUser(ctx, core.User{ID: c.User.ID, Email: c.User.Email, Name: &c.User.Name}); err != nil {
		f.Fatal(err)
	}
	if _, err := store.CreateSession(ctx, core.Session{SessionToken: c.Session.Token, UserID: c.User.ID, Expires: time.Now().Add(24 * time.Hour)}); err != nil {
		f.Fatal(err)
	}
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: "http://app.example/auth"})
	if err != nil {
		f.Fatal(err)
	}
	rd := baReader(f, handler.ReaderConfig{Auth: a, BetterAuth: &handler.BetterAuthCookies{Secrets: []string{c.Secret}}})
	name, value, _ := strings.Cut(c.cookie("session_token"), "=")
	f.Add(value)
	f.Add(c.Session.Token)
	f.Add(strings.ReplaceAll(value, "%3D", "="))
	f.Add(value + "%")
	f.Add(".")
	f.Add(strings.Repeat("a.", 40) + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("GET", "/api/x", nil)
		r.Header.Set("Cookie", name+"="+v)
		s, err := rd.Session(r)
		if err != nil {
			t.Fatalf("Session: %v", err)
		}
		if s != nil && s.User.ID != c.User.ID {
			t.Fatalf("cookie %q read as %q's session", v, s.User.ID)
		}
	})
}

// FuzzBetterAuthCookieCache presents arbitrary cookie caches, beside a
// valid session cookie, to Readers of each strategy without a store: none
// panics, and a cache that reads names the session cookie's user.
func FuzzBetterAuthCookieCache(f *testing.F) {
	cases := loadBAFixture(f)
	strategies := []string{"compact", "jwt", "jwe"}
	readers := map[string]*handler.Reader{}
	for _, name := range strategies {
		c := cases[name]
		readers[name] = baReader(f, handler.ReaderConfig{
			BetterAuth: &handler.BetterAuthCookies{Secrets: []string{c.Secret}, CookieCache: c.Strategy},
			Now:        func() time.Time { return c.at().Add(time.Second) },
		})
	}
	for i := range strategies {
		for _, other := range []string{"compact", "jwt", "jwe", "compact-escapes"} {
			_, v, _ := strings.Cut(cases[other].data()[0], "=")
			f.Add(uint8(i), v)
		}
	}
	f.Add(uint8(0), "eyJzZXNzaW9uIjp7fSwiZXhwaXJlc0F0IjoxLCJzaWduYXR1cmUiOiIifQ")
	f.Add(uint8(1), "eyJhbGciOiJIUzI1NiJ9.e30.")
	f.Add(uint8(2), "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0..AAAA.AAAA.AAAA")
	f.Fuzz(func(t *testing.T, which uint8, v string) {
		name := strategies[int(which)%len(strategies)]
		c := cases[name]
		r := httptest.NewRequest("GET", "/api/x", nil)
		r.Header.Set("Cookie", c.cookie("session_token")+"; better-auth.session_data="+v)
		s, err := readers[name].Session(r)
		if err != nil {
			t.Fatalf("Session: %v", err)
		}
		if s != nil && (s.User.ID != c.User.ID || *s.User.Email != c.User.Email) {
			t.Fatalf("cache %q read as %q's session", v, s.User.ID)
		}
	})
}

// A session read from Better Auth's cookie cache has no authentication
// time: RequireFresh sends it to re-authenticate, while Require lets it
// through.
func TestBetterAuthCacheSessionStepUp(t *testing.T) {
	c := loadBAFixture(t)["jwe"]
	rd := baReader(t, handler.ReaderConfig{
		BetterAuth: &handler.BetterAuthCookies{Secrets: []string{c.Secret}, CookieCache: c.Strategy},
		Now:        func() time.Time { return c.at().Add(time.Second) },
	})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	cookies := append([]string{c.cookie("session_token")}, c.data()...)
	w := httptest.NewRecorder()
	rd.Require(ok).ServeHTTP(w, cookieRequest(cookies...))
	if w.Code != http.StatusNoContent {
		t.Errorf("Require: %d", w.Code)
	}
	w = httptest.NewRecorder()
	rd.RequireFresh(auth.StepUp{MaxAge: 24 * time.Hour})(ok).ServeHTTP(w, cookieRequest(cookies...))
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Get("WWW-Authenticate"), "insufficient_user_authentication") {
		t.Errorf("RequireFresh: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}
