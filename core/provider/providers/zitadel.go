package providers

import "github.com/authport/authport/core/provider"

// ZitadelProfile is the claims of a ZITADEL ID token.
type ZitadelProfile struct {
	StandardClaims
	Gender      string `json:"gender,omitempty"`
	PhoneNumber string `json:"phone_number,omitempty"`
}

// Zitadel returns the ZITADEL OpenID Connect provider (id "zitadel").
// issuer is the instance's URL, e.g. https://example-abc.zitadel.cloud.
func Zitadel(clientID, clientSecret, issuer string) *provider.OIDCConfig[ZitadelProfile] {
	return oidcBuiltIn("zitadel", "ZITADEL", "#000000", "", clientID, clientSecret, StandardClaimsUser[ZitadelProfile], baseURL(issuer))
}
