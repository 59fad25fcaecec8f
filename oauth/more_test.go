package oauth_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/oauth"
)

func TestNewRejectsBadConfig(t *testing.T) {
	withBase := func(base string) (*auth.Auth, error) {
		return auth.New(auth.Config{Adapter: memory.New(), Secrets: []string{"an-auth-secret-of-at-least-32-bytes!"}, BaseURL: base})
	}
	// The base URL is the Auth's: configured once, and parsed, there.
	for name, base := range map[string]string{
		"relative base":   "/auth",
		"not http(s)":     "ftp://example.com/auth",
		"unparsable base": "http://[::1",
	} {
		if a, err := withBase(base); !errors.Is(err, core.ErrInvalidConfig) || a != nil {
			t.Errorf("%s: auth.New: %v, want ErrInvalidConfig", name, err)
		}
	}
	noBase, err := withBase("")
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]oauth.Config{
		"nil Auth":    {},
		"no base URL": {Auth: noBase},
	} {
		if f, err := oauth.New(cfg); !errors.Is(err, core.ErrInvalidConfig) || f != nil {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	for base, callback := range map[string]string{
		testBase:                    testBase + "/callback/github",
		"https://example.com/auth/": "https://example.com/auth/callback/github",
	} {
		a, err := auth.New(auth.Config{Adapter: memory.New(), Secrets: []string{"an-auth-secret-of-at-least-32-bytes!"}, BaseURL: base,
			Providers: []provider.Provider{providers.GitHub("id", "secret")}})
		if err != nil {
			t.Fatal(err)
		}
		f, err := oauth.New(oauth.Config{Auth: a})
		if err != nil || f == nil {
			t.Fatalf("%s: %v", base, err)
		}
		begun, err := f.Begin(context.Background(), "github")
		if err != nil {
			t.Fatal(err)
		}
		if u, _ := url.Parse(begun.URL); u.Query().Get("redirect_uri") != callback {
			t.Errorf("base %s: redirect_uri %q, want %q", base, u.Query().Get("redirect_uri"), callback)
		}
	}
}

// Concurrent sign-ins of a returning user share one Flow (and its
// discovery cache); each gets its own session. The check values of one
// browser do not complete another browser's sign-in.
func TestConcurrentSignIns(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState, provider.CheckNonce))
	authURL, checks := s.begin(t, "idp")
	first, err := s.callback(fake.authorize(authURL), checks, "idp")
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for range n {
		wg.Go(func() {
			authA, _ := s.begin(t, "idp")
			authB, checksB := s.begin(t, "idp")
			backA, backB := fake.authorize(authA), fake.authorize(authB)
			if _, err := s.callback(backA, checksB, "idp"); !errors.Is(err, oauth.ErrStateMismatch) {
				errs <- err
			}
			in, err := s.callback(backB, checksB, "idp")
			if err != nil {
				errs <- err
				return
			}
			if in.User.ID != first.User.ID || in.IsNewUser {
				errs <- errors.New("a returning sign-in made another user")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	snap := s.store.Snapshot()
	if len(snap.Users) != 1 || len(snap.Accounts) != 1 || len(snap.Sessions) != n+1 {
		t.Errorf("users %d accounts %d sessions %d, want 1, 1, %d", len(snap.Users), len(snap.Accounts), len(snap.Sessions), n+1)
	}
	if d := fake.count("discovery"); d != 1 {
		t.Errorf("discovery fetched %d times, want once (cached)", d)
	}
}

// A custom token handler replaces the exchange and gets the checks.
func TestTokenRequestHandler(t *testing.T) {
	fake := newFakeProvider(t)
	fake.userinfo = githubUserinfo
	var got provider.TokenRequest
	p := &provider.OAuth2Config[map[string]any]{
		ID: "custom", Name: "Custom", ClientID: fakeClientID, ClientSecret: fakeClientSecret,
		Authorization: provider.Endpoint{URL: "https://gitlab.com/oauth/authorize"},
		Token: provider.TokenEndpoint{Request: func(ctx context.Context, req provider.TokenRequest) (provider.TokenSet, error) {
			got = req
			in := int64(60)
			return provider.TokenSet{AccessToken: "at-custom", TokenType: "Bearer", ExpiresIn: &in}, nil
		}},
		Userinfo: provider.UserinfoEndpoint[map[string]any]{URL: "https://gitlab.com/api/v4/user"},
		Checks:   provider.Checks{provider.CheckPKCE, provider.CheckState},
	}
	s := newSetup(t, fake.client, testBase, p)
	authURL, checks := s.begin(t, "custom")
	back := fake.authorize(authURL)
	in, err := s.callback(back, checks, "custom")
	if err != nil {
		t.Fatal(err)
	}
	if got.Checks.CodeVerifier == "" || got.Checks.State != back.Query().Get("state") || got.Params.Get("code") != back.Query().Get("code") ||
		got.RedirectURI != testBase+"/callback/custom" || got.ClientSecret != fakeClientSecret {
		t.Errorf("token handler got %+v", got)
	}
	if in.User.Email != "ada@example.com" {
		t.Errorf("user %+v", in.User)
	}
}

// With idToken false the profile comes from userinfo, whose subject must
// be the id_token's.
func TestOIDCUserinfoSubjectMustMatch(t *testing.T) {
	fake := newFakeProvider(t)
	fake.userinfo = func(string) any { return map[string]any{"sub": "someone-else", "email": "eve@example.com"} }
	no := false
	p := oidcProvider(fake.URL())
	p.IDToken = &no
	s := newSetup(t, fake.client, testBase, p)
	authURL, checks := s.begin(t, "idp")
	_, err := s.callback(fake.authorize(authURL), checks, "idp")
	if !errors.Is(err, oauth.ErrUserinfo) {
		t.Fatalf("error %v, want ErrUserinfo", err)
	}
	if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Accounts)+len(snap.Sessions) != 0 {
		t.Errorf("stored %+v", snap)
	}
}

// Microsoft's multi-tenant issuer: the id_token's iss must be the
// template with the token's own tid.
func TestEntraTenantMustMatchIssuer(t *testing.T) {
	fake := newFakeProvider(t)
	fake.claims = func(c map[string]any) { c["tid"] = "another-tenant" }
	s := newSetup(t, fake.client, testBase, providers.MicrosoftEntraID(fakeClientID, fakeClientSecret, ""))
	authURL, checks := s.begin(t, "microsoft-entra-id")
	_, err := s.callback(fake.authorize(authURL), checks, "microsoft-entra-id")
	if !errors.Is(err, oauth.ErrIDTokenInvalid) {
		t.Fatalf("error %v, want ErrIDTokenInvalid", err)
	}
}

// Bad requests are errors, never panics.
func TestCallbackBadRequests(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL()))
	ctx := context.Background()
	if _, err := s.flow.Callback(ctx, "idp", nil, oauth.Checks{}, nil); !errors.Is(err, oauth.ErrInvalidCallback) || auth.CodeOf(err) != auth.CodeOAuthCallback {
		t.Errorf("no parameters: %v", err)
	}
	var zero oauth.Flow
	if _, err := zero.Begin(ctx, "idp"); !errors.Is(err, core.ErrInvalidConfig) {
		t.Errorf("zero Flow: %v", err)
	}
	if _, err := (*oauth.Flow)(nil).Callback(ctx, "idp", url.Values{}, oauth.Checks{}, nil); !errors.Is(err, core.ErrInvalidConfig) {
		t.Errorf("nil Flow: %v", err)
	}
	// A verifier the caller could not give back: the reason comes with
	// the refusal.
	lost := errors.New("the authjs.pkce.code_verifier cookie cannot be opened")
	checks := oauth.Checks{Missing: map[provider.Check]error{provider.CheckPKCE: lost}}
	if _, err := s.flow.Callback(ctx, "idp", url.Values{"code": {"x"}}, checks, nil); !errors.Is(err, oauth.ErrVerifierMissing) || !errors.Is(err, lost) {
		t.Errorf("lost verifier: %v", err)
	}
}

