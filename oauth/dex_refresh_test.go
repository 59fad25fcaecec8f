package oauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
	"github.com/authport/authport/oauth/oauthtest"
)

// tokenCounter is a reverse proxy in front of a token endpoint that counts
// the requests by grant_type.
type tokenCounter struct {
	srv *httptest.Server

	mu     sync.Mutex
	grants map[string]int
}

// newTokenCounter proxies to the origin (scheme://host) of target.
func newTokenCounter(t testing.TB, target string) *tokenCounter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &tokenCounter{grants: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.grants[r.PostForm.Get("grant_type")]++
		c.mu.Unlock()
		body := r.PostForm.Encode()
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// count is the number of requests with grant_type g so far.
func (c *tokenCounter) count(g string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.grants[g]
}

// TestDexRefresh signs in at dex with offline_access, then lets the access
// token expire: AccessToken refreshes it once for 20 concurrent callers,
// stores the refresh token dex rotated, and dex refuses the old one.
func TestDexRefresh(t *testing.T) {
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		t.Run(method, func(t *testing.T) {
			db := dexDatabase(t)
			d := oauthtest.Dex(t, oauthtest.DexConfig{PostgresURL: db})
			if d == nil {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			counter := newTokenCounter(t, d.Issuer)
			p := &provider.OIDCConfig[map[string]any]{}
			dexProvider(p, d.Issuer, provider.CheckPKCE, provider.CheckState, provider.CheckNonce)
			p.Client.TokenEndpointAuthMethod = method
			p.Authorization.Params = url.Values{"scope": {"openid profile email offline_access"}}
			issuer, err := url.Parse(d.Issuer)
			if err != nil {
				t.Fatal(err)
			}
			// dex's own token endpoint, through the counter.
			p.Token.URL = counter.srv.URL + issuer.Path + "/token"
			s := newSetup(t, &http.Client{Timeout: 30 * time.Second}, dexBase, p)

			authURL, checks := s.begin(t, "dex")
			in := s.dexSignIn(ctx, t, d, authURL, checks)
			if n := counter.count("authorization_code"); n != 1 {
				t.Fatalf("%d code exchanges through the counting proxy, want 1", n)
			}
			signedIn := in.Account
			if signedIn == nil || signedIn.RefreshToken == nil || signedIn.AccessToken == nil || signedIn.ExpiresAt == nil {
				t.Fatalf("account %+v: want access and refresh tokens and expires_at (offline_access)", signedIn)
			}
			key := core.AccountKey{Provider: "dex", ProviderAccountID: signedIn.ProviderAccountID}

			// A valid token is returned as it is.
			at, err := s.flow.AccessToken(ctx, in.User.ID, "dex")
			if err != nil || at != *signedIn.AccessToken {
				t.Fatalf("AccessToken before expiry: %q, %v; want the stored token", at, err)
			}
			if n := counter.count("refresh_token"); n != 0 {
				t.Fatalf("%d refreshes of a valid token", n)
			}

			// The access token expires.
			past := time.Now().Add(-time.Minute).Unix()
			if _, err := s.store.UpdateAccount(ctx, core.AccountUpdate{Provider: key.Provider, ProviderAccountID: key.ProviderAccountID, ExpiresAt: core.Set(&past)}); err != nil {
				t.Fatal(err)
			}
			callers := 20
			if testing.Short() {
				callers = 1
			}
			tokens := make([]string, callers)
			errs := make([]error, callers)
			coretest.Concurrently(callers, func(i int) {
				tokens[i], errs[i] = s.flow.AccessToken(ctx, in.User.ID, "dex")
			})
			for i := range callers {
				if errs[i] != nil {
					t.Fatalf("caller %d: %v", i, errs[i])
				}
				if tokens[i] != tokens[0] {
					t.Fatalf("caller %d got another token than caller 0", i)
				}
			}
			if n := counter.count("refresh_token"); n != 1 {
				t.Fatalf("%d concurrent callers made %d refresh requests, want 1", callers, n)
			}
			if tokens[0] == *signedIn.AccessToken {
				t.Fatal("the refreshed access token is the expired one")
			}
			stored, err := s.store.GetAccount(ctx, key.ProviderAccountID, key.Provider)
			if err != nil || stored == nil {
				t.Fatalf("GetAccount: %v, %v", stored, err)
			}
			if *stored.AccessToken != tokens[0] || stored.ExpiresAt == nil || *stored.ExpiresAt <= time.Now().Unix() {
				t.Errorf("stored %+v: want the new access token and a future expires_at", stored)
			}
			if stored.RefreshToken == nil || *stored.RefreshToken == *signedIn.RefreshToken {
				t.Fatalf("stored refresh token %v: want the one dex rotated to, not the used one", stored.RefreshToken)
			}
			if stored.IDToken == nil || *stored.IDToken == *signedIn.IDToken {
				t.Errorf("stored id_token not replaced by the refreshed one")
			}

			// The new token is returned again without a request.
			if at, err := s.flow.AccessToken(ctx, in.User.ID, "dex"); err != nil || at != tokens[0] {
				t.Errorf("AccessToken after the refresh: %q, %v", at, err)
			}
			if n := counter.count("refresh_token"); n != 1 {
				t.Errorf("%d refresh requests after reading a fresh token, want 1", n)
			}

			// dex refuses the used refresh token: put it back, and the
			// refresh fails with dex's answer, nothing stored. (dex answers
			// 400 invalid_request, not RFC 6749's invalid_grant, so this is
			// ErrRefresh; the in-process tests cover ErrInvalidGrant.)
			old := *signedIn.RefreshToken
			if _, err := s.store.UpdateAccount(ctx, core.AccountUpdate{Provider: key.Provider, ProviderAccountID: key.ProviderAccountID,
				RefreshToken: core.Set(&old), ExpiresAt: core.Set(&past)}); err != nil {
				t.Fatal(err)
			}
			_, err = s.flow.AccessToken(ctx, in.User.ID, "dex")
			var te *oauth.TokenError
			if !errors.Is(err, oauth.ErrRefresh) || !errors.As(err, &te) || te.StatusCode != http.StatusBadRequest || te.Code == "" {
				t.Fatalf("refresh with the used refresh token: %v; want dex's refusal (400 with an OAuth error) as a *TokenError", err)
			}
			if n := counter.count("refresh_token"); n != 2 {
				t.Errorf("%d refresh requests, want 2", n)
			}
			after, _ := s.store.GetAccount(ctx, key.ProviderAccountID, key.Provider)
			if after == nil || *after.RefreshToken != old || *after.AccessToken != tokens[0] {
				t.Errorf("a refused refresh changed the account: %+v", after)
			}
		})
	}
}

// dexDatabase creates a PostgreSQL database of the test's own for dex's
// state (dex refreshes only with SQL storage on several connections; see
// DexConfig.PostgresURL) and returns its URL; it is dropped when the test
// ends. The server is AUTHPORT_POSTGRES_URL's; without it the test is
// skipped, or failed when AUTHPORT_REQUIRE names postgres or dex, or is
// all.
func dexDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("AUTHPORT_POSTGRES_URL")
	if admin == "" {
		for name := range strings.SplitSeq(os.Getenv("AUTHPORT_REQUIRE"), ",") {
			if n := strings.ToLower(strings.TrimSpace(name)); n == "all" || n == "postgres" || n == "dex" {
				t.Fatal("AUTHPORT_POSTGRES_URL is not set: the dex refresh test keeps dex's state in PostgreSQL")
			}
		}
		t.Skip("AUTHPORT_POSTGRES_URL is not set: the dex refresh test keeps dex's state in PostgreSQL")
	}
	return oauthtest.PostgresDatabase(t, admin, "authport_oauth_dex_")
}
