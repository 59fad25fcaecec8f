package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// The logger sees failures, never a secret, token or link.
func TestLogsHoldNoSecrets(t *testing.T) {
	var logs coretest.SyncBuffer
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{
		providers: func(t *testing.T, base string) []provider.Provider { return []provider.Provider{smtp.emailProvider(t)} },
		config: func(c *handler.Config) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		},
	})
	csrf := e.csrf()
	e.post("/auth/signin/email", url.Values{"csrfToken": {csrf}, "email": {"ada@example.com"}})
	link := smtp.link(t)
	token := mustQuery(t, link, "token")
	e.get(link)
	e.get(link) // reused: Verification, logged
	e.post("/auth/signin/email", url.Values{"csrfToken": {csrf}, "email": {"bad address"}})
	e.post("/auth/signout", url.Values{"csrfToken": {"wrong"}})
	u, _ := url.Parse(e.srv.URL)
	var session string
	for _, c := range e.client.Jar.Cookies(u) {
		if c.Name == "authjs.session-token" {
			session = c.Value
		}
	}
	out := logs.String()
	if !strings.Contains(out, "Verification") || !strings.Contains(out, "EmailSignin") {
		t.Errorf("failures not logged:\n%s", out)
	}
	for name, s := range map[string]string{"secret": secret, "csrf token": csrf, "e-mail token": token, "session token": session, "link": link} {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("the log holds the %s:\n%s", name, out)
		}
	}
}

func mustQuery(t *testing.T, raw, key string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get(key)
}

// POST /session (Auth.js's update) re-issues the JWT at once; JSON body
// carries the CSRF token.
func TestSessionUpdate(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	e.signInCredentials("ada", "lovelace", nil)
	body, _ := json.Marshal(map[string]any{"csrfToken": e.csrf(), "data": map[string]any{"x": 1}})
	req, _ := http.NewRequest("POST", e.base+"/session", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res := e.do(nil, req)
	wantStatus(t, res, 200)
	wantHeader(t, res, "Content-Type", "application/json")
	if setCookie(res, "authjs.session-token") == nil || !strings.Contains(res.body, `"email":"ada@example.com"`) {
		t.Errorf("POST /session: %s %v", res.body, res.Header["Set-Cookie"])
	}
	req, _ = http.NewRequest("POST", e.base+"/session", strings.NewReader(`{"csrfToken":"nope"}`))
	req.Header.Set("Content-Type", "application/json")
	res = e.do(nil, req)
	wantStatus(t, res, 400)
	if res.body != "null" || setCookie(res, "authjs.session-token") != nil {
		t.Errorf("refused update: %s %v", res.body, res.Header["Set-Cookie"])
	}
}

// Many browsers at once: each gets its own session, under -race.
func TestConcurrentSignIns(t *testing.T) {
	// 16 browsers on one address signing in as one user: more than the
	// default rate limits allow (tested in ratelimit_test.go).
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, config: func(c *handler.Config) { c.RateLimit.Disabled = true }})
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.newClient()
			get := func(path string) string {
				res, err := c.Get(e.srv.URL + path)
				if err != nil {
					errs <- err.Error()
					return ""
				}
				defer res.Body.Close()
				var b bytes.Buffer
				b.ReadFrom(res.Body)
				return b.String()
			}
			var tok struct{ CSRFToken string }
			json.Unmarshal([]byte(get("/auth/csrf")), &tok)
			res, err := c.PostForm(e.base+"/callback/credentials", url.Values{"csrfToken": {tok.CSRFToken}, "username": {"ada"}, "password": {"lovelace"}})
			if err != nil {
				errs <- err.Error()
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther {
				errs <- res.Status
				return
			}
			if s := get("/auth/session"); !strings.Contains(s, "ada@example.com") {
				errs <- "session " + s
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Without a Logger, failed sign-ins go to slog.Default() at WARN, with the
// error code and the reason, so that they are not silent by default.
func TestFailedSignInLoggedByDefault(t *testing.T) {
	var logs coretest.SyncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{
		providers: func(t *testing.T, base string) []provider.Provider { return []provider.Provider{smtp.emailProvider(t)} },
	})
	csrf := e.csrf()
	e.post("/auth/signin/email", url.Values{"csrfToken": {csrf}, "email": {"ada@example.com"}})
	link := smtp.link(t)
	e.get(link)
	e.get(link) // used already: Verification
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "sign-in failed") || !strings.Contains(out, "error_code=Verification") {
		t.Errorf("the failed sign-in is not in slog.Default() at WARN:\n%s", out)
	}
	if token := mustQuery(t, link, "token"); strings.Contains(out, token) || strings.Contains(out, secret) {
		t.Errorf("the log holds the token or the secret:\n%s", out)
	}
}

