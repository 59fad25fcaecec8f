package provider

import (
	"cmp"
	"strings"
)

// EnvPrefix returns the prefix of a provider's environment variables as
// Auth.js names them: "AUTH_" and the id upper-cased with '-' as '_'
// ("microsoft-entra-id" gives "AUTH_MICROSOFT_ENTRA_ID").
func EnvPrefix(id string) string {
	return "AUTH_" + strings.ReplaceAll(strings.ToUpper(id), "-", "_")
}

// SetEnvDefaults fills an OAuth or OIDC provider's empty ClientID,
// ClientSecret and Issuer from X_ID, X_SECRET and X_ISSUER (X is
// [EnvPrefix] of its id), as Auth.js's setEnvDefaults does for a provider
// given as an object. It changes p itself; other providers are left alone.
// Endpoints a built-in derives from its issuer argument are not rebuilt:
// give such providers their issuer in the constructor, or use
// providers.FromEnv (package core/provider/providers).
func SetEnvDefaults(p Provider, getenv func(string) string) {
	if p == nil || p.isNil() {
		return
	}
	if e, ok := p.(interface {
		setEnvDefaults(id, secret, issuer string)
	}); ok {
		x := EnvPrefix(p.Common().ID)
		e.setEnvDefaults(getenv(x+"_ID"), getenv(x+"_SECRET"), getenv(x+"_ISSUER"))
	}
}

func (c *OAuth2Config[P]) setEnvDefaults(id, secret, issuer string) {
	c.ClientID = cmp.Or(c.ClientID, id)
	c.ClientSecret = cmp.Or(c.ClientSecret, secret)
	c.Issuer = cmp.Or(c.Issuer, issuer)
}
