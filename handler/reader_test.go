package handler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
	"github.com/authport/authport/jwt/jwttest"
)

// The Auth.js interop tests run Auth.js's own @auth/core/jwt through the
// jwt module's harness (jwttest, installed with npm ci in jwt/interop).

// authjs runs reqs through Auth.js's own @auth/core/jwt, failing t when
// Auth.js refuses one.
func authjs(t *testing.T, reqs ...jwttest.Request) []jwttest.Result {
	t.Helper()
	res := jwttest.AuthJS(t, filepath.Join("..", "jwt", "interop"), reqs...)
	for i, r := range res {
		if r.Error != "" {
			t.Fatalf("Auth.js %s: %s", reqs[i].Op, r.Error)
		}
	}
	return res
}

// A Go API behind a Next.js app reads the session cookie Auth.js minted,
// whole or in chunks, with the same secret.
func TestReaderReadsAuthjsCookies(t *testing.T) {
	const authSecret = "next-app-auth-secret-0123456789a"
	claims := map[string]any{"name": "Grace Hopper", "email": "grace@example.com", "picture": "https://img.example/g.png", "sub": "user-grace"}
	big := map[string]any{"sub": "user-big", "email": "big@example.com", "blob": strings.Repeat("x", 9000)}
	maxAge := 3600
	res := authjs(t,
		jwttest.Request{Op: "encode", Secret: authSecret, Salt: "authjs.session-token", Claims: claims, MaxAge: &maxAge},
		jwttest.Request{Op: "encode", Secret: authSecret, Salt: "__Secure-authjs.session-token", Claims: claims, MaxAge: &maxAge},
		jwttest.Request{Op: "encode", Secret: authSecret, Salt: "authjs.session-token", Claims: big, MaxAge: &maxAge},
	)
	chunked := authjs(t, jwttest.Request{Op: "chunk", CookieName: "authjs.session-token", Value: res[2].Token})[0].Cookies
	if len(chunked) < 2 {
		t.Fatalf("Auth.js did not chunk a %d-character token: %v", len(res[2].Token), chunked)
	}

	plain, err := handler.NewReader(handler.ReaderConfig{Secrets: []string{authSecret}})
	if err != nil {
		t.Fatal(err)
	}
	secure, err := handler.NewReader(handler.ReaderConfig{Secrets: []string{"rotated-newer-0123456789abcdefgh", authSecret}, Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	req := func(cookies ...*http.Cookie) *http.Request {
		r := httptest.NewRequest("GET", "/api/x", nil)
		for _, c := range cookies {
			r.AddCookie(c)
		}
		return r
	}
	s, err := plain.Session(req(&http.Cookie{Name: "authjs.session-token", Value: res[0].Token}))
	if err != nil || s == nil {
		t.Fatalf("Session = %v, %v", s, err)
	}
	if s.User.ID != "user-grace" || *s.User.Name != "Grace Hopper" || *s.User.Email != "grace@example.com" || *s.User.Image != "https://img.example/g.png" {
		t.Errorf("session user %+v", s.User)
	}
	if d := time.Until(s.Expires); d < 59*time.Minute || d > time.Hour+time.Minute {
		t.Errorf("expires %v, want in an hour", s.Expires)
	}
	js, _ := json.Marshal(s)
	if want := `{"user":{"name":"Grace Hopper","email":"grace@example.com","image":"https://img.example/g.png"},"expires":"`; !strings.HasPrefix(string(js), want) {
		t.Errorf("session JSON %s", js)
	}
	// The __Secure- cookie, with the secret second in a rotation list.
	if s, err := secure.Session(req(&http.Cookie{Name: "__Secure-authjs.session-token", Value: res[1].Token})); err != nil || s == nil || s.User.ID != "user-grace" {
		t.Errorf("secure reader: %v, %v", s, err)
	}
	// On https, a cookie without the prefix does not count.
	if s, err := secure.Session(req(&http.Cookie{Name: "authjs.session-token", Value: res[0].Token})); err != nil || s != nil {
		t.Errorf("secure reader took an unprefixed cookie: %v, %v", s, err)
	}
	// Chunks, as Auth.js split them.
	var cs []*http.Cookie
	for _, c := range chunked {
		cs = append(cs, &http.Cookie{Name: c.Name, Value: c.Value})
	}
	if s, err := plain.Session(req(cs...)); err != nil || s == nil || s.User.ID != "user-big" || s.Claims["blob"] != big["blob"] {
		t.Errorf("chunked cookie: %v, %v", s, err)
	}
	// Another secret, or a tampered token: signed out, no error.
	other, _ := handler.NewReader(handler.ReaderConfig{Secrets: []string{"another-0123456789abcdefghijklmn"}})
	if s, err := other.Session(req(&http.Cookie{Name: "authjs.session-token", Value: res[0].Token})); s != nil || err != nil {
		t.Errorf("another secret: %v, %v", s, err)
	}
	tampered := res[0].Token[:len(res[0].Token)-3] + "AAA"
	if s, err := plain.Session(req(&http.Cookie{Name: "authjs.session-token", Value: tampered})); s != nil || err != nil {
		t.Errorf("tampered token: %v, %v", s, err)
	}

	// Require in front of a Go API.
	api := plain.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := handler.FromContext(r.Context())
		if !ok {
			t.Error("Require passed a request without a session")
		}
		w.Write([]byte(s.User.ID))
	}))
	w := httptest.NewRecorder()
	api.ServeHTTP(w, req(&http.Cookie{Name: "authjs.session-token", Value: res[0].Token}))
	if w.Code != 200 || w.Body.String() != "user-grace" {
		t.Errorf("signed-in API request: %d %s", w.Code, w.Body)
	}
}

