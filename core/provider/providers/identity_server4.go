package providers

import "github.com/authport/authport/core/provider"

// IdentityServer4Profile is the claims of an IdentityServer4 ID token.
type IdentityServer4Profile struct{ StandardClaims }

// IdentityServer4 returns the IdentityServer4 OpenID Connect provider (id
// "identity-server4"). issuer is the server's URL.
func IdentityServer4(clientID, clientSecret, issuer string) *provider.OIDCConfig[IdentityServer4Profile] {
	return oidcBuiltIn("identity-server4", "IdentityServer4", "#4a5568", "", clientID, clientSecret, StandardClaimsUser[IdentityServer4Profile], issuerURL(issuer))
}
