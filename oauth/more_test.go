package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/jwt"
	"github.com/authport/authport/oauth"
)

func TestNewRejectsBadConfig(t *testing.T) {
	withBase := func(base string) *auth.Auth {
		a, err := auth.New(auth.Config{Adapter: memory.New(), Secrets: []string{"an-auth-secret-of-at-least-32-bytes!"}, BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// The base URL is the Auth's: configured once, there; auth.New refuses
	// one that is not an absolute http(s) URL.
	for _, base := range []string{"/auth", "ftp://example.com/auth", "http://[::1"} {
		if _, err := auth.New(auth.Config{Adapter: memory.New(), Secrets: []string{"an-auth-secret-of-at-least-32-bytes!"}, BaseURL: base}); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("BaseURL %q: %v, want ErrInvalidConfig", base, err)
		}
	}
	for name, cfg := range map[string]oauth.Config{
		"nil Auth":    {},
		"no base URL": {Auth: withBase("")},
	} {
		if f, err := oauth.New(cfg); !errors.Is(err, oauth.ErrInvalidConfig) || f != nil {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	if f, err := oauth.New(oauth.Config{Auth: withBase(testBase)}); err != nil || f == nil || f.SecureCookies() {
		t.Errorf("http base: %v", err)
	}
	f, err := oauth.New(oauth.Config{Auth: withBase("https://example.com/auth/")})
	if err != nil || !f.SecureCookies() {
		t.Errorf("https base: %v, secure %v", err, f != nil && f.SecureCookies())
	}
}

// A sign-in begun before a secret rotation completes after it, while the
// old secret is still listed; once it is dropped, its cookies do not open.
func TestSecretRotation(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState))
	before := s.flowWith(t, []string{"old-secret-0123456789abcdef0123456789"}, nil)
	rotated := s.flowWith(t, []string{"new-secret-0123456789abcdef0123456789", "old-secret-0123456789abcdef0123456789"}, nil)
	dropped := s.flowWith(t, []string{"new-secret-0123456789abcdef0123456789"}, nil)
	run := func(begin, callback *oauth.Flow) error {
		rec := httptest.NewRecorder()
		authURL, err := begin.Begin(context.Background(), rec, "idp")
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, fake.authorize(authURL).String(), nil)
		for _, c := range rec.Result().Cookies() {
			r.AddCookie(c)
		}
		_, err = callback.Callback(context.Background(), httptest.NewRecorder(), r, "idp", nil)
		return err
	}
	if err := run(before, rotated); err != nil {
		t.Errorf("begun under the old secret, completed after rotation: %v", err)
	}
	if err := run(before, dropped); !errors.Is(err, oauth.ErrVerifierMissing) && !errors.Is(err, oauth.ErrStateMissing) {
		t.Errorf("old secret dropped: %v, want the check cookies unreadable", err)
	}
}

// Concurrent sign-ins of a returning user share one Flow (and its
// discovery cache); each gets its own session. Cookies of one browser do
// not complete another browser's sign-in.
func TestConcurrentSignIns(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState, provider.CheckNonce))
	authURL, cookies := s.begin(t, "idp")
	first, _, err := s.callback(fake.authorize(authURL), cookies, "idp")
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for range n {
		wg.Go(func() {
			authA, _ := s.begin(t, "idp")
			authB, cookiesB := s.begin(t, "idp")
			backA, backB := fake.authorize(authA), fake.authorize(authB)
			if _, _, err := s.callback(backA, cookiesB, "idp"); !errors.Is(err, oauth.ErrStateMismatch) {
				errs <- err
			}
			in, _, err := s.callback(backB, cookiesB, "idp")
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
	authURL, cookies := s.begin(t, "custom")
	back := fake.authorize(authURL)
	in, _, err := s.callback(back, cookies, "custom")
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
	authURL, cookies := s.begin(t, "idp")
	_, _, err := s.callback(fake.authorize(authURL), cookies, "idp")
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
	authURL, cookies := s.begin(t, "microsoft-entra-id")
	_, _, err := s.callback(fake.authorize(authURL), cookies, "microsoft-entra-id")
	if !errors.Is(err, oauth.ErrIDTokenInvalid) {
		t.Fatalf("error %v, want ErrIDTokenInvalid", err)
	}
}

// Bad requests are errors, never panics.
func TestCallbackBadRequests(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL()))
	ctx := context.Background()
	if _, err := s.flow.Callback(ctx, nil, nil, "idp", nil); !errors.Is(err, oauth.ErrInvalidCallback) {
		t.Errorf("nil request: %v", err)
	}
	if _, err := s.flow.Begin(ctx, nil, "idp"); !errors.Is(err, oauth.ErrInvalidCallback) {
		t.Errorf("nil writer: %v", err)
	}
	var zero oauth.Flow
	if _, err := zero.Begin(ctx, httptest.NewRecorder(), "idp"); !errors.Is(err, oauth.ErrInvalidConfig) {
		t.Errorf("zero Flow: %v", err)
	}
	if _, err := (*oauth.Flow)(nil).Callback(ctx, httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), "idp", nil); !errors.Is(err, oauth.ErrInvalidConfig) {
		t.Errorf("nil Flow: %v", err)
	}
	if _, err := s.flow.Callback(ctx, httptest.NewRecorder(), &http.Request{Method: http.MethodGet}, "idp", nil); !errors.Is(err, oauth.ErrInvalidCallback) {
		t.Errorf("request without URL: %v", err)
	}
	big := httptest.NewRequest(http.MethodPost, "/auth/callback/idp", &endless{})
	big.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, err := s.flow.Callback(ctx, httptest.NewRecorder(), big, "idp", nil); !errors.Is(err, oauth.ErrInvalidCallback) {
		t.Errorf("endless form body: %v", err)
	}
	r := httptest.NewRequest(http.MethodGet, "/auth/callback/idp?"+url.Values{"code": {"x"}}.Encode(), nil)
	r.AddCookie(&http.Cookie{Name: "authjs.pkce.code_verifier", Value: "%%%not a token"})
	if _, err := s.flow.Callback(ctx, httptest.NewRecorder(), r, "idp", nil); !errors.Is(err, oauth.ErrVerifierMissing) {
		t.Errorf("garbage cookie: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// A redirect proxy URL becomes the redirect_uri of both requests, and adds
// the state check.
func TestRedirectProxy(t *testing.T) {
	fake := newFakeProvider(t)
	p := oidcProvider(fake.URL())
	p.RedirectProxyURL = "https://proxy.example.com/auth/callback/idp"
	s := newSetup(t, fake.client, testBase, p)
	authURL, cookies := s.begin(t, "idp")
	u, _ := url.Parse(authURL)
	if got := u.Query().Get("redirect_uri"); got != p.RedirectProxyURL {
		t.Errorf("redirect_uri %q, want the proxy's", got)
	}
	if u.Query().Get("state") == "" || len(cookies) != 2 {
		t.Errorf("state not added: %s, cookies %v", authURL, cookieNames(cookies))
	}
	// The proxy relays the callback here; the token request names the
	// same redirect_uri, which the fake checks.
	back := fake.authorize(authURL)
	back.Scheme, back.Host, back.Path = "http", "127.0.0.1:3000", "/auth/callback/idp"
	if _, _, err := s.callback(back, cookies, "idp"); err != nil {
		t.Fatal(err)
	}
}

// The check cookies are what Auth.js writes: Auth.js's cookie names, and
// an Auth.js JWT per cookie, sealed under the cookie's name with the
// secret, holding {value}. The state cookie holds the state sent.
func TestCheckCookiesAreAuthJSCookies(t *testing.T) {
	for _, secure := range []bool{false, true} {
		names := checkNamesFor(secure)
		fake := newFakeProvider(t)
		base := testBase
		if secure {
			base = "https://app.example.com/auth"
		}
		s := newSetup(t, fake.client, base, oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState, provider.CheckNonce))
		authURL, cookies := s.begin(t, "idp")
		q, _ := url.Parse(authURL)
		want := map[string]string{names.PKCECodeVerifier: "", names.State: q.Query().Get("state"), names.Nonce: q.Query().Get("nonce")}
		codec, err := jwt.NewCodec("auth secret-0123456789abcdefghij") // newSetup's Auth secret, which the Flow seals with
		if err != nil {
			t.Fatal(err)
		}
		if len(cookies) != 3 {
			t.Fatalf("cookies %v", cookieNames(cookies))
		}
		for _, c := range cookies {
			w, ok := want[c.Name]
			if !ok {
				t.Errorf("cookie %s is not one of Auth.js's names %+v", c.Name, names)
				continue
			}
			claims, err := codec.Decode(c.Name, c.Value)
			if err != nil {
				t.Errorf("%s: Auth.js's codec cannot open it: %v", c.Name, err)
				continue
			}
			v, _ := claims["value"].(string)
			if v == "" || (w != "" && v != w) {
				t.Errorf("%s holds %v, want value %q", c.Name, claims, w)
			}
			if exp, _ := claims["exp"].(float64); exp == 0 {
				t.Errorf("%s: no exp in %v", c.Name, claims)
			}
			// Another cookie's name is another key.
			if _, err := codec.Decode(c.Name+"x", c.Value); !errors.Is(err, jwt.ErrInvalidToken) {
				t.Errorf("%s opened under another name: %v", c.Name, err)
			}
		}
	}
}

// The names the package exports are Auth.js's.
func TestCookieNameConstants(t *testing.T) {
	n := checkNamesFor(false)
	if oauth.PKCECookieName != n.PKCECodeVerifier || oauth.StateCookieName != n.State || oauth.NonceCookieName != n.Nonce {
		t.Errorf("constants %q %q %q, jwt says %+v", oauth.PKCECookieName, oauth.StateCookieName, oauth.NonceCookieName, n)
	}
}

// Check cookies expire after 15 minutes: a sign-in finished later fails
// its checks and stores nothing.
func TestCheckCookiesExpire(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState))
	late := s.flowWith(t, []string{"auth secret-0123456789abcdefghij"}, func() time.Time { return time.Now().Add(oauth.CheckMaxAge + time.Minute) })
	authURL, cookies := s.begin(t, "idp")
	r := httptest.NewRequest(http.MethodGet, fake.authorize(authURL).String(), nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	_, err := late.Callback(context.Background(), httptest.NewRecorder(), r, "idp", nil)
	if !errors.Is(err, oauth.ErrStateMissing) || !errors.Is(err, jwt.ErrExpiredToken) {
		t.Errorf("error %v, want ErrStateMissing saying the cookie expired", err)
	}
	if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Sessions) != 0 {
		t.Errorf("stored %+v", snap)
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

	authURL, cookies := s.begin(t, "idp")
	u, _ := url.Parse(authURL)
	if u.Host != "login.example.com" || u.Path != "/custom-authorize" || u.Query().Get("prompt") != "login" {
		t.Errorf("authorization URL %s, want the configured endpoint and params", authURL)
	}
	// The token endpoint and keys still come from discovery.
	if _, _, err := s.callback(fake.authorize(authURL), cookies, "idp"); err != nil {
		t.Fatal(err)
	}

	fake.omitIDToken = true
	fake.profile["email"] = "bob@example.com" // ada's address would need dangerous e-mail linking
	authURL, cookies = s.begin(t, "wk")
	if !strings.HasPrefix(authURL, "https://as.example.com/authorize?") {
		t.Errorf("authorization URL %s, want the discovered one", authURL)
	}
	in, _, err := s.callback(fake.authorize(authURL), cookies, "wk")
	if err != nil {
		t.Fatal(err)
	}
	if in.User.Email != "bob@example.com" || !in.IsNewUser {
		t.Errorf("user %+v", in.User)
	}
}

// checkNames are Auth.js's names of the check cookies.
type checkNames struct{ PKCECodeVerifier, State, Nonce string }

func checkNamesFor(secure bool) checkNames {
	p := ""
	if secure {
		p = "__Secure-"
	}
	return checkNames{p + "authjs.pkce.code_verifier", p + "authjs.state", p + "authjs.nonce"}
}
