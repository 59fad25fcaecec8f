package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// FronteggProfile is the claims of a Frontegg ID token.
type FronteggProfile struct {
	StandardClaims
	ProfilePictureURL string `json:"profilePictureUrl,omitempty"`
	TenantID          string `json:"tenantId,omitempty"`
}

// FronteggUser maps a Frontegg profile: sub, email, name, and picture or
// else profilePictureUrl.
func FronteggUser(_ context.Context, p FronteggProfile, _ provider.TokenSet) (provider.User, error) {
	u := p.user(p.name())
	u.Image = str(first(p.Picture, p.ProfilePictureURL))
	return u, nil
}

// Frontegg returns the Frontegg OpenID Connect provider (id "frontegg").
// issuer is the workspace's domain or URL, e.g.
// https://app-abc123.frontegg.com; Frontegg publishes its discovery
// document under /oauth.
func Frontegg(clientID, clientSecret, issuer string) *provider.OIDCConfig[FronteggProfile] {
	base := baseURL(issuer)
	c := oidcBuiltIn("frontegg", "Frontegg", "#4461f2", "", clientID, clientSecret, FronteggUser, base)
	if base != "" {
		c.WellKnown = base + "/oauth/.well-known/openid-configuration"
	}
	return c
}
