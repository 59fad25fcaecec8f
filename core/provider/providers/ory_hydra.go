package providers

import "github.com/authport/authport/core/provider"

// OryHydraProfile is the claims of an Ory Hydra (or Ory Network) ID
// token.
type OryHydraProfile struct {
	StandardClaims
	SID string `json:"sid,omitempty"`
}

// OryHydra returns the Ory Hydra OpenID Connect provider (id
// "ory-hydra"). issuer is the Hydra public URL or the Ory Network project
// URL.
func OryHydra(clientID, clientSecret, issuer string) *provider.OIDCConfig[OryHydraProfile] {
	return oidcBuiltIn("ory-hydra", "Ory Hydra", "#0f172a", "", clientID, clientSecret, StandardClaimsUser[OryHydraProfile], issuerURL(issuer))
}
