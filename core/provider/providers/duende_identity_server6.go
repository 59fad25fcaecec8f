package providers

import "github.com/authport/authport/core/provider"

// DuendeIdentityServer6Profile is the claims of a Duende IdentityServer
// ID token.
type DuendeIdentityServer6Profile struct{ StandardClaims }

// DuendeIdentityServer6 returns the Duende IdentityServer OpenID Connect
// provider (id "duende-identity-server6"). issuer is the server's URL.
func DuendeIdentityServer6(clientID, clientSecret, issuer string) *provider.OIDCConfig[DuendeIdentityServer6Profile] {
	return oidcBuiltIn("duende-identity-server6", "Duende IdentityServer 6", "#3b82f6", "", clientID, clientSecret, StandardClaimsUser[DuendeIdentityServer6Profile], issuerURL(issuer))
}
