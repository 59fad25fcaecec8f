package oauth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// refreshServer is an in-process token endpoint for refresh_token grants,
// checking client_secret_basic; answer decides each response.
type refreshServer struct {
	srv *httptest.Server

	mu      sync.Mutex
	answer  func(w http.ResponseWriter, refreshToken string)
	got     []string      // refresh tokens received
	release chan struct{} // when set, each request waits for it
}

func newRefreshServer(t *testing.T) *refreshServer {
	t.Helper()
	rs := &refreshServer{answer: func(w http.ResponseWriter, rt string) {
		writeJSON(w, 200, map[string]any{"access_token": "at-" + randomString(), "token_type": "Bearer", "expires_in": 3600,
			"refresh_token": "rt-" + randomString(), "scope": "read"})
	}}
	rs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if err := r.ParseForm(); err != nil || id != fakeClientID || secret != fakeClientSecret || r.PostForm.Get("grant_type") != "refresh_token" {
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
		rs.mu.Lock()
		rs.got = append(rs.got, r.PostForm.Get("refresh_token"))
		answer, release := rs.answer, rs.release
		rs.mu.Unlock()
		if release != nil {
			<-release
		}
		answer(w, r.PostForm.Get("refresh_token"))
	}))
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *refreshServer) requests() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.got)
}

// refreshSetup is an application with an OAuth 2.0 provider "p" whose
// token endpoint is rs.
func refreshSetup(t *testing.T, rs *refreshServer) *setup {
	return newSetup(t, &http.Client{Timeout: 10 * time.Second}, testBase, &provider.OAuth2Config[map[string]any]{
		ID: "p", Name: "P", ClientID: fakeClientID, ClientSecret: fakeClientSecret,
		Authorization: provider.Endpoint{URL: rs.srv.URL + "/authorize"},
		Token:         provider.TokenEndpoint{URL: rs.srv.URL + "/token"},
		Userinfo:      provider.UserinfoEndpoint[map[string]any]{URL: rs.srv.URL + "/userinfo"},
	})
}

// account returns the user's one account in the store.
func account(t *testing.T, s *setup, userID string) core.Account {
	t.Helper()
	list, err := s.store.ListAccountsByUserID(context.Background(), userID)
	if err != nil || len(list) != 1 {
		t.Fatalf("accounts of %s: %v, %v", userID, list, err)
	}
	return list[0]
}

func TestAccessTokenRefresh(t *testing.T) {
	ctx := context.Background()
	rs := newRefreshServer(t)
	s := refreshSetup(t, rs)

	user := linkExpired(t, s, "p", "rt-0")
	at, err := s.flow.AccessToken(ctx, user, "p")
	if err != nil {
		t.Fatal(err)
	}
	acc := account(t, s, user)
	if *acc.AccessToken != at || at == "expired-access-token" || *acc.RefreshToken == "rt-0" || *acc.Scope != "read" ||
		*acc.ExpiresAt < time.Now().Add(59*time.Minute).Unix() || rs.got[0] != "rt-0" {
		t.Errorf("after the refresh: %q, account %+v, server got %v", at, acc, rs.got)
	}
	// Fresh now: no further request.
	if again, err := s.flow.AccessToken(ctx, user, "p"); err != nil || again != at || rs.requests() != 1 {
		t.Errorf("second call: %q, %v, %d requests", again, err, rs.requests())
	}

	// Within TokenExpirySkew of expires_at counts as expired.
	soon := time.Now().Add(oauth.TokenExpirySkew / 2).Unix()
	if _, err := s.store.UpdateAccount(ctx, core.AccountUpdate{Provider: "p", ProviderAccountID: acc.ProviderAccountID, ExpiresAt: core.Set(&soon)}); err != nil {
		t.Fatal(err)
	}
	// The provider answers without refresh_token and expires_in: the
	// stored refresh token stays, and expires_at is cleared (a token
	// without an expiry is used as it is).
	rs.answer = func(w http.ResponseWriter, _ string) {
		writeJSON(w, 200, map[string]any{"access_token": "at-forever", "token_type": "Bearer"})
	}
	before := account(t, s, user)
	if at, err := s.flow.AccessToken(ctx, user, "p"); err != nil || at != "at-forever" {
		t.Fatalf("refresh within the skew: %q, %v", at, err)
	}
	acc = account(t, s, user)
	if acc.ExpiresAt != nil || *acc.RefreshToken != *before.RefreshToken {
		t.Errorf("account %+v: want no expires_at and the refresh token kept", acc)
	}
	if _, err := s.flow.AccessToken(ctx, user, "p"); err != nil || rs.requests() != 2 {
		t.Errorf("a token without expiry was refreshed: %v, %d requests", err, rs.requests())
	}
}

