package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/oauth"
)

// githubUserinfo answers as GitHub's API: a profile without a public
// e-mail address, and the address list the GitHub provider reads then.
func githubUserinfo(path string) any {
	switch path {
	case "api.github.com/user":
		return map[string]any{"id": 1234, "login": "ada", "name": nil, "email": nil, "avatar_url": "https://avatars.example.com/1234"}
	case "api.github.com/user/emails":
		return []map[string]any{
			{"email": "unverified@example.com", "primary": false, "verified": false},
			{"email": "old@example.com", "primary": false, "verified": true},
			{"email": "ada@example.com", "primary": true, "verified": true},
		}
	case "gitlab.com/api/v4/user":
		return map[string]any{"id": 99, "username": "ada", "name": "Ada Lovelace", "email": "ada@example.com", "avatar_url": "https://gitlab.example.com/ada.png"}
	case "discord.com/api/users/@me":
		return map[string]any{"id": "80351110224678912", "username": "ada", "discriminator": "0", "global_name": "Ada Lovelace",
			"email": "ada@example.com", "avatar": nil, "verified": true}
	}
	return nil
}

// builtinCase is one built-in provider's run through the flow: what the
// authorization URL must carry, how the client authenticates, the
// provider's documented responses (the fixture) and the user and account
// they must produce.
type builtinCase struct {
	id              string
	cfg             providers.UserConfig
	authURL         string            // the authorization endpoint (scheme, host, path)
	params          map[string]string // parameters the authorization URL must carry
	absent          []string          // parameters it must not carry
	checks          string            // when set, exactly these checks' parameters are sent: "pkce,state,nonce" or a subset
	method          string            // client authentication at the token endpoint
	oauth2          bool              // an OAuth 2.0 provider: no id_token, profile from userinfo
	form            bool              // token response form-encoded (GitHub)
	post            bool              // response_mode=form_post: the callback is a POST
	accountID, name string

	// The fixture: the provider's documented responses.
	userinfo map[string]any    // userinfo bodies by host+path; a key ending in * matches by prefix
	claims   map[string]any    // ID token (and OIDC userinfo) profile claims; nil keeps the fake's
	token    map[string]any    // extra members of the token response
	issuers  map[string]string // issuer overrides by host+path prefix (trailing slashes, /oauth)
	tokenVia string            // how userinfo requests carry the token; "" means Bearer when userinfo is called
	headers  map[string]string // headers every userinfo request must carry (":method" for its method)
	// want, when set, is the expected user: email and image exactly ("" for
	// none); otherwise ada@example.com with any image.
	want *wantUser
}

// wantUser is the user a fixture must produce.
type wantUser struct{ email, image string }

