package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	"github.com/authport/authport/core/provider"
)

// TestChi signs in by e-mail through the chi router on bbolt and reads the
// session in both groups: the home page (Middleware) and /account
// (Require), signed out and signed in.
func TestChi(t *testing.T) {
	store, err := bboltadapter.Open(t.Context(), filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	links := make(chan string, 1)
	srv := httptest.NewServer(nil) // its handler is set below, once the URL is known
	defer srv.Close()
	env := map[string]string{
		"AUTH_SECRET": "chi-example-secret-0123456789-0123456789", "AUTH_URL": srv.URL,
		"AUTH_GITHUB_ID": "chi-github-id", "AUTH_GITHUB_SECRET": "chi-github-secret",
	}
	h, err := newAuth(store, func(k string) string { return env[k] }, func(_ context.Context, r provider.VerificationRequest) error {
		links <- r.URL
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = router(h)

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	body := func(res *http.Response) string {
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	get := func(path, accept string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept", accept)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	if b := body(get("/", "text/html")); !strings.Contains(b, "guest") {
		t.Fatalf("home signed out: %q", b)
	}
	if res := get("/account", "application/json"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/account signed out, API call: %d; want 401", res.StatusCode)
	}
	var csrf struct{ CSRFToken string }
	if err := json.Unmarshal([]byte(body(get("/auth/csrf", "application/json"))), &csrf); err != nil {
		t.Fatal(err)
	}
	res, err := c.PostForm(srv.URL+"/auth/signin/email", url.Values{"email": {"grace@example.com"}, "csrfToken": {csrf.CSRFToken}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	link := <-links
	u, _ := url.Parse(link)
	if res := get(u.RequestURI(), "text/html"); res.StatusCode/100 != 3 || strings.Contains(res.Header.Get("Location"), "error") {
		t.Fatalf("following the link: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if b := body(get("/", "text/html")); !strings.HasPrefix(b, "Hello, user ") {
		t.Errorf("home signed in: %q", b)
	}
	if b := body(get("/account", "text/html")); b != "Signed in as grace@example.com\n" {
		t.Errorf("/account signed in: %q", b)
	}
}

// TestChiPortDefault checks that, with PORT set and AUTH_URL unset, the
// links the handler gives out use PORT, the port the example listens on.
func TestChiPortDefault(t *testing.T) {
	store, err := bboltadapter.Open(t.Context(), filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	env := map[string]string{
		"PORT": "3000", "AUTH_SECRET": "chi-example-secret-0123456789-0123456789",
		"AUTH_GITHUB_ID": "chi-github-id", "AUTH_GITHUB_SECRET": "chi-github-secret",
	}
	h, err := newAuth(store, func(k string) string { return env[k] }, func(context.Context, provider.VerificationRequest) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	router(h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost:3000/auth/providers", nil))
	var ps map[string]struct {
		SigninURL string `json:"signinUrl"`
	}
	if err := json.NewDecoder(rec.Body).Decode(&ps); err != nil {
		t.Fatalf("/auth/providers: %d, %v", rec.Code, err)
	}
	if got, want := ps["email"].SigninURL, "http://localhost:3000/auth/signin/email"; got != want {
		t.Errorf("email signinUrl = %q; want %q", got, want)
	}
}
