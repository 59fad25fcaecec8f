package provider_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core/provider"
)

// An OAuth 2.0 provider: GitHub needs only the client id and secret.
func ExampleGitHub() {
	gh := provider.GitHub("my-client-id", "my-client-secret")
	gh.Authorization.Params.Set("scope", "read:user user:email repo") // ask for more

	providers, err := provider.Validate([]provider.Provider{gh})
	if err != nil {
		fmt.Println(err)
		return
	}
	o := providers[0].(provider.OAuthProvider).Options()
	fmt.Println(o.ID, o.Type)
	fmt.Println(o.Authorization.WithParams())
	fmt.Println("token:", o.Token.URL)
	fmt.Println("checks:", o.Checks)

	// The callback code maps the userinfo response to the user to create.
	u, _ := providers[0].(provider.OAuthProvider).ProfileFromJSON(context.Background(),
		[]byte(`{"id":1,"login":"octocat","avatar_url":"https://avatars.example/1"}`), provider.TokenSet{})
	fmt.Println(u.ID, *u.Name, *u.Image)
	// Output:
	// github oauth
	// https://github.com/login/oauth/authorize?scope=read%3Auser+user%3Aemail+repo
	// token: https://github.com/login/oauth/access_token
	// checks: [pkce]
	// 1 octocat https://avatars.example/1
}

// An OpenID Connect provider: Keycloak also needs its realm's issuer. A
// configuration-level redirect proxy adds the state check.
func ExampleKeycloak() {
	kc := provider.Keycloak("my-client-id", "my-client-secret", "https://sso.example.com/realms/main")

	providers, err := provider.Validate([]provider.Provider{kc},
		provider.WithRedirectProxyURL("https://auth.example.com/api/auth"))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := providers[0].(provider.OAuthProvider)
	o := p.Options()
	fmt.Println(o.ID, o.Type, o.Issuer)
	fmt.Println("checks:", o.Checks, "profile from ID token:", o.IDToken)

	// An OIDC callback without an id_token is rejected.
	err = p.CheckCallbackTokens(provider.TokenSet{AccessToken: "at"})
	fmt.Println(errors.Is(err, provider.ErrMissingIDToken))
	// Output:
	// keycloak oidc https://sso.example.com/realms/main
	// checks: [pkce state] profile from ID token: true
	// true
}

// A custom OIDC provider with its own profile type.
func ExampleOIDCConfig() {
	type claims struct {
		Sub   string `json:"sub"`
		Email string `json:"email"`
		Login string `json:"login"`
	}
	idp := &provider.OIDCConfig[claims]{
		ID:       "corp",
		Name:     "Corp SSO",
		Issuer:   "https://sso.corp.example",
		ClientID: "my-client-id",
		Checks:   provider.Checks{provider.CheckPKCE, provider.CheckNonce},
		Profile: func(_ context.Context, c claims, _ provider.TokenSet) (provider.User, error) {
			return provider.User{ID: c.Sub, Email: c.Email, Name: &c.Login}, nil
		},
	}
	if _, err := provider.Validate([]provider.Provider{idp}); err != nil {
		fmt.Println(err)
		return
	}
	u, _ := idp.ProfileFromJSON(context.Background(), []byte(`{"sub":"42","email":"ann@corp.example","login":"ann"}`), provider.TokenSet{})
	fmt.Println(u.ID, u.Email, *u.Name)
	// Output:
	// 42 ann@corp.example ann
}

// An e-mail provider: a sender and the function that sends the link.
func ExampleEmail() {
	send := func(ctx context.Context, req provider.VerificationRequest) error {
		fmt.Printf("to %s from %s: %s\n", req.Identifier, req.From, req.URL)
		return nil
	}
	email := provider.Email("Example <no-reply@example.com>", send)

	providers, err := provider.Validate([]provider.Provider{email})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := providers[0].(*provider.EmailConfig)
	fmt.Println(e.ID, e.Common().Type, "links valid for", e.MaxAge)

	to, err := e.Normalize("  Ann@Example.COM ")
	fmt.Println(to, err)
	_, err = e.Normalize("ann@example.com,evil@attacker.example")
	fmt.Println(errors.Is(err, provider.ErrInvalidEmail))

	_ = e.SendVerificationRequest(context.Background(), provider.VerificationRequest{
		Identifier: to, From: e.From, URL: "https://example.com/api/auth/callback/email?token=t", Expires: time.Now().Add(e.MaxAge),
	})
	// Output:
	// email email links valid for 24h0m0s
	// ann@example.com <nil>
	// true
	// to ann@example.com from Example <no-reply@example.com>: https://example.com/api/auth/callback/email?token=t
}

// Validate reports every problem at once, each naming the provider and the
// field.
func ExampleValidate() {
	broken := &provider.OAuth2Config[map[string]any]{
		ID:     "acme",
		Name:   "Acme",
		Checks: provider.Checks{provider.CheckNone, provider.CheckNonce},
	}
	_, err := provider.Validate([]provider.Provider{broken, provider.GitHub("id", "secret"), provider.GitHub("id", "secret")})
	var ve *provider.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// provider "acme" (#0): ClientID: required
	// provider "acme" (#0): Authorization.URL: an OAuth provider needs an authorization URL or WellKnown
	// provider "acme" (#0): Token.URL: an OAuth provider needs a token URL (or Token.Request) or WellKnown
	// provider "acme" (#0): Userinfo.URL: an OAuth provider needs a userinfo URL (or Userinfo.Request) or WellKnown to get the profile
	// provider "acme" (#0): Checks: nonce is for OIDC providers only
	// provider "github" (#2): ID: duplicate: provider #1 has the same id
}

// The registry builds built-in providers from configuration data.
func ExampleBuiltIns() {
	reg := provider.BuiltIns()
	p, err := reg.New("microsoft-entra-id", provider.UserConfig{ClientID: "id", ClientSecret: "secret", Tenant: "contoso.onmicrosoft.com"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Common().Name, p.(provider.OAuthProvider).Options().Issuer)
	// Output:
	// Microsoft Entra ID https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0
}

// The tokens a provider returns become the account to link.
func ExampleTokenSet_Account() {
	gh := provider.GitHub("id", "secret")
	tokens := provider.TokenSet{AccessToken: "gho_x", TokenType: "Bearer", Scope: "read:user", ExpiresIn: ptr(int64(28800))}
	now := time.Unix(1_700_000_000, 0)

	kept := gh.AccountTokens(tokens, now)
	typ, _ := gh.Common().Type.AccountType()
	acct := kept.Account("user-1", gh.ID, typ, "583231")
	fmt.Println(acct.Provider, acct.Type, acct.ProviderAccountID, *acct.TokenType, *acct.ExpiresAt, acct.ExpiresIn == nil)
	// Output:
	// github oauth 583231 bearer 1700028800 true
}

func ptr[T any](v T) *T { return &v }