// TestBuiltInProviders drives every OAuth and OIDC built-in, as the
// registry builds it, through Begin and Callback against the fake, which
// answers for its real hosts with the provider's fixture (the first twelve
// below, the others in builtin_fixtures_test.go), and requires a case for
// each built-in.
func TestBuiltInProviders(t *testing.T) {
	oidcParams := map[string]string{"scope": "openid profile email", "code_challenge_method": "S256"}
	cases := []builtinCase{
		{id: "github", authURL: "https://github.com/login/oauth/authorize", oauth2: true, form: true,
			params: map[string]string{"scope": "read:user user:email", "code_challenge_method": "S256"}, absent: []string{"nonce"},
			method: "client_secret_basic", accountID: "1234", name: "ada"},
		{id: "gitlab", authURL: "https://gitlab.com/oauth/authorize", oauth2: true,
			params: map[string]string{"scope": "read_user", "code_challenge_method": "S256"}, absent: []string{"nonce", "state"},
			method: "client_secret_basic", accountID: "99", name: "Ada Lovelace"},
		{id: "discord", authURL: "https://discord.com/api/oauth2/authorize", oauth2: true,
			params: map[string]string{"scope": "identify email", "code_challenge_method": "S256"},
			method: "client_secret_basic", accountID: "80351110224678912", name: "Ada Lovelace"},
		{id: "google", authURL: "https://accounts.google.com/authorize", params: oidcParams, absent: []string{"nonce", "state"},
			method: "client_secret_basic", accountID: sub("accounts.google.com"), name: "Ada Lovelace"},
		{id: "microsoft-entra-id", authURL: "https://login.microsoftonline.com/common/v2.0/authorize",
			params: map[string]string{"scope": "openid profile email User.Read", "code_challenge_method": "S256"},
			method: "client_secret_basic", accountID: sub("login.microsoftonline.com"), name: "Ada Lovelace"},
		{id: "apple", authURL: "https://appleid.apple.com/authorize", post: true,
			params: map[string]string{"scope": "name email", "response_mode": "form_post", "code_challenge_method": "S256"},
			method: "client_secret_post", accountID: sub("appleid.apple.com"), name: "Ada Byron"},
		{id: "auth0", cfg: providers.UserConfig{Issuer: "example.eu.auth0.com"}, authURL: "https://example.eu.auth0.com/authorize",
			params: oidcParams, method: "client_secret_basic", accountID: sub("example.eu.auth0.com"), name: "Ada Lovelace"},
		{id: "keycloak", cfg: providers.UserConfig{Issuer: "https://sso.example.com/realms/test"}, authURL: "https://sso.example.com/realms/test/authorize",
			params: oidcParams, method: "client_secret_basic", accountID: sub("sso.example.com"), name: "Ada Lovelace"},
		{id: "okta", cfg: providers.UserConfig{Issuer: "dev-1.okta.com/oauth2/default"}, authURL: "https://dev-1.okta.com/oauth2/default/authorize",
			params: oidcParams, method: "client_secret_basic", accountID: sub("dev-1.okta.com"), name: "Ada Lovelace"},
		{id: "slack", authURL: "https://slack.com/authorize", params: map[string]string{"scope": "openid profile email"},
			absent: []string{"code_challenge", "state"}, method: "client_secret_basic", accountID: sub("slack.com"), name: "Ada Lovelace"},
		{id: "twitch", authURL: "https://id.twitch.tv/oauth2/authorize",
			params: map[string]string{"scope": "openid user:read:email", "claims": `{"id_token":{"email":null,"picture":null,"preferred_username":null}}`},
			method: "client_secret_post", accountID: sub("id.twitch.tv"), name: "ada"},
		{id: "linkedin", authURL: "https://www.linkedin.com/oauth/authorize", params: oidcParams,
			method: "client_secret_post", accountID: sub("www.linkedin.com"), name: "Ada Lovelace"},
	}
	cases = append(cases, builtinFixtures()...)
	registry := providers.BuiltIns()
	// Every OAuth and OIDC built-in has a case, and only once.
	seen := map[string]int{}
	for _, c := range cases {
		seen[c.id]++
	}
	var oauthIDs int
	for _, id := range registry.IDs() {
		if _, ok := registry[id](providers.UserConfig{}).(provider.OAuthProvider); !ok {
			continue
		}
		oauthIDs++
		if seen[id] != 1 {
			t.Errorf("built-in %s has %d cases, want 1", id, seen[id])
		}
	}
	if oauthIDs < 60 || oauthIDs != len(cases) {
		t.Errorf("%d OAuth/OIDC built-ins, %d cases; want at least 60, each with a case", oauthIDs, len(cases))
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			fake := newFakeProvider(t)
			fake.userinfo = githubUserinfo
			if c.userinfo != nil {
				fake.userinfo = fixtureUserinfo(c.userinfo)
			}
			if c.claims != nil {
				fake.profile = c.claims
			}
			fake.extraTokens = c.token
			fake.omitIDToken = c.oauth2
			fake.tokenForm = c.form
			fake.issuers["example.eu.auth0.com"] = "https://example.eu.auth0.com/" // Auth0's trailing slash
			for k, v := range c.issuers {
				fake.issuers[k] = v
			}
			if registry[c.id] == nil {
				t.Fatalf("%s is not a built-in", c.id)
			}
			cfg := c.cfg
			cfg.ClientID, cfg.ClientSecret = fakeClientID, fakeClientSecret
			s := newSetup(t, fake.client, "https://app.example.com/api/auth", registry[c.id](cfg))

			begun := s.authorization(t, c.id)
			authURL, checks := begun.URL, begun.Checks
			u, err := url.Parse(authURL)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if got := u.Scheme + "://" + u.Host + u.Path; got != c.authURL {
				t.Errorf("authorization endpoint %s, want %s", got, c.authURL)
			}
			want := map[string]string{"client_id": fakeClientID, "response_type": "code",
				"redirect_uri": "https://app.example.com/api/auth/callback/" + c.id}
			for k, v := range c.params {
				want[k] = v
			}
			for k, v := range want {
				if q.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v)
				}
			}
			if c.checks != "" {
				for check, param := range map[string]string{"pkce": "code_challenge", "state": "state", "nonce": "nonce"} {
					if want := slices.Contains(strings.Split(c.checks, ","), check); q.Has(param) != want {
						t.Errorf("%s sent: %v, want %v (checks %s)", param, q.Has(param), want, c.checks)
					}
				}
			}
			for _, k := range c.absent {
				if q.Has(k) {
					t.Errorf("%s sent: %s", k, authURL)
				}
			}
			// Apple posts the callback cross-site: the caller's check
			// cookies must be SameSite=None to come with it.
			if begun.FormPost != c.post {
				t.Errorf("FormPost %v, want %v", begun.FormPost, c.post)
			}
			if c.checks != "" {
				if got := strings.Join(checkNames(checks), ","); got != c.checks {
					t.Errorf("check values %s, want %s", got, c.checks)
				}
			}

			var signedIn *core.User
			signedInAlready := false
			callback := func(signedInAlready bool) (*auth.SignIn, error) {
				back := fake.authorize(authURL)
				// The callback's parameters: the query, or the form a
				// form_post provider posts.
				params := back.Query()
				if c.post {
					params.Set("user", `{"name":{"firstName":"Ada","lastName":"Byron"},"email":"ada@example.com"}`)
				}
				var current *core.User
				if signedInAlready {
					current = signedIn
				}
				return s.flow.Callback(context.Background(), c.id, params, checks, current)
			}
			// A provider that gives no e-mail address makes a new user
			// without one (as Auth.js does; auth.Config.RequireEmail
			// refuses it); removed again, its account is then linked to
			// the user signed in already.
			noEmail := c.want != nil && c.want.email == ""
			if noEmail {
				ctx := context.Background()
				si, err := callback(false)
				if err != nil || si.User.Email != "" || !si.IsNewUser {
					t.Fatalf("Callback without e-mail and session: %+v, %v; want a new user without an address", si, err)
				}
				if _, err := s.store.DeleteUser(ctx, si.User.ID); err != nil {
					t.Fatal(err)
				}
				if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Accounts)+len(snap.Sessions) != 0 {
					t.Fatalf("the deleted user left %+v", snap)
				}
				fake.authUsed, fake.tokenVia, fake.userinfoHeaders = nil, nil, nil
				signedIn, err = s.store.CreateUser(ctx, core.User{ID: "u-1", Email: "ada@example.com", Name: str("Ada")})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.store.CreateSession(ctx, core.Session{SessionToken: "sess-1", UserID: "u-1", Expires: time.Now().Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
				// The signed-in caller, as the handler reads it from the
				// session and passes it.
				signedInAlready = true
				// The failed callback used up the check values (they are
				// single-use on the server): sign in again.
				authURL, checks = s.begin(t, c.id)
			}
			in, err := callback(signedInAlready)
			if err != nil {
				t.Fatalf("Callback: %v", err)
			}
			snap := s.store.Snapshot()
			if len(snap.Users) != 1 || len(snap.Accounts) != 1 || len(snap.Sessions) != 1 {
				t.Fatalf("stored %+v", snap)
			}
			acc := snap.Accounts[0]
			wantType := core.AccountTypeOIDC
			if c.oauth2 {
				wantType = core.AccountTypeOAuth
			}
			if acc.ProviderAccountID != c.accountID || acc.Type != wantType || acc.UserID != in.User.ID || acc.AccessToken == nil {
				t.Errorf("account %+v, want id %s type %s", acc, c.accountID, wantType)
			}
			if (acc.IDToken == nil) != c.oauth2 {
				t.Errorf("account id_token %v", acc.IDToken)
			}
			if noEmail {
				if in.User.ID != signedIn.ID {
					t.Errorf("account linked to %s, want the signed-in %s", in.User.ID, signedIn.ID)
				}
				checkMapping(t, registry[c.id](cfg), c)
			} else if c.want == nil {
				if in.User.Email != "ada@example.com" || in.User.Name == nil || *in.User.Name != c.name {
					t.Errorf("user %+v, want ada@example.com named %q", in.User, c.name)
				}
			} else if in.User.Email != c.want.email || deref(in.User.Name) != c.name || deref(in.User.Image) != c.want.image {
				t.Errorf("user email %q name %q image %q, want %q %q %q",
					in.User.Email, deref(in.User.Name), deref(in.User.Image), c.want.email, c.name, c.want.image)
			}
			wantVia := c.tokenVia
			if wantVia == "" {
				wantVia = "Bearer"
			}
			for _, via := range fake.tokenVia {
				if via != wantVia {
					t.Errorf("userinfo got the token by %s, want %s", via, wantVia)
				}
			}
			if c.tokenVia != "" && len(fake.tokenVia) == 0 {
				t.Errorf("userinfo never called")
			}
			if len(c.headers) > 0 && len(fake.userinfoHeaders) == 0 {
				t.Errorf("userinfo never called")
			}
			for _, h := range fake.userinfoHeaders {
				for k, v := range c.headers {
					if h.Get(k) != v {
						t.Errorf("userinfo request header %s: %q, want %q", k, h.Get(k), v)
					}
				}
			}
			if len(fake.authUsed) != 1 || fake.authUsed[0] != c.method {
				t.Errorf("client authentication %v, want %s", fake.authUsed, c.method)
			}
			if noEmail {
				return // the session is the one signed in already
			}
			// The flow creates the session; its cookie is the handler's.
			if in.Session.SessionToken == "" {
				t.Errorf("no session in %+v", in)
			}
		})
	}
}