// A handler mounted elsewhere than its BaseURL says answers 404 naming both,
// and logs it once, at the first request.
func TestMountMismatch(t *testing.T) {
	var logs coretest.SyncBuffer
	email := provider.Email("a@example.com", func(context.Context, provider.VerificationRequest) error { return nil })
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{email},
		Secrets: []string{secret}, BaseURL: "http://localhost:8080/auth"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/auth/", h) // BaseURL says /auth
	for range 2 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", "http://localhost:8080/api/auth/providers", nil))
		if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "/api/auth/providers") || !strings.Contains(w.Body.String(), "http://localhost:8080/auth") {
			t.Fatalf("%d %s; want 404 naming the request's path and the BaseURL", w.Code, w.Body)
		}
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), "BaseURL http://localhost:8080/auth") {
		t.Errorf("%d ERROR records, want 1 naming the BaseURL:\n%s", n, logs.String())
	}
}

// A request on another host than BaseURL's (a wrong port) is served as
// before, and a WARN record, once, names the request's host and the
// BaseURL; a request on BaseURL's host (or forwarded from it) logs
// nothing.
func TestOriginMismatch(t *testing.T) {
	newHandler := func(logs *coretest.SyncBuffer) http.Handler {
		t.Helper()
		email := provider.Email("a@example.com", func(context.Context, provider.VerificationRequest) error { return nil })
		a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{email},
			Secrets: []string{secret}, BaseURL: "http://localhost:3000/auth"})
		if err != nil {
			t.Fatal(err)
		}
		h, err := handler.New(handler.Config{Auth: a, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	get := func(h http.Handler, target string, header http.Header) {
		t.Helper()
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", target, nil)
		maps.Copy(r.Header, header)
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"email"`) {
			t.Fatalf("GET %s: %d %s; want the providers", target, w.Code, w.Body)
		}
	}

	var logs coretest.SyncBuffer
	h := newHandler(&logs)
	get(h, "http://localhost:3000/auth/providers", nil)
	get(h, "http://localhost:80/auth/providers", http.Header{"X-Forwarded-Host": {"localhost:3000"}})
	if logs.String() != "" {
		t.Fatalf("requests on BaseURL's host logged:\n%s", logs.String())
	}
	for range 2 {
		get(h, "http://localhost:8080/auth/providers", nil)
	}
	get(h, "http://127.0.0.1:3000/auth/providers", nil)
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 {
		t.Errorf("%d WARN records, want 1:\n%s", n, out)
	}
	for _, want := range []string{"localhost:8080", "/auth/providers", "BaseURL is http://localhost:3000/auth", "AUTH_URL", "http://localhost:8080/auth"} {
		if !strings.Contains(out, want) {
			t.Errorf("the warning does not name %q:\n%s", want, out)
		}
	}

	// Default ports and letter case are the same host.
	var quiet coretest.SyncBuffer
	h = newHandler(&quiet)
	get(h, "http://LOCALHOST:3000/auth/providers", nil)
	if quiet.String() != "" {
		t.Errorf("the same host in capitals logged:\n%s", quiet.String())
	}
}