// A redirect proxy URL becomes the redirect_uri of both requests, and adds
// the state check.
func TestRedirectProxy(t *testing.T) {
	fake := newFakeProvider(t)
	p := oidcProvider(fake.URL())
	p.RedirectProxyURL = "https://proxy.example.com/auth/callback/idp"
	s := newSetup(t, fake.client, testBase, p)
	authURL, checks := s.begin(t, "idp")
	u, _ := url.Parse(authURL)
	if got := u.Query().Get("redirect_uri"); got != p.RedirectProxyURL {
		t.Errorf("redirect_uri %q, want the proxy's", got)
	}
	if u.Query().Get("state") == "" || len(checkNames(checks)) != 2 {
		t.Errorf("state not added: %s, checks %v", authURL, checkNames(checks))
	}
	// The proxy relays the callback here; the token request names the
	// same redirect_uri, which the fake checks.
	back := fake.authorize(authURL)
	back.Scheme, back.Host, back.Path = "http", "127.0.0.1:3000", "/auth/callback/idp"
	if _, err := s.callback(back, checks, "idp"); err != nil {
		t.Fatal(err)
	}
}

// Explicit endpoints win over discovery; an OAuth 2.0 provider can be
// configured by WellKnown alone.
func TestExplicitEndpointsOverrideDiscovery(t *testing.T) {
	fake := newFakeProvider(t)
	p := oidcProvider(fake.URL())
	p.Authorization = provider.Endpoint{URL: "https://login.example.com/custom-authorize", Params: url.Values{"prompt": {"login"}}}
	byWellKnown := &provider.OAuth2Config[map[string]any]{
		ID: "wk", Name: "WK", ClientID: fakeClientID, ClientSecret: fakeClientSecret,
		WellKnown: "https://as.example.com/.well-known/openid-configuration",
	}
	s := newSetup(t, fake.client, testBase, p, byWellKnown)

	authURL, checks := s.begin(t, "idp")
	u, _ := url.Parse(authURL)
	if u.Host != "login.example.com" || u.Path != "/custom-authorize" || u.Query().Get("prompt") != "login" {
		t.Errorf("authorization URL %s, want the configured endpoint and params", authURL)
	}
	// The token endpoint and keys still come from discovery.
	if _, err := s.callback(fake.authorize(authURL), checks, "idp"); err != nil {
		t.Fatal(err)
	}

	fake.omitIDToken = true
	fake.profile["email"] = "bob@example.com" // ada's address would need dangerous e-mail linking
	authURL, checks = s.begin(t, "wk")
	if !strings.HasPrefix(authURL, "https://as.example.com/authorize?") {
		t.Errorf("authorization URL %s, want the discovered one", authURL)
	}
	in, err := s.callback(fake.authorize(authURL), checks, "wk")
	if err != nil {
		t.Fatal(err)
	}
	if in.User.Email != "bob@example.com" || !in.IsNewUser {
		t.Errorf("user %+v", in.User)
	}
}
