package providers

import "github.com/authport/authport/core/provider"

// BeyondIdentityProfile is the claims of a Beyond Identity ID token.
type BeyondIdentityProfile struct{ StandardClaims }

// BeyondIdentity returns the Beyond Identity OpenID Connect provider (id
// "beyondidentity"). issuer is the application's issuer, e.g.
// https://auth-us.beyondidentity.com/v1/tenants/{t}/realms/{r}/applications/{a}.
func BeyondIdentity(clientID, clientSecret, issuer string) *provider.OIDCConfig[BeyondIdentityProfile] {
	return oidcBuiltIn("beyondidentity", "Beyond Identity", "#5077c5", "", clientID, clientSecret, StandardClaimsUser[BeyondIdentityProfile], issuerURL(issuer))
}
