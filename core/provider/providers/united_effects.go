package providers

import "github.com/authport/authport/core/provider"

// UnitedEffectsProfile is the claims of a United Effects ID token.
type UnitedEffectsProfile struct{ StandardClaims }

// UnitedEffects returns the United Effects OpenID Connect provider (id
// "united-effects"), asking for openid, email and profile with the issuer
// as the resource indicator. issuer is the auth group's URL,
// https://auth.unitedeffects.com/{authGroupId}.
func UnitedEffects(clientID, clientSecret, issuer string) *provider.OIDCConfig[UnitedEffectsProfile] {
	is := issuerURL(issuer)
	c := oidcBuiltIn("united-effects", "United Effects", "#000000", "", clientID, clientSecret, StandardClaimsUser[UnitedEffectsProfile], is)
	c.Authorization = provider.Endpoint{Params: params("scope", "openid email profile", "resource", is)}
	return c
}
