package handler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
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
	f.Fuzz(func(t *testing.T, method, target, body, cookie string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(method, " \t\r\n") || method == "" {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		r := httptest.NewRequest("GET", "http://app.example/", strings.NewReader(body))
		r.Method, r.URL, r.RequestURI = method, u, target
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if strings.HasPrefix(body, "{") {
			r.Header.Set("Content-Type", "application/json")
		}
		r.Header.Set("Cookie", cookie)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
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
