package providers

import "github.com/authport/authport/core/provider"

// VippsProfile is the Vipps MobilePay userinfo response.
type VippsProfile struct {
	StandardClaims
	PhoneNumber string `json:"phone_number,omitempty"`
	SID         string `json:"sid,omitempty"`
}

// Vipps returns the Vipps MobilePay Login OpenID Connect provider (id
// "vipps", issuer https://api.vipps.no/access-management-1.0/access/, with
// its trailing slash), asking for openid, name and email, with the pkce,
// state and nonce checks. The profile comes from the userinfo endpoint
// (IDToken false).
func Vipps(clientID, clientSecret string) *provider.OIDCConfig[VippsProfile] {
	c := oidcBuiltIn("vipps", "Vipps", "#ff5b24", "pkce state nonce", clientID, clientSecret, StandardClaimsUser[VippsProfile], "https://api.vipps.no/access-management-1.0/access/")
	c.Authorization = provider.Endpoint{Params: params("scope", "openid name email")}
	no := false
	c.IDToken = &no
	return c
}
