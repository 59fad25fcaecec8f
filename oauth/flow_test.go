package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

const testBase = "http://127.0.0.1:3000/auth"

// setup is one application: a memory adapter, an Auth with the providers
// and a Flow whose HTTP client is client.
type setup struct {
	store     *memory.Adapter
	auth      *auth.Auth
	flow      *oauth.Flow
	client    *http.Client
	base      string
	providers []provider.Provider
}

// flowWith is another instance of the application, on the same store,
// whose Auth has the secrets and the clock (nil: time.Now): secrets and
// clock are the Auth's.
func (s *setup) flowWith(t testing.TB, secrets []string, now func() time.Time) *oauth.Flow {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: s.store, Providers: s.providers, Secrets: secrets, BaseURL: s.base, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	f, err := oauth.New(oauth.Config{Auth: a, HTTPClient: s.client})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func newSetup(t testing.TB, client *http.Client, base string, providers ...provider.Provider) *setup {
	t.Helper()
	s := &setup{store: memory.New(), client: client, base: base, providers: providers}
	var err error
	s.auth, err = auth.New(auth.Config{Adapter: s.store, Providers: providers, Secrets: []string{"auth secret-0123456789abcdefghij"}, BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	s.flow, err = oauth.New(oauth.Config{Auth: s.auth, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// authorization runs Begin as the HTTP layer would.
func (s *setup) authorization(t testing.TB, providerID string) oauth.Authorization {
	t.Helper()
	a, err := s.flow.Begin(context.Background(), providerID)
	if err != nil {
		t.Fatalf("Begin(%s): %v", providerID, err)
	}
	if _, err := url.Parse(a.URL); err != nil || a.URL == "" {
		t.Fatalf("Begin(%s): authorization URL %q: %v", providerID, a.URL, err)
	}
	return a
}

// begin runs Begin as the HTTP layer would, and returns the authorization
// URL and the check values to keep.
func (s *setup) begin(t testing.TB, providerID string) (string, oauth.Checks) {
	t.Helper()
	a := s.authorization(t, providerID)
	return a.URL, a.Checks
}

// callback runs Callback for the provider's redirect back, with the check
// values kept since Begin.
func (s *setup) callback(back *url.URL, checks oauth.Checks, providerID string) (*auth.SignIn, error) {
	return s.flow.Callback(context.Background(), providerID, back.Query(), checks, nil)
}

// checkNames lists the checks that have a value: "pkce", "state",
// "nonce", in that order.
func checkNames(c oauth.Checks) []string {
	var out []string
	for _, v := range []struct{ name, value string }{{"pkce", c.CodeVerifier}, {"state", c.State}, {"nonce", c.Nonce}} {
		if v.value != "" {
			out = append(out, v.name)
		}
	}
	return out
}

// s256 is the PKCE S256 challenge of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// oidcProvider is an OIDC provider at the fake's loopback issuer.
func oidcProvider(issuer string, checks ...provider.Check) *provider.OIDCConfig[map[string]any] {
	return &provider.OIDCConfig[map[string]any]{OAuth2Config: provider.OAuth2Config[map[string]any]{
		ID: "idp", Name: "IdP", Issuer: issuer, ClientID: fakeClientID, ClientSecret: fakeClientSecret,
		Checks: checks,
	}}
}

// assertSignedIn checks the user, the account with its tokens and the
// session.
//
// lifetime is the access token's expires_in: expires_at must be that far
// from now.
func assertSignedIn(t *testing.T, store *memory.Adapter, in *auth.SignIn, providerID, email string, lifetime time.Duration) core.Account {
	t.Helper()
	snap := store.Snapshot()
	if len(snap.Users) != 1 || snap.Users[0].Email != email || in.User.ID != snap.Users[0].ID || !in.IsNewUser {
		t.Fatalf("users %+v, sign-in %+v; want one new user %s", snap.Users, in, email)
	}
	if len(snap.Accounts) != 1 {
		t.Fatalf("accounts: %+v", snap.Accounts)
	}
	acc := snap.Accounts[0]
	if acc.UserID != in.User.ID || acc.Provider != providerID || acc.AccessToken == nil || *acc.AccessToken == "" ||
		acc.TokenType == nil || *acc.TokenType != "bearer" || acc.ExpiresAt == nil {
		t.Errorf("account %+v", acc)
	}
	if acc.ExpiresAt != nil {
		if d := time.Until(time.Unix(*acc.ExpiresAt, 0)); d < lifetime-time.Minute || d > lifetime+time.Second {
			t.Errorf("expires_at %d is %v from now, want %v (expires_in)", *acc.ExpiresAt, d, lifetime)
		}
	}
	if len(snap.Sessions) != 1 || snap.Sessions[0].UserID != in.User.ID || snap.Sessions[0].SessionToken != in.Session.SessionToken {
		t.Errorf("sessions %+v", snap.Sessions)
	}
	if in.Account == nil || in.Account.AccessToken == nil || in.Profile == nil || in.Profile.ID != acc.ProviderAccountID {
		t.Errorf("the sign-in result lacks the account with tokens or the profile: %+v", in)
	}
	return acc
}

func TestInProcessOIDCAllChecks(t *testing.T) {
	fake := newFakeProvider(t)
	fake.extraTokens = map[string]any{"ext_expires_in": 7200}
	var kept provider.TokenSet
	p := oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState, provider.CheckNonce)
	p.Account = func(t provider.TokenSet) provider.TokenSet {
		kept = t
		return provider.DefaultAccount(t)
	}
	s := newSetup(t, fake.client, testBase, p)
	authURL, checks := s.begin(t, "idp")

	u, _ := url.Parse(authURL)
	q := u.Query()
	if u.Scheme+"://"+u.Host+u.Path != fake.URL()+"/authorize" {
		t.Errorf("authorization endpoint %s", authURL)
	}
	for k, want := range map[string]string{
		"client_id": fakeClientID, "redirect_uri": testBase + "/callback/idp", "response_type": "code",
		"scope": "openid profile email", "code_challenge_method": "S256",
	} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	if q.Get("state") == "" || q.Get("nonce") == "" || q.Get("code_challenge") == "" {
		t.Errorf("checks missing from %s", authURL)
	}
	if got := strings.Join(checkNames(checks), ","); got != "pkce,state,nonce" {
		t.Errorf("checks %s", got)
	}
	// The values to keep are the ones the URL commits to.
	if checks.State != q.Get("state") || checks.Nonce != q.Get("nonce") || s256(checks.CodeVerifier) != q.Get("code_challenge") || checks.Missing != nil {
		t.Errorf("checks %+v do not fit %s", checks, authURL)
	}
	if a := s.authorization(t, "idp"); a.FormPost || a.Checks.State == checks.State || a.Checks.Nonce == checks.Nonce || a.Checks.CodeVerifier == checks.CodeVerifier {
		t.Errorf("a second Begin gave %+v, want new values and no form_post", a)
	}

	in, err := s.callback(fake.authorize(authURL), checks, "idp")
	if err != nil {
		t.Fatal(err)
	}
	acc := assertSignedIn(t, s.store, in, "idp", "ada@example.com", time.Hour)
	if acc.ProviderAccountID != sub("127.0.0.1") || acc.Type != core.AccountTypeOIDC || acc.IDToken == nil ||
		acc.RefreshToken == nil || acc.Scope == nil || *acc.Scope != "openid profile email" ||
		acc.SessionState == nil || *acc.SessionState != "ss-1" {
		t.Errorf("account %+v", acc)
	}
	if in.User.Name == nil || *in.User.Name != "Ada Lovelace" || in.User.Image == nil {
		t.Errorf("user %+v: want the id_token's name and picture", in.User)
	}
	// The account callback saw the whole token response.
	if kept.Extra["ext_expires_in"] == nil || kept.IDToken == "" {
		t.Errorf("account callback got %+v", kept)
	}
	if fake.authUsed[0] != "client_secret_basic" {
		t.Errorf("client auth %v, want client_secret_basic by default", fake.authUsed)
	}

	// Coming back again without the check values (the handler drops its
	// check cookies) fails before the code is used.
	_, err = s.callback(fake.authorize(authURL), oauth.Checks{}, "idp")
	if !errors.Is(err, oauth.ErrVerifierMissing) && !errors.Is(err, oauth.ErrStateMissing) {
		t.Errorf("callback without check values: %v", err)
	}
	if auth.CodeOf(err) != auth.CodeOAuthCallback {
		t.Errorf("callback without check values: code %q, want %q", auth.CodeOf(err), auth.CodeOAuthCallback)
	}
}

// TestNegative runs every rejected callback on a fresh store, and checks
// that the rejection has its typed error and the callback's code, and
// stored nothing.
func TestNegative(t *testing.T) {
	all := []provider.Check{provider.CheckPKCE, provider.CheckState, provider.CheckNonce}
	cases := []struct {
		name   string
		checks []provider.Check
		// arrange edits the fake before the callback; back is what the
		// browser brings back, checks what the caller kept.
		arrange func(f *fakeProvider, back *url.URL, checks *oauth.Checks)
		want    []error
	}{
		{"wrong state", all, func(_ *fakeProvider, back *url.URL, _ *oauth.Checks) {
			setQuery(back, "state", "forged")
		}, []error{oauth.ErrStateMismatch}},
		{"no state parameter", all, func(_ *fakeProvider, back *url.URL, _ *oauth.Checks) {
			setQuery(back, "state", "")
		}, []error{oauth.ErrStateMissing}},
		{"no state kept", all, func(_ *fakeProvider, _ *url.URL, checks *oauth.Checks) {
			checks.State = ""
		}, []error{oauth.ErrStateMissing}},
		{"state lost, with the reason", all, func(_ *fakeProvider, _ *url.URL, checks *oauth.Checks) {
			// The handler says why: its state cookie would not open.
			checks.State = ""
			checks.Missing = map[provider.Check]error{provider.CheckState: errCookieUnreadable}
		}, []error{oauth.ErrStateMissing, errCookieUnreadable}},
		{"state of another sign-in (the nonce's value)", all, func(_ *fakeProvider, _ *url.URL, checks *oauth.Checks) {
			checks.State = checks.Nonce
		}, []error{oauth.ErrStateMismatch}},
		{"no PKCE verifier kept", all, func(_ *fakeProvider, _ *url.URL, checks *oauth.Checks) {
			checks.CodeVerifier = ""
		}, []error{oauth.ErrVerifierMissing}},
		{"no nonce kept", all, func(_ *fakeProvider, _ *url.URL, checks *oauth.Checks) {
			checks.Nonce = ""
		}, []error{oauth.ErrNonceMissing}},
		{"another PKCE verifier", all, func(_ *fakeProvider, _ *url.URL, checks *oauth.Checks) {
			checks.CodeVerifier = oauth2.GenerateVerifier()
		}, []error{oauth.ErrTokenExchange}},
		{"replayed code", all, func(f *fakeProvider, back *url.URL, _ *oauth.Checks) {
			f.redeem(back.Query().Get("code"))
		}, []error{oauth.ErrTokenExchange}},
		{"id_token signed by another key", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.signWith = f.other
		}, []error{oauth.ErrIDTokenInvalid}},
		{"wrong audience", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.claims = func(c map[string]any) { c["aud"] = "another-client" }
		}, []error{oauth.ErrIDTokenInvalid}},
		{"several audiences, azp another client", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.claims = func(c map[string]any) { c["aud"] = []string{fakeClientID, "other"}; c["azp"] = "other" }
		}, []error{oauth.ErrIDTokenInvalid}},
		{"wrong issuer", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.claims = func(c map[string]any) { c["iss"] = "https://evil.example.com" }
		}, []error{oauth.ErrIDTokenInvalid}},
		{"expired id_token", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.claims = func(c map[string]any) {
				c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
				c["exp"] = time.Now().Add(-time.Hour).Unix()
			}
		}, []error{oauth.ErrIDTokenInvalid}},
		{"wrong nonce", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.claims = func(c map[string]any) { c["nonce"] = "another nonce" }
		}, []error{oauth.ErrNonceMismatch}},
		{"no nonce in the id_token", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.claims = func(c map[string]any) { delete(c, "nonce") }
		}, []error{oauth.ErrNonceMismatch}},
		{"OIDC without id_token", all, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.omitIDToken = true
		}, []error{oauth.ErrIDTokenMissing, provider.ErrMissingIDToken}},
		{"OIDC without id_token, idToken false", nil, func(f *fakeProvider, _ *url.URL, _ *oauth.Checks) {
			f.omitIDToken = true
		}, []error{oauth.ErrIDTokenMissing}},
		{"access_denied", all, func(_ *fakeProvider, back *url.URL, _ *oauth.Checks) {
			setQuery(back, "code", "")
			setQuery(back, "error", "access_denied")
			setQuery(back, "error_description", "The user declined")
		}, []error{oauth.ErrProviderError}},
		{"no code", all, func(_ *fakeProvider, back *url.URL, _ *oauth.Checks) {
			setQuery(back, "code", "")
		}, []error{oauth.ErrInvalidCallback}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeProvider(t)
			p := oidcProvider(fake.URL(), tc.checks...)
			if tc.checks == nil {
				no := false
				p.IDToken = &no
			}
			s, in, err := callbackWith(t, fake, p, func(back *url.URL, checks *oauth.Checks) {
				tc.arrange(fake, back, checks)
			})
			if err == nil {
				t.Fatalf("signed in %+v, want an error", in)
			}
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("error %q does not match %q", err, want)
				}
			}
			if code := auth.CodeOf(err); code != auth.CodeOAuthCallback {
				t.Errorf("code %q, want %q", code, auth.CodeOAuthCallback)
			}
			t.Logf("error: %v", err)
			if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Accounts)+len(snap.Sessions) != 0 {
				t.Errorf("stored %+v after a rejected callback", snap)
			}
		})
	}
}

