package providers

import "github.com/authport/authport/core/provider"

// RobloxProfile is the claims of a Roblox ID token.
type RobloxProfile struct {
	StandardClaims
	Profile   string `json:"profile,omitempty"`
	CreatedAt int64  `json:"created_at,omitempty"`
}

// Roblox returns the Roblox OpenID Connect provider (id "roblox", issuer
// https://apis.roblox.com/oauth/, with its trailing slash) with the pkce
// and state checks, asking for openid and profile. Roblox gives no e-mail
// address.
func Roblox(clientID, clientSecret string) *provider.OIDCConfig[RobloxProfile] {
	c := oidcBuiltIn("roblox", "Roblox", "#000000", "pkce state", clientID, clientSecret, StandardClaimsUser[RobloxProfile], "https://apis.roblox.com/oauth/")
	c.Authorization = provider.Endpoint{Params: params("scope", "openid profile")}
	return c
}
