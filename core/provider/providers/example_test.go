package providers_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
)

// An OAuth 2.0 provider: GitHub needs only the client id and secret.
func ExampleGitHub() {
	gh := providers.GitHub("my-client-id", "my-client-secret")
	gh.Authorization.Params.Set("scope", "read:user user:email repo") // ask for more

	valid, err := provider.Validate([]provider.Provider{gh})
	if err != nil {
		fmt.Println(err)
		return
	}
	o := valid[0].(provider.OAuthProvider).Options()
	fmt.Println(o.ID, o.Type)
	fmt.Println(o.Authorization.WithParams())
	fmt.Println("token:", o.Token.URL)
	fmt.Println("checks:", o.Checks)

	// The callback code maps the userinfo response to the user to create.
	u, _ := valid[0].(provider.OAuthProvider).ProfileFromJSON(context.Background(),
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
	kc := providers.Keycloak("my-client-id", "my-client-secret", "https://sso.example.com/realms/main")

	valid, err := provider.Validate([]provider.Provider{kc},
		provider.WithRedirectProxyURL("https://auth.example.com/api/auth"))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := valid[0].(provider.OAuthProvider)
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

// The registry builds built-in providers from configuration data.
func ExampleBuiltIns() {
	reg := providers.BuiltIns()
	p, err := reg.New("microsoft-entra-id", providers.UserConfig{ClientID: "id", ClientSecret: "secret", Tenant: "contoso.onmicrosoft.com"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Common().Name, p.(provider.OAuthProvider).Options().Issuer)
	// Output:
	// Microsoft Entra ID https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0
}