// callbackWith begins a sign-in with p (the provider fake serves), has
// fake authorize it, lets arrange edit what the browser brings back and the
// check values the caller kept, and returns the setup and the callback's
// result.
func callbackWith(t *testing.T, fake *fakeProvider, p provider.Provider, arrange func(back *url.URL, checks *oauth.Checks)) (*setup, *auth.SignIn, error) {
	t.Helper()
	s := newSetup(t, fake.client, testBase, p)
	authURL, checks := s.begin(t, "idp")
	back := fake.authorize(authURL)
	arrange(back, &checks)
	in, err := s.callback(back, checks, "idp")
	return s, in, err
}

func TestProviderErrorDetails(t *testing.T) {
	fake := newFakeProvider(t)
	_, _, err := callbackWith(t, fake, oidcProvider(fake.URL()), func(back *url.URL, _ *oauth.Checks) {
		setQuery(back, "code", "")
		setQuery(back, "error", "access_denied")
		setQuery(back, "error_description", "The user declined")
	})
	var pe *oauth.ProviderError
	if !errors.As(err, &pe) || pe.Code != "access_denied" || pe.Description != "The user declined" || pe.ProviderID != "idp" {
		t.Fatalf("error %v, want a *ProviderError with the details", err)
	}
}

func TestReplayedCodeIsATokenEndpointError(t *testing.T) {
	fake := newFakeProvider(t)
	_, _, err := callbackWith(t, fake, oidcProvider(fake.URL()), func(back *url.URL, _ *oauth.Checks) {
		fake.redeem(back.Query().Get("code"))
	})
	var re *oauth2.RetrieveError
	if !errors.Is(err, oauth.ErrTokenExchange) || !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("error %v, want ErrTokenExchange around invalid_grant", err)
	}
}

