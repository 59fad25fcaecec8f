package providers

import "github.com/authport/authport/core/provider"

// PingIDProfile is the claims of a PingOne ID token.
type PingIDProfile struct {
	StandardClaims
	Env string `json:"env,omitempty"`
	Org string `json:"org,omitempty"`
}

// PingID returns the Ping Identity (PingOne) OpenID Connect provider (id
// "ping-id"). issuer is the environment's issuer,
// https://auth.pingone.com/{environmentId}/as (other regions use
// auth.pingone.eu, .ca, .asia).
func PingID(clientID, clientSecret, issuer string) *provider.OIDCConfig[PingIDProfile] {
	return oidcBuiltIn("ping-id", "Ping Identity", "#b3282d", "", clientID, clientSecret, StandardClaimsUser[PingIDProfile], issuerURL(issuer))
}