func str(s string) *string { return &s }

// checkMapping maps a fixture's profile (the OIDC claims, or the one
// userinfo body) with the provider's profile callback and compares it
// with the fixture's expected user: for providers whose user is not
// created from the profile.
func checkMapping(t *testing.T, p provider.Provider, c builtinCase) {
	t.Helper()
	body := any(c.claims)
	if c.claims == nil {
		if len(c.userinfo) != 1 {
			t.Fatalf("checkMapping needs one userinfo body, have %d", len(c.userinfo))
		}
		for _, b := range c.userinfo {
			body = b
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	u, err := p.(provider.OAuthProvider).ProfileFromJSON(context.Background(), raw, provider.TokenSet{})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != c.accountID || u.Email != c.want.email || deref(u.Name) != c.name || deref(u.Image) != c.want.image {
		t.Errorf("profile maps to id %q email %q name %q image %q, want %q %q %q %q",
			u.ID, u.Email, deref(u.Name), deref(u.Image), c.accountID, c.want.email, c.name, c.want.image)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fixtureUserinfo answers userinfo requests from a fixture's bodies by
// host+path (a key ending in * matches by prefix).
func fixtureUserinfo(bodies map[string]any) func(string) any {
	return func(path string) any {
		if b, ok := bodies[path]; ok {
			return b
		}
		for k, b := range bodies {
			if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(path, p) {
				return b
			}
		}
		return nil
	}
}

// TestGitHubShapedOAuth2 is the non-OIDC path in detail: a form-encoded
// token response, the profile from /user, the e-mail from /user/emails,
// and the scope kept on the account.
func TestGitHubShapedOAuth2(t *testing.T) {
	fake := newFakeProvider(t)
	fake.userinfo = githubUserinfo
	fake.omitIDToken = true
	fake.tokenForm = true
	s := newSetup(t, fake.client, testBase, providers.GitHub(fakeClientID, fakeClientSecret))
	authURL, checks := s.begin(t, "github")
	if got := strings.Join(checkNames(checks), ","); got != "pkce" {
		t.Errorf("checks %s, want the PKCE verifier only (GitHub's checks are the default, pkce)", got)
	}
	in, err := s.callback(fake.authorize(authURL), checks, "github")
	if err != nil {
		t.Fatal(err)
	}
	acc := assertSignedIn(t, s.store, in, "github", "ada@example.com", time.Hour)
	if acc.Type != core.AccountTypeOAuth || acc.ProviderAccountID != "1234" || acc.Scope == nil || *acc.Scope != "read:user user:email" ||
		acc.IDToken != nil || acc.RefreshToken == nil {
		t.Errorf("account %+v", acc)
	}
	if in.User.Image == nil || *in.User.Image != "https://avatars.example.com/1234" {
		t.Errorf("user %+v", in.User)
	}

	// Signing in again finds the account and makes a second session for
	// the same user.
	authURL, checks = s.begin(t, "github")
	again, err := s.callback(fake.authorize(authURL), checks, "github")
	if err != nil {
		t.Fatal(err)
	}
	if again.User.ID != in.User.ID || again.IsNewUser {
		t.Errorf("second sign-in %+v, want the same user", again)
	}
	if snap := s.store.Snapshot(); len(snap.Users) != 1 || len(snap.Accounts) != 1 || len(snap.Sessions) != 2 {
		t.Errorf("stored %+v", snap)
	}
}

func TestBeginErrors(t *testing.T) {
	fake := newFakeProvider(t)
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL()+"/nowhere"), provider.Credentials(
		func(context.Context, provider.AuthorizeRequest) (*provider.User, error) { return nil, nil }))
	if _, err := s.flow.Begin(context.Background(), "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := s.flow.Begin(context.Background(), "credentials"); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("credentials provider: %v", err)
	}
	// The fake serves no discovery document there.
	a, err := s.flow.Begin(context.Background(), "idp")
	if !errors.Is(err, oauth.ErrDiscovery) || auth.CodeOf(err) != auth.CodeOAuthSignin {
		t.Errorf("undiscoverable issuer: %v", err)
	}
	if a.URL != "" || len(checkNames(a.Checks)) != 0 {
		t.Errorf("a failed Begin gave %+v", a)
	}
}

func TestIssuerMismatchIsADiscoveryError(t *testing.T) {
	fake := newFakeProvider(t)
	fake.issuers[strings.TrimPrefix(fake.URL(), "http://")] = "https://other.example.com"
	s := newSetup(t, fake.client, testBase, oidcProvider(fake.URL()))
	_, err := s.flow.Begin(context.Background(), "idp")
	if !errors.Is(err, oauth.ErrDiscovery) || !strings.Contains(err.Error(), "other.example.com") {
		t.Errorf("error %v, want ErrDiscovery naming the discovered issuer", err)
	}
}