func TestAccessTokenErrors(t *testing.T) {
	ctx := context.Background()
	rs := newRefreshServer(t)
	s := refreshSetup(t, rs)

	if _, err := s.flow.AccessToken(ctx, "nobody", "p"); !errors.Is(err, oauth.ErrNoAccount) || !errors.Is(err, core.ErrNotFound) {
		t.Errorf("user without account: %v", err)
	}
	if _, err := s.flow.AccessToken(ctx, "nobody", "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := s.flow.AccountAccessToken(ctx, core.AccountKey{Provider: "p", ProviderAccountID: "missing"}); !errors.Is(err, oauth.ErrNoAccount) || !errors.Is(err, core.ErrNotFound) {
		t.Errorf("unknown account key: %v", err)
	}

	noRefresh := linkExpired(t, s, "p", "")
	_, err := s.flow.AccessToken(ctx, noRefresh, "p")
	if !errors.Is(err, oauth.ErrNoRefreshToken) || !errors.Is(err, oauth.ErrSignInAgain) || errors.Is(err, oauth.ErrRefresh) || !strings.Contains(err.Error(), "offline_access") {
		t.Errorf("expired without refresh token: %v", err)
	}

	// invalid_grant: the grant is gone; nothing changes.
	rs.answer = func(w http.ResponseWriter, _ string) { tokenError(w, "invalid_grant", "revoked") }
	user := linkExpired(t, s, "p", "rt-revoked")
	before := account(t, s, user)
	_, err = s.flow.AccessToken(ctx, user, "p")
	var te *oauth.TokenError
	if !errors.Is(err, oauth.ErrInvalidGrant) || !errors.Is(err, oauth.ErrSignInAgain) || !errors.Is(err, oauth.ErrRefresh) || !errors.As(err, &te) || te.Code != "invalid_grant" || te.Description != "revoked" {
		t.Errorf("invalid_grant: %v", err)
	}
	if after := account(t, s, user); *after.AccessToken != *before.AccessToken || *after.RefreshToken != "rt-revoked" {
		t.Errorf("a refused refresh changed the account: %+v", after)
	}

	// A server error is ErrRefresh, not ErrInvalidGrant; so is an error
	// answered with 200 (GitHub's way) and an answer without access_token.
	for name, answer := range map[string]func(http.ResponseWriter, string){
		"500": func(w http.ResponseWriter, _ string) { writeJSON(w, 500, map[string]string{"error": "server_error"}) },
		"error with 200": func(w http.ResponseWriter, _ string) {
			writeJSON(w, 200, map[string]string{"error": "bad_refresh_token"})
		},
		"no access_token": func(w http.ResponseWriter, _ string) { writeJSON(w, 200, map[string]string{"token_type": "bearer"}) },
		"not JSON":        func(w http.ResponseWriter, _ string) { w.WriteHeader(200); _, _ = w.Write([]byte("<html>")) },
	} {
		rs.answer = answer
		if _, err := s.flow.AccessToken(ctx, user, "p"); !errors.Is(err, oauth.ErrRefresh) || errors.Is(err, oauth.ErrInvalidGrant) || errors.Is(err, oauth.ErrSignInAgain) {
			t.Errorf("%s: %v, want ErrRefresh", name, err)
		}
	}

	// Two accounts at one provider: name one.
	rs.answer = func(w http.ResponseWriter, _ string) {
		writeJSON(w, 200, map[string]any{"access_token": "at-2", "expires_in": 60})
	}
	second := core.Account{UserID: user, Provider: "p", ProviderAccountID: "second", Type: core.AccountTypeOAuth}
	if _, err := s.store.LinkAccount(ctx, second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.flow.AccessToken(ctx, user, "p"); !errors.Is(err, oauth.ErrSeveralAccounts) {
		t.Errorf("two accounts: %v", err)
	}
	acc, err := s.flow.AccountAccessToken(ctx, core.AccountKey{Provider: "p", ProviderAccountID: before.ProviderAccountID})
	if err != nil || *acc.AccessToken != "at-2" {
		t.Errorf("AccountAccessToken: %+v, %v", acc, err)
	}
}

// TestRefreshOutlivesItsCaller: a caller that gives up stops waiting at
// once, and the refresh it started still stores the rotated tokens; a
// caller arriving meanwhile shares that refresh.
func TestRefreshOutlivesItsCaller(t *testing.T) {
	rs := newRefreshServer(t)
	rs.release = make(chan struct{})
	s := refreshSetup(t, rs)
	user := linkExpired(t, s, "p", "rt-0")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.flow.AccessToken(ctx, user, "p")
		done <- err
	}()
	for rs.requests() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan string)
	go func() {
		at, _ := s.flow.AccessToken(context.Background(), user, "p")
		second <- at
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled caller: %v", err)
	}
	close(rs.release)
	at := <-second
	acc := account(t, s, user)
	if at == "" || *acc.AccessToken != at || *acc.RefreshToken == "rt-0" || rs.requests() != 1 {
		t.Errorf("second caller %q, stored %+v, %d requests: want the one refresh's tokens stored", at, acc, rs.requests())
	}
}

