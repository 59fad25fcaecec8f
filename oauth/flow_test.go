package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/jwt"
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

// begin runs Begin as the HTTP layer would, and returns the authorization
// URL and the cookies it set.
func (s *setup) begin(t testing.TB, providerID string) (string, []*http.Cookie) {
	t.Helper()
	rec := httptest.NewRecorder()
	authURL, err := s.flow.Begin(context.Background(), rec, providerID)
	if err != nil {
		t.Fatalf("Begin(%s): %v", providerID, err)
	}
	return authURL, rec.Result().Cookies()
}

// callback runs Callback for the provider's redirect back, with the
// browser's cookies.
func (s *setup) callback(back *url.URL, cookies []*http.Cookie, providerID string) (*auth.SignIn, *httptest.ResponseRecorder, error) {
	r := httptest.NewRequest(http.MethodGet, back.String(), nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	in, err := s.flow.Callback(context.Background(), rec, r, providerID, nil)
	return in, rec, err
}

// dropped reports whether the response tells the browser to drop the
// cookie.
func dropped(rec *httptest.ResponseRecorder, name string) bool {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name && c.MaxAge < 0 {
			return true
		}
	}
	return false
}

func cookieNames(cs []*http.Cookie) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// oidcProvider is an OIDC provider at the fake's loopback issuer.
func oidcProvider(issuer string, checks ...provider.Check) *provider.OIDCConfig[map[string]any] {
	return &provider.OIDCConfig[map[string]any]{OAuth2Config: provider.OAuth2Config[map[string]any]{
		ID: "idp", Name: "IdP", Issuer: issuer, ClientID: fakeClientID, ClientSecret: fakeClientSecret,
		Checks: checks,
	}}
}

// assertSignedIn checks the user, the account with its tokens, the
// session and its cookie, and that every check cookie was dropped.
//
// lifetime is the access token's expires_in: expires_at must be that far
// from now.
func assertSignedIn(t *testing.T, store *memory.Adapter, in *auth.SignIn, rec *httptest.ResponseRecorder, sent []*http.Cookie, providerID, email string, lifetime time.Duration) core.Account {
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
	for _, c := range rec.Result().Cookies() {
		if strings.Contains(c.Name, "session-token") {
			t.Errorf("the flow wrote the session cookie %s (only the handler writes it)", c.Name)
		}
	}
	if in.Account == nil || in.Account.AccessToken == nil || in.Profile == nil || in.Profile.ID != acc.ProviderAccountID {
		t.Errorf("the sign-in result lacks the account with tokens or the profile: %+v", in)
	}
	for _, c := range sent {
		if !dropped(rec, c.Name) {
			t.Errorf("check cookie %s not cleared", c.Name)
		}
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
	authURL, cookies := s.begin(t, "idp")

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
	if got := strings.Join(cookieNames(cookies), ","); got != "authjs.pkce.code_verifier,authjs.state,authjs.nonce" {
		t.Errorf("cookies %s", got)
	}
	for _, c := range cookies {
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure || c.MaxAge != 900 {
			t.Errorf("cookie %+v", c)
		}
		if strings.Contains(c.Value, q.Get("state")) || strings.Contains(c.Value, q.Get("nonce")) {
			t.Errorf("cookie %s carries a check value in the clear", c.Name)
		}
	}

	in, rec, err := s.callback(fake.authorize(authURL), cookies, "idp")
	if err != nil {
		t.Fatal(err)
	}
	acc := assertSignedIn(t, s.store, in, rec, cookies, "idp", "ada@example.com", time.Hour)
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

	// The browser's cookies were cleared: coming back again without them
	// fails before the code is used.
	_, _, err = s.callback(fake.authorize(authURL), nil, "idp")
	if !errors.Is(err, oauth.ErrVerifierMissing) && !errors.Is(err, oauth.ErrStateMissing) {
		t.Errorf("callback without cookies: %v", err)
	}
}

// TestNegative runs every rejected callback on a fresh store, and checks
// that the rejection has its typed error, stored nothing, and cleared the
// check cookies.
func TestNegative(t *testing.T) {
	all := []provider.Check{provider.CheckPKCE, provider.CheckState, provider.CheckNonce}
	cases := []struct {
		name   string
		checks []provider.Check
		// arrange edits the fake before the callback; back and cookies are
		// what the browser brings back.
		arrange func(f *fakeProvider, back *url.URL, cookies *[]*http.Cookie)
		want    []error
	}{
		{"wrong state", all, func(_ *fakeProvider, back *url.URL, _ *[]*http.Cookie) {
			setQuery(back, "state", "forged")
		}, []error{oauth.ErrStateMismatch}},
		{"no state parameter", all, func(_ *fakeProvider, back *url.URL, _ *[]*http.Cookie) {
			setQuery(back, "state", "")
		}, []error{oauth.ErrStateMissing}},
		{"no state cookie", all, func(_ *fakeProvider, _ *url.URL, cookies *[]*http.Cookie) {
			*cookies = without(*cookies, "authjs.state")
		}, []error{oauth.ErrStateMissing}},
		{"state cookie altered", all, func(_ *fakeProvider, _ *url.URL, cookies *[]*http.Cookie) {
			for _, c := range *cookies {
				if c.Name == "authjs.state" {
					c.Value = c.Value[:len(c.Value)-4] + "AAAA"
				}
			}
		}, []error{oauth.ErrStateMissing, jwt.ErrInvalidToken}},
		{"state cookie of another flow (same value, other cookie)", all, func(_ *fakeProvider, _ *url.URL, cookies *[]*http.Cookie) {
			// The nonce cookie's sealed value under the state cookie's name:
			// the cookie name is the salt, so it does not open.
			var nonce string
			for _, c := range *cookies {
				if c.Name == "authjs.nonce" {
					nonce = c.Value
				}
			}
			for _, c := range *cookies {
				if c.Name == "authjs.state" {
					c.Value = nonce
				}
			}
		}, []error{oauth.ErrStateMissing}},
		{"no PKCE verifier cookie", all, func(_ *fakeProvider, _ *url.URL, cookies *[]*http.Cookie) {
			*cookies = without(*cookies, "authjs.pkce.code_verifier")
		}, []error{oauth.ErrVerifierMissing}},
		{"no nonce cookie", all, func(_ *fakeProvider, _ *url.URL, cookies *[]*http.Cookie) {
			*cookies = without(*cookies, "authjs.nonce")
		}, []error{oauth.ErrNonceMissing}},
		{"replayed code", all, func(f *fakeProvider, back *url.URL, _ *[]*http.Cookie) {
			f.redeem(back.Query().Get("code"))
		}, []error{oauth.ErrTokenExchange}},
		{"id_token signed by another key", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.signWith = f.other
		}, []error{oauth.ErrIDTokenInvalid}},
		{"wrong audience", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.claims = func(c map[string]any) { c["aud"] = "another-client" }
		}, []error{oauth.ErrIDTokenInvalid}},
		{"several audiences, azp another client", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.claims = func(c map[string]any) { c["aud"] = []string{fakeClientID, "other"}; c["azp"] = "other" }
		}, []error{oauth.ErrIDTokenInvalid}},
		{"wrong issuer", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.claims = func(c map[string]any) { c["iss"] = "https://evil.example.com" }
		}, []error{oauth.ErrIDTokenInvalid}},
		{"expired id_token", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.claims = func(c map[string]any) {
				c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
				c["exp"] = time.Now().Add(-time.Hour).Unix()
			}
		}, []error{oauth.ErrIDTokenInvalid}},
		{"wrong nonce", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.claims = func(c map[string]any) { c["nonce"] = "another nonce" }
		}, []error{oauth.ErrNonceMismatch}},
		{"no nonce in the id_token", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.claims = func(c map[string]any) { delete(c, "nonce") }
		}, []error{oauth.ErrNonceMismatch}},
		{"OIDC without id_token", all, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.omitIDToken = true
		}, []error{oauth.ErrIDTokenMissing, provider.ErrMissingIDToken}},
		{"OIDC without id_token, idToken false", nil, func(f *fakeProvider, _ *url.URL, _ *[]*http.Cookie) {
			f.omitIDToken = true
		}, []error{oauth.ErrIDTokenMissing}},
		{"access_denied", all, func(_ *fakeProvider, back *url.URL, _ *[]*http.Cookie) {
			setQuery(back, "code", "")
			setQuery(back, "error", "access_denied")
			setQuery(back, "error_description", "The user declined")
		}, []error{oauth.ErrProviderError}},
		{"no code", all, func(_ *fakeProvider, back *url.URL, _ *[]*http.Cookie) {
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
			s := newSetup(t, fake.client, testBase, p)
			authURL, cookies := s.begin(t, "idp")
			back := fake.authorize(authURL)
			tc.arrange(fake, back, &cookies)
			in, rec, err := s.callback(back, cookies, "idp")
			if err == nil {
				t.Fatalf("signed in %+v, want an error", in)
			}
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("error %q does not match %q", err, want)
				}
			}
			t.Logf("error: %v", err)
			if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Accounts)+len(snap.Sessions) != 0 {
				t.Errorf("stored %+v after a rejected callback", snap)
			}
			for _, c := range cookies {
				if !dropped(rec, c.Name) {
					t.Errorf("check cookie %s not cleared", c.Name)
				}
			}
		})
	}
}

