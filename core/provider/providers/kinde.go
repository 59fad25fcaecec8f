package providers

import "github.com/authport/authport/core/provider"

// KindeProfile is the claims of a Kinde ID token.
type KindeProfile struct {
	StandardClaims
	OrgCodes []string `json:"org_codes,omitempty"`
}

// Kinde returns the Kinde OpenID Connect provider (id "kinde") with the
// pkce and state checks. issuer is the business domain, e.g.
// https://example.kinde.com.
func Kinde(clientID, clientSecret, issuer string) *provider.OIDCConfig[KindeProfile] {
	return oidcBuiltIn("kinde", "Kinde", "#000000", "pkce state", clientID, clientSecret, StandardClaimsUser[KindeProfile], baseURL(issuer))
}