// TestAccessTokenNeedsTheExtensions: an adapter without
// listAccountsByUserId / updateAccount gets the missing-method error.
func TestAccessTokenNeedsTheExtensions(t *testing.T) {
	rs := newRefreshServer(t)
	full := refreshSetup(t, rs)
	user := linkExpired(t, full, "p", "rt-0")
	a, err := auth.New(auth.Config{Adapter: struct{ core.Adapter }{full.store}, Providers: full.providers,
		Secrets: []string{"auth secret-0123456789abcdefghij"}, BaseURL: testBase})
	if err != nil {
		t.Fatal(err)
	}
	f, err := oauth.New(oauth.Config{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.AccessToken(context.Background(), user, "p"); !errors.Is(err, core.ErrMissingAdapterMethod) {
		t.Errorf("AccessToken without listAccountsByUserId: %v", err)
	}
	acc := account(t, full, user)
	if _, err := f.AccountAccessToken(context.Background(), core.AccountKey{Provider: "p", ProviderAccountID: acc.ProviderAccountID}); !errors.Is(err, core.ErrMissingAdapterMethod) {
		t.Errorf("AccountAccessToken without updateAccount: %v", err)
	}
	if rs.requests() != 0 {
		t.Errorf("%d token requests although the result could not be stored", rs.requests())
	}
}

// hungServer accepts TCP connections and never answers; it returns its
// http:// URL.
func hungServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or written
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestDefaultTimeout: with no Config.HTTPClient, an issuer that accepts
// the connection and never answers fails Begin (discovery) after
// DefaultHTTPTimeout, not after minutes.
func TestDefaultTimeout(t *testing.T) {
	t.Parallel()
	p := oidcProvider(hungServer(t))
	s := newSetup(t, nil, testBase, p) // nil: the default client
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	_, err := s.flow.Begin(ctx, "idp")
	took := time.Since(start)
	t.Logf("a hung issuer failed Begin after %v (DefaultHTTPTimeout %v): %v", took.Round(time.Millisecond), oauth.DefaultHTTPTimeout, err)
	if !errors.Is(err, oauth.ErrDiscovery) {
		t.Fatalf("Begin against a hung issuer: %v, want ErrDiscovery", err)
	}
	if took < oauth.DefaultHTTPTimeout-time.Second || took > oauth.DefaultHTTPTimeout+5*time.Second {
		t.Errorf("failed after %v, want about DefaultHTTPTimeout (%v)", took, oauth.DefaultHTTPTimeout)
	}
}

// TestHungProviderCalls: each provider call of the flow (code exchange,
// JWKS, userinfo, refresh) against an endpoint that never answers fails
// with its typed error once Config.HTTPClient's timeout passes.
func TestHungProviderCalls(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	client := &http.Client{Timeout: timeout}
	cases := []struct {
		name  string
		edit  func(p *provider.OIDCConfig[map[string]any], hung string)
		want  error
		flows bool // a sign-in; else a refresh
	}{
		{"token", func(p *provider.OIDCConfig[map[string]any], hung string) { p.Token.URL = hung + "/token" }, oauth.ErrTokenExchange, true},
		{"jwks", func(p *provider.OIDCConfig[map[string]any], hung string) { p.JWKSEndpoint = hung + "/jwks" }, oauth.ErrIDTokenInvalid, true},
		{"userinfo", func(p *provider.OIDCConfig[map[string]any], hung string) {
			no := false
			p.IDToken, p.Userinfo.URL = &no, hung+"/userinfo"
		}, oauth.ErrUserinfo, true},
		{"refresh", func(p *provider.OIDCConfig[map[string]any], hung string) { p.Token.URL = hung + "/token" }, oauth.ErrRefresh, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t)
			p := oidcProvider(fake.URL())
			tc.edit(p, hungServer(t))
			s := newSetup(t, client, testBase, p)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var err error
			var took time.Duration
			if tc.flows {
				authURL, checks := s.begin(t, "idp")
				start := time.Now()
				_, err = s.callback(fake.authorize(authURL), checks, "idp")
				took = time.Since(start)
			} else {
				user := linkExpired(t, s, "idp", "refresh-token")
				start := time.Now()
				_, err = s.flow.AccessToken(ctx, user, "idp")
				took = time.Since(start)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
			if took > timeout+5*time.Second {
				t.Errorf("failed after %v with a %v client timeout", took, timeout)
			}
		})
	}
}

// linkExpired stores a user with an account at the provider whose access
// token expired, holding the refresh token; it returns the user's id.
func linkExpired(t *testing.T, s *setup, providerID, refreshToken string) string {
	t.Helper()
	ctx := context.Background()
	u, err := s.store.CreateUser(ctx, core.User{ID: "user-" + randomString(), Email: randomString() + "@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).Unix()
	at, typ := "expired-access-token", "bearer"
	acc := core.Account{UserID: u.ID, Provider: providerID, ProviderAccountID: "pa-" + randomString(), Type: core.AccountTypeOIDC,
		AccessToken: &at, ExpiresAt: &past, TokenType: &typ}
	if refreshToken != "" {
		acc.RefreshToken = &refreshToken
	}
	if _, err := s.store.LinkAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	return u.ID
}
