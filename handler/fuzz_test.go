package handler_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// FuzzServeHTTP sends arbitrary requests to the routes: none panics, none
// redirects off the site, and only the error page of Configuration answers
// 500.
func FuzzServeHTTP(f *testing.F) {
	email := provider.Email("a@example.com", func(context.Context, provider.VerificationRequest) error { return nil })
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{credentials(), email},
		Secrets: []string{secret}, BaseURL: "http://app.example/auth", Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		f.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("GET", "/auth/signin?callbackUrl=%2F%2Fevil.example", "", "")
	f.Add("POST", "/auth/callback/credentials", "csrfToken=x&username=ada&password=lovelace&callbackUrl=https://evil.example", "authjs.csrf-token=x|y")
	f.Add("POST", "/auth/signin/email", "email=a%40b.c&csrfToken=", "authjs.callback-url=https%3A%2F%2Fevil.example")
	f.Add("GET", "/auth/callback/email?token=t&email=a%40b.c&callbackUrl=javascript:alert(1)", "", "")
	f.Add("POST", "/auth/session", `{"csrfToken":1}`, "authjs.session-token.0=abc")
	f.Add("GET", "/auth/%2e%2e/x", "", "")
	f.Add("GET", "/auth/signin/email?callbackUrl=%2F%2Fevil.example&action=register", "", "")
	f.Add("HEAD", "/auth/signin/credentials", "", "")
	f.Add("GET", "/auth/signin/%00nope", "", "")
	f.Add("GET", "/elsewhere/signin", "", "")
	f.Fuzz(func(t *testing.T, method, target, body, cookie string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(method, " \t\r\n") || method == "" {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		w := serveFuzzed(h, method, u, target, body, cookie)
		if loc := w.Header().Get("Location"); loc != "" && !strings.HasPrefix(loc, "http://app.example/") && !strings.HasPrefix(loc, "/") {
			t.Fatalf("%s %s redirected to %q", method, target, loc)
		}
		if strings.HasPrefix(w.Header().Get("Location"), "//") {
			t.Fatalf("%s %s redirected to %q", method, target, w.Header().Get("Location"))
		}
		if w.Code >= 500 && !(strings.HasPrefix(u.Path, "/auth/error") && u.Query().Get("error") == "Configuration") {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		_ = http.StatusOK
	})
}

// FuzzServeHTTPWithCallbacks sends arbitrary requests to handlers whose
// application set the JWT, Session and Redirect callbacks and the events,
// with database and JWT sessions: the session cookie read as a database
// token (the reading core/auth's FuzzSessionToken covered before cookies
// moved to the handler), POST /session's update data handed to the JWT
// callback, every callbackUrl through the Redirect policy. None panics, none
// answers 500, none redirects anywhere the policy did not allow.
func FuzzServeHTTPWithCallbacks(f *testing.F) {
	callbacks := auth.Callbacks{
		JWT: func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
			if m, ok := p.Update.(map[string]any); ok {
				p.Token["role"] = m["role"]
			}
			return p.Token, nil
		},
		Session: func(_ context.Context, p auth.SessionParams) (map[string]any, error) {
			p.Session["role"] = p.Token["role"]
			return p.Session, nil
		},
		Redirect: func(_ context.Context, p auth.RedirectParams) (string, bool) {
			if strings.HasPrefix(p.URL, "https://app.example.com/") {
				return p.URL, true
			}
			return handler.SafeRedirect(p.URL, p.Origin)
		},
	}
	events := auth.Events{Session: func(context.Context, auth.SessionEvent) error { return errors.New("metrics down") }}
	var handlers []*handler.Handler
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		email := provider.Email("a@example.com", func(context.Context, provider.VerificationRequest) error { return nil })
		a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{email},
			Secrets: []string{"fuzz-secret-0123456789abcdef0123456789"}, BaseURL: "http://app.example/auth",
			Session: auth.SessionOptions{Strategy: strategy}, Callbacks: callbacks, Events: events})
		if err != nil {
			f.Fatal(err)
		}
		h, err := handler.New(handler.Config{Auth: a, MultiSession: 3, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
		if err != nil {
			f.Fatal(err)
		}
		handlers = append(handlers, h)
	}
	f.Add(false, "POST", "/auth/session", `{"csrfToken":"x","data":{"role":"admin"}}`, "authjs.csrf-token=x|y; authjs.session-token=abc")
	f.Add(true, "POST", "/auth/session", `{"csrfToken":"x","data":[1,{"role":null}]}`, "authjs.session-token.0=abc; authjs.session-token.1=def")
	f.Add(false, "GET", "/auth/session", "", "authjs.session-token= \t")
	f.Add(false, "GET", "/auth/session", "", "__Secure-authjs.session-token=abc; authjs.session-token=\x00")
	f.Add(true, "POST", "/auth/signout", "csrfToken=x&callbackUrl=https://app.example.com/x", "authjs.csrf-token=x|y")
	f.Add(false, "GET", "/auth/signin?callbackUrl=https%3A%2F%2Fapp.example.com.evil%2F", "", "authjs.callback-url=https%3A%2F%2Fapp.example.com%2Fok")
	f.Add(false, "POST", "/auth/sessions/revoke", `{"csrfToken":"x","id":["a"]}`, "authjs.csrf-token=x|y; authjs.session-token=abc")
	f.Add(false, "POST", "/auth/sessions/revoke-all", "csrfToken=x&id=%00", "authjs.csrf-token=x|y; authjs.session-token=abc")
	f.Add(false, "GET", "/auth/sessions", "", "authjs.session-token=abc")
	f.Add(false, "POST", "/auth/accounts/switch", `{"csrfToken":"x","id":"abc"}`, "authjs.session-token=abc; authport.other-sessions=a..b.abc.\x00")
	f.Add(true, "GET", "/auth/accounts", "", "authport.other-sessions=abc")
	f.Fuzz(func(t *testing.T, jwtSessions bool, method, target, body, cookie string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(method, " \t\r\n") || method == "" {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		h := handlers[0]
		if jwtSessions {
			h = handlers[1]
		}
		w := serveFuzzed(h, method, u, target, body, cookie)
		loc := w.Header().Get("Location")
		if loc != "" && !strings.HasPrefix(loc, "http://app.example/") && !strings.HasPrefix(loc, "https://app.example.com/") &&
			(!strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//")) {
			t.Fatalf("%s %s redirected to %q", method, target, loc)
		}
		if w.Code >= 500 && !(strings.HasPrefix(u.Path, "/auth/error") && u.Query().Get("error") == "Configuration") {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
	})
}

// serveFuzzed sends h a request for target (parsed as u) with the method,
// body (JSON when it starts with "{", else a form) and Cookie header, and
// returns the recorded response.
func serveFuzzed(h http.Handler, method string, u *url.URL, target, body, cookie string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "http://app.example/", strings.NewReader(body))
	r.Method, r.URL, r.RequestURI = method, u, target
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if strings.HasPrefix(body, "{") {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("Cookie", cookie)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