// errCookieUnreadable stands for the handler's reason for a check value it
// cannot give back (a check cookie that would not open).
var errCookieUnreadable = errors.New("the authjs.state cookie cannot be opened")

func setQuery(u *url.URL, k, v string) {
	q := u.Query()
	if v == "" {
		q.Del(k)
	} else {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
}

// beginWith runs Begin with the sign-in request's parameter sets and
// returns the authorization URL's query.
func beginWith(t *testing.T, f *oauth.Flow, sets ...url.Values) url.Values {
	t.Helper()
	a, err := f.Begin(context.Background(), "idp", sets...)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestSignInParams(t *testing.T) {
	fake := newFakeProvider(t)
	p := oidcProvider(fake.URL())
	p.Authorization.Params = url.Values{"prompt": {"consent"}, "access_type": {"offline"}}
	s := newSetup(t, &http.Client{}, testBase, p)

	// The allowed ones pass, the first set naming one wins, and they
	// replace the provider's configured value.
	q := beginWith(t, s.flow,
		url.Values{"prompt": {"login"}, "login_hint": {"ada@example.com"}},
		url.Values{"prompt": {"none"}, "ui_locales": {"fr-CA fr"}, "csrfToken": {"x"}, "callbackUrl": {"/"}})
	for k, want := range map[string]string{"prompt": "login", "login_hint": "ada@example.com", "ui_locales": "fr-CA fr", "access_type": "offline"} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	for _, k := range []string{"csrfToken", "callbackUrl"} {
		if q.Has(k) {
			t.Errorf("%s reached the authorization URL", k)
		}
	}

	// What decides the client, the code's destination, the grant and the
	// checks never comes from the request by default.
	hostile := url.Values{
		"client_id": {"evil"}, "redirect_uri": {"https://evil.example/cb"}, "response_type": {"token"},
		"scope": {"openid admin"}, "response_mode": {"fragment"}, "state": {"attacker"}, "nonce": {"attacker"},
		"code_challenge": {"attacker"}, "code_challenge_method": {"plain"}, "request_uri": {"https://evil.example/r"},
	}
	q = beginWith(t, s.flow, hostile)
	for k, want := range map[string]string{
		"client_id": fakeClientID, "redirect_uri": testBase + "/callback/idp", "response_type": "code",
		"scope": "openid profile email", "response_mode": "", "code_challenge_method": "S256", "request_uri": "",
	} {
		if q.Get(k) != want {
			t.Errorf("%s = %q from a hostile request, want %q", k, q.Get(k), want)
		}
	}
	for _, k := range []string{"state", "nonce", "code_challenge"} {
		if q.Get(k) == "attacker" {
			t.Errorf("the request set %s", k)
		}
	}

	// Bad values are refused with a typed error.
	for name, v := range map[string]string{"too long": strings.Repeat("a", 2049), "control character": "a\nb", "not UTF-8": "\xff"} {
		_, err := s.flow.Begin(context.Background(), "idp", url.Values{"login_hint": {v}})
		if !errors.Is(err, oauth.ErrInvalidParams) || auth.CodeOf(err) != auth.CodeOAuthSignin {
			t.Errorf("%s: %v, want ErrInvalidParams with code OAuthSignin", name, err)
		}
	}
}

func TestAuthorizationParamsConfig(t *testing.T) {
	fake := newFakeProvider(t)
	p := oidcProvider(fake.URL())
	s := newSetup(t, &http.Client{}, testBase, p)

	// Config.AuthorizationParams adds names, the guarded ones included.
	f, err := oauth.New(oauth.Config{Auth: s.auth, HTTPClient: &http.Client{}, AuthorizationParams: []string{"scope", "resource"}})
	if err != nil {
		t.Fatal(err)
	}
	q := beginWith(t, f, url.Values{"scope": {"openid email offline_access"}, "resource": {"https://api.example.com"}, "client_id": {"evil"}})
	if q.Get("scope") != "openid email offline_access" || q.Get("resource") != "https://api.example.com" || q.Get("client_id") != fakeClientID {
		t.Errorf("query %v: want the configured extra names only", q)
	}

	// The checks can never be opened to the request.
	for _, n := range []string{"state", "nonce", "code_challenge", "code_challenge_method", "", "a=b"} {
		_, err := oauth.New(oauth.Config{Auth: s.auth, AuthorizationParams: []string{n}})
		if !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("AuthorizationParams %q: %v, want ErrInvalidConfig", n, err)
		}
	}
}
