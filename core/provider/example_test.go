package provider_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
)

// A custom OIDC provider with its own profile type.
func ExampleOIDCConfig() {
	type claims struct {
		Sub   string `json:"sub"`
		Email string `json:"email"`
		Login string `json:"login"`
	}
	idp := &provider.OIDCConfig[claims]{OAuth2Config: provider.OAuth2Config[claims]{
		ID:       "corp",
		Name:     "Corp SSO",
		Issuer:   "https://sso.corp.example",
		ClientID: "my-client-id",
		Checks:   provider.Checks{provider.CheckPKCE, provider.CheckNonce},
		Profile: func(_ context.Context, c claims, _ provider.TokenSet) (provider.User, error) {
			return provider.User{ID: c.Sub, Email: c.Email, Name: &c.Login}, nil
		},
	}}
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

	valid, err := provider.Validate([]provider.Provider{email})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := valid[0].(*provider.EmailConfig)
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
	_, err := provider.Validate([]provider.Provider{broken, providers.GitHub("id", "secret"), providers.GitHub("id", "secret")})
	var ve *provider.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// provider "acme" (#0): ClientID: required; set it, or AUTH_ACME_ID in the environment when the provider is configured from it
	// provider "acme" (#0): Authorization.URL: an OAuth provider needs an authorization URL or WellKnown
	// provider "acme" (#0): Token.URL: an OAuth provider needs a token URL (or Token.Request) or WellKnown
	// provider "acme" (#0): Userinfo.URL: an OAuth provider needs a userinfo URL (or Userinfo.Request) or WellKnown to get the profile
	// provider "acme" (#0): Checks: nonce is for OIDC providers only
	// provider "github" (#2): ID: duplicate: provider #1 has the same id
}

// The tokens a provider returns become the account to link.
func ExampleTokenSet_Account() {
	gh := providers.GitHub("id", "secret")
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
