package providers_test

import (
	"context"
	"fmt"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
)

// A per-deployment OAuth 2.0 provider: Mastodon takes its server's URL,
// and maps the account without an e-mail address.
func ExampleMastodon() {
	m := providers.Mastodon("my-client-id", "my-client-secret", "mastodon.social")
	o := m.Options()
	fmt.Println(o.Authorization.WithParams())
	fmt.Println("userinfo:", o.Userinfo.URL)
	fmt.Println("checks:", o.Checks, "auth:", o.Client.TokenEndpointAuthMethod)

	u, _ := m.ProfileFromJSON(context.Background(),
		[]byte(`{"id":"14715","username":"ada","display_name":"Ada Lovelace","avatar_static":"https://files.example/ada.png"}`), provider.TokenSet{})
	fmt.Printf("%s %q %s %s\n", u.ID, u.Email, *u.Name, *u.Image)
	// Output:
	// https://mastodon.social/oauth/authorize?scope=read%3Aaccounts
	// userinfo: https://mastodon.social/api/v1/accounts/verify_credentials
	// checks: [pkce state] auth: client_secret_post
	// 14715 "" Ada Lovelace https://files.example/ada.png
}

// An OIDC provider whose profile is the standard claims: ZITADEL takes
// its instance's URL as the issuer.
func ExampleZitadel() {
	z := providers.Zitadel("my-client-id", "my-client-secret", "https://example-abc.zitadel.cloud/")
	fmt.Println(z.Options().Issuer)
	u, _ := z.ProfileFromJSON(context.Background(),
		[]byte(`{"sub":"164849408374603777","email":"ada@example.com","given_name":"Ada","family_name":"Lovelace"}`), provider.TokenSet{})
	fmt.Println(u.ID, u.Email, *u.Name, u.Image == nil)
	// Output:
	// https://example-abc.zitadel.cloud
	// 164849408374603777 ada@example.com Ada Lovelace true
}

// Every built-in is listed by identifier; the OAuth and OIDC ones are
// the identity providers.
func ExampleRegistry_IDs() {
	reg := providers.BuiltIns()
	var idps int
	for _, id := range reg.IDs() {
		if _, ok := reg[id](providers.UserConfig{}).(provider.OAuthProvider); ok {
			idps++
		}
	}
	fmt.Println(idps >= 60, reg["vk"] != nil, reg["42-school"] != nil)
	// Output:
	// true true true
}