func TestProviderErrorDetails(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL()))
	authURL, cookies := s.begin(t, "idp")
	back := fake.authorize(authURL)
	setQuery(back, "code", "")
	setQuery(back, "error", "access_denied")
	setQuery(back, "error_description", "The user declined")
	_, _, err := s.callback(back, cookies, "idp")
	var pe *oauth.ProviderError
	if !errors.As(err, &pe) || pe.Code != "access_denied" || pe.Description != "The user declined" || pe.ProviderID != "idp" {
		t.Fatalf("error %v, want a *ProviderError with the details", err)
	}
}

func TestReplayedCodeIsATokenEndpointError(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL()))
	authURL, cookies := s.begin(t, "idp")
	back := fake.authorize(authURL)
	fake.redeem(back.Query().Get("code"))
	_, _, err := s.callback(back, cookies, "idp")
	var re *oauth2.RetrieveError
	if !errors.Is(err, oauth.ErrTokenExchange) || !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("error %v, want ErrTokenExchange around invalid_grant", err)
	}
}

func setQuery(u *url.URL, k, v string) {
	q := u.Query()
	if v == "" {
		q.Del(k)
	} else {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
}

func without(cs []*http.Cookie, name string) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range cs {
		if c.Name != name {
			out = append(out, c)
		}
	}
	return out
}

// beginWith runs Begin with the sign-in request's parameter sets and
// returns the authorization URL's query.
func beginWith(t *testing.T, f *oauth.Flow, sets ...url.Values) url.Values {
	t.Helper()
	authURL, err := f.Begin(context.Background(), httptest.NewRecorder(), "idp", sets...)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	u, err := url.Parse(authURL)
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
		_, err := s.flow.Begin(context.Background(), httptest.NewRecorder(), "idp", url.Values{"login_hint": {v}})
		if !errors.Is(err, oauth.ErrInvalidParams) {
			t.Errorf("%s: %v, want ErrInvalidParams", name, err)
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
		if !errors.Is(err, oauth.ErrInvalidConfig) {
			t.Errorf("AuthorizationParams %q: %v, want ErrInvalidConfig", n, err)
		}
	}
}
