package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/oauth/oauthtest"
)

// The application runs end to end: real dex (keeping its state in
// PostgreSQL, which its refresh grant needs), the application on its own
// PostgreSQL database, and HTTP clients that sign in through dex's login
// form.
const (
	clientID     = "webapp"
	clientSecret = "webapp-secret-0123456789-0123456789"
	password     = oauthtest.DefaultDexUserPassword
)

type site struct {
	t      *testing.T
	base   string // http://127.0.0.1:port
	dex    *oauthtest.DexServer
	db     *gorm.DB
	cancel context.CancelFunc
}

func TestWebapp(t *testing.T) {
	s := start(t)

	t.Run("admin signs in, role in the session", func(t *testing.T) {
		c := s.signIn(t, "ada@example.com")
		var session struct {
			User struct{ Email, Role string }
		}
		s.getJSON(t, c, "/auth/session", "", &session)
		if session.User.Email != "ada@example.com" || session.User.Role != "admin" {
			t.Errorf("GET /auth/session = %+v, want ada@example.com with role admin", session)
		}
		if code := s.status(t, c, "/api/admin", ""); code != http.StatusOK {
			t.Errorf("GET /api/admin as an admin: %d, want 200", code)
		}
	})

	t.Run("member is not an admin", func(t *testing.T) {
		c := s.signIn(t, "bob@example.com")
		var me struct{ Email, Role string }
		s.getJSON(t, c, "/api/me", "", &me)
		if me.Role != "member" {
			t.Errorf("GET /api/me = %+v, want role member", me)
		}
		if code := s.status(t, c, "/api/admin", ""); code != http.StatusForbidden {
			t.Errorf("GET /api/admin as a member: %d, want 403", code)
		}
	})

	t.Run("other domains are denied and nothing is written", func(t *testing.T) {
		c, landed := s.trySignIn(t, "mallory@elsewhere.test")
		if !strings.Contains(landed, "error=AccessDenied") {
			t.Errorf("sign-in from another domain landed on %q, want the AccessDenied error page", landed)
		}
		var n int64
		if err := s.db.Table("users").Where("email = ?", "mallory@elsewhere.test").Count(&n).Error; err != nil || n != 0 {
			t.Errorf("users with the denied address: %d (%v), want 0", n, err)
		}
		if code := s.status(t, c, "/api/me", ""); code != http.StatusUnauthorized {
			t.Errorf("GET /api/me after a denied sign-in: %d, want 401", code)
		}
	})

	t.Run("API accepts a bearer token", func(t *testing.T) {
		c := s.signIn(t, "carol@example.com")
		token := sessionToken(t, c, s.base)
		anon := &http.Client{Timeout: 30 * time.Second}
		var me struct{ Email string }
		s.getJSON(t, anon, "/api/me", token, &me)
		if me.Email != "carol@example.com" {
			t.Errorf("GET /api/me with the bearer token = %+v, want carol", me)
		}
		if code := s.status(t, anon, "/api/me", ""); code != http.StatusUnauthorized {
			t.Errorf("GET /api/me without a token: %d, want 401", code)
		}
		if code := s.status(t, anon, "/api/me", "not-a-session"); code != http.StatusUnauthorized {
			t.Errorf("GET /api/me with an unknown token: %d, want 401", code)
		}
	})

	t.Run("provider API with a refreshed token", func(t *testing.T) {
		c := s.signIn(t, "dave@example.com")
		var info struct{ Email string }
		s.getJSON(t, c, "/api/profile", "", &info)
		if info.Email != "dave@example.com" {
			t.Fatalf("GET /api/profile = %+v, want dave's userinfo", info)
		}
		before := s.refreshToken(t, "dave@example.com")
		// The access token expires: the next call refreshes it first.
		if err := s.db.Exec(`UPDATE accounts SET expires_at = 1 WHERE "userId" = (SELECT id FROM users WHERE email = ?)`, "dave@example.com").Error; err != nil {
			t.Fatal(err)
		}
		s.getJSON(t, c, "/api/profile", "", &info)
		if info.Email != "dave@example.com" {
			t.Errorf("GET /api/profile after expiry = %+v, want dave's userinfo", info)
		}
		if after := s.refreshToken(t, "dave@example.com"); after == before || after == "" {
			t.Errorf("refresh token %q after the refresh, was %q: want the one dex rotated to", after, before)
		}
	})
}

