package oauth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

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
	_, err := s.flow.Begin(ctx, httptest.NewRecorder(), "idp")
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
				authURL, cookies := s.begin(t, "idp")
				start := time.Now()
				_, _, err = s.callback(fake.authorize(authURL), cookies, "idp")
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
