package providers

import "github.com/authport/authport/core/provider"

// AuthentikProfile is the claims of an authentik ID token.
type AuthentikProfile struct {
	StandardClaims
	Groups []string `json:"groups,omitempty"`
}

// Authentik returns the authentik OpenID Connect provider (id
// "authentik"). issuer is the application's issuer, e.g.
// https://auth.example.com/application/o/my-app/ (authentik keeps the
// trailing slash).
func Authentik(clientID, clientSecret, issuer string) *provider.OIDCConfig[AuthentikProfile] {
	return oidcBuiltIn("authentik", "Authentik", "#fd4b2d", "", clientID, clientSecret, StandardClaimsUser[AuthentikProfile], issuerURL(issuer))
}