// testFreshFor is how fresh /settings wants a session in the tests:
// short, so that a session goes stale without a clock of its own.
const testFreshFor = 2 * time.Second

// start runs dex and the application on a free port.
func start(t *testing.T) *site {
	t.Helper()
	admin := provision.Postgres(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	var users []oauthtest.DexUser
	for _, name := range []string{"ada", "bob", "carol", "dave", "erin"} {
		users = append(users, oauthtest.DexUser{Email: name + "@example.com", Password: password})
	}
	users = append(users, oauthtest.DexUser{Email: "mallory@elsewhere.test", Password: password})
	d := oauthtest.Dex(t, oauthtest.DexConfig{
		Clients:     []oauthtest.DexClient{{ID: clientID, Secret: clientSecret, RedirectURIs: []string{base + "/auth/callback/" + providerID}}},
		Users:       users,
		PostgresURL: oauthtest.PostgresDatabase(t, admin, "authport_webapp_dex_"),
	})
	if d == nil {
		ln.Close()
		t.FailNow()
	}
	appDB := oauthtest.PostgresDatabase(t, admin, "authport_webapp_app_")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app, err := New(ctx, Config{
		DatabaseURL:    appDB,
		BaseURL:        base + "/auth",
		Secrets:        []string{"webapp-test-secret-0123456789-0123456789"},
		Issuer:         d.Issuer,
		ClientID:       clientID,
		ClientSecret:   clientSecret,
		AllowedDomains: []string{"example.com"},
		Admins:         []string{"ada@example.com"},
		FreshFor:       testFreshFor,
	})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	srv := &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		app.Close()
	})
	db, err := gorm.Open(postgres.Open(appDB), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return &site{t: t, base: base, dex: d, db: db}
}

// signIn signs the address in through dex and returns a client holding the
// session cookie.
func (s *site) signIn(t *testing.T, email string) *http.Client {
	t.Helper()
	c, landed := s.trySignIn(t, email)
	if strings.Contains(landed, "error") {
		t.Fatalf("signing in %s landed on %q", email, landed)
	}
	return c
}

// trySignIn runs the sign-in and returns the client and where the browser
// landed after the callback.
func (s *site) trySignIn(t *testing.T, email string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var csrf struct{ CSRFToken string }
	s.getJSON(t, c, "/auth/csrf", "", &csrf)
	res, err := c.PostForm(s.base+"/auth/signin/"+providerID, url.Values{"csrfToken": {csrf.CSRFToken}, "callbackUrl": {s.base + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	authURL := res.Header.Get("Location")
	if !strings.HasPrefix(authURL, s.dex.Issuer) {
		t.Fatalf("POST /auth/signin/%s: %d Location %q, want dex's authorization URL", providerID, res.StatusCode, authURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	back, err := s.dex.Login(ctx, authURL, email, password)
	if err != nil {
		t.Fatalf("dex login as %s: %v", email, err)
	}
	res, err = c.Get(back.String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return c, res.Header.Get("Location")
}

// sessionToken is the session cookie's value, which an API client sends as
// its bearer token.
func sessionToken(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	u, _ := url.Parse(base)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "authjs.session-token" {
			return ck.Value
		}
	}
	t.Fatal("no session cookie after signing in")
	return ""
}

func (s *site) request(t *testing.T, c *http.Client, path, bearer string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	req.Header.Set("Accept", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (s *site) status(t *testing.T, c *http.Client, path, bearer string) int {
	t.Helper()
	res := s.request(t, c, path, bearer)
	res.Body.Close()
	return res.StatusCode
}

func (s *site) getJSON(t *testing.T, c *http.Client, path, bearer string, v any) {
	t.Helper()
	res := s.request(t, c, path, bearer)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// refreshToken is the refresh token stored on the user's account.
func (s *site) refreshToken(t *testing.T, email string) string {
	t.Helper()
	var token string
	err := s.db.Raw(`SELECT refresh_token FROM accounts WHERE "userId" = (SELECT id FROM users WHERE email = ?)`, email).Scan(&token).Error
	if err != nil {
		t.Fatal(err)
	}
	return token
}