// Auth.js reads the JWT the handler issues.
func TestAuthjsReadsHandlerJWT(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	res := e.signInCredentials("ada", "lovelace", nil)
	c := setCookie(res, "authjs.session-token")
	if c == nil {
		t.Fatal("no session cookie")
	}
	got := authjs(t, jwttest.Request{Op: "decode", Secret: secret, Salt: "authjs.session-token", Token: c.Value})[0].Claims
	if got["sub"] != "user-ada" || got["email"] != "ada@example.com" || got["name"] != "Ada Lovelace" || got["jti"] == nil || got["exp"] == nil {
		t.Errorf("Auth.js decoded %v", got)
	}
}

func TestReaderDatabaseSessions(t *testing.T) {
	e := newEnv(t, envOpts{providers: noProviders})
	u, err := e.store.CreateUser(context.Background(), core.User{ID: "u1", Email: "db@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := e.a.CreateSession(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := handler.NewReader(handler.ReaderConfig{Auth: e.a, SignInURL: "/login"})
	if err != nil {
		t.Fatal(err)
	}
	var seen *handler.Session
	api := rd.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen, _ = handler.FromContext(r.Context()) }))
	r := httptest.NewRequest("GET", "/api/x", nil)
	r.AddCookie(&http.Cookie{Name: "authjs.session-token", Value: sess.SessionToken})
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	if w.Code != 200 || seen == nil || seen.User.ID != "u1" || *seen.User.Email != "db@example.com" || seen.Strategy != auth.StrategyDatabase {
		t.Errorf("database session through Require: %d %+v", w.Code, seen)
	}
	// Not signed in: 401 JSON for an API, 303 to the sign-in page for a page.
	w = httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequest("GET", "/api/x", nil))
	if w.Code != 401 || w.Header().Get("Content-Type") != "application/json" || !strings.Contains(w.Body.String(), `"error":"Unauthorized"`) {
		t.Errorf("API request without session: %d %s %s", w.Code, w.Header(), w.Body)
	}
	page := httptest.NewRequest("GET", "/account?tab=2", nil)
	page.Header.Set("Accept", "text/html,application/xhtml+xml")
	w = httptest.NewRecorder()
	api.ServeHTTP(w, page)
	if w.Code != 303 || w.Header().Get("Location") != "/login?callbackUrl=%2Faccount%3Ftab%3D2" {
		t.Errorf("page request without session: %d Location %q", w.Code, w.Header().Get("Location"))
	}
	if _, err := handler.NewReader(handler.ReaderConfig{Strategy: auth.StrategyDatabase}); err == nil {
		t.Error("NewReader: database sessions without Auth accepted")
	}
	if _, err := handler.NewReader(handler.ReaderConfig{}); err == nil {
		t.Error("NewReader: JWT sessions without secrets accepted")
	}
	_ = jwt.SessionTokenCookie
}

// The handler's own middleware and Require, mounted beside the routes.
func TestHandlerMiddlewareAndRequire(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	res := e.get("/api/me", "Accept", "application/json")
	wantStatus(t, res, 401)
	wantHeader(t, res, "Content-Type", "application/json")
	res = e.get("/api/me", "Accept", "text/html")
	wantStatus(t, res, 303)
	wantLocation(t, e, res, "/auth/signin", "callbackUrl", "/api/me")
	e.signInCredentials("ada", "lovelace", nil)
	res = e.get("/api/me", "Accept", "application/json")
	wantStatus(t, res, 200)
	if !strings.Contains(res.body, `"id":"user-ada"`) || !strings.Contains(res.body, `"email":"ada@example.com"`) {
		t.Errorf("/api/me: %s", res.body)
	}
	s, err := e.h.Session(func() *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		u, _ := http.NewRequest("GET", e.srv.URL, nil)
		for _, c := range e.client.Jar.Cookies(u.URL) {
			r.AddCookie(c)
		}
		return r
	}())
	if err != nil || s == nil || s.User.ID != "user-ada" {
		t.Errorf("Handler.Session: %v, %v", s, err)
	}
}
