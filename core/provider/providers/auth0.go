package providers

import (
	"context"
	"net/url"

	"github.com/authport/authport/core/provider"
)

// Auth0Profile is the Auth0 user profile (ID token claims or /userinfo).
type Auth0Profile struct {
	StandardClaims
	// UpdatedAt is Auth0's updated_at, an ISO 8601 time.
	UpdatedAt string `json:"updated_at,omitempty"`
}

// Auth0User is the Auth0 profile mapping: sub, email, name (else
// nickname), picture.
func Auth0User(_ context.Context, p Auth0Profile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.Name, p.Nickname), nil
}

// Auth0 returns the Auth0 OpenID Connect provider (id "auth0") for the
// tenant at domain: a domain such as "example.eu.auth0.com" (the issuer is
// then https://example.eu.auth0.com/, with Auth0's trailing slash) or the
// issuer URL itself.
func Auth0(clientID, clientSecret, domain string) *provider.OIDCConfig[Auth0Profile] {
	issuer := issuerURL(domain)
	if u, err := url.Parse(issuer); err == nil && u.Host != "" && u.Path == "" {
		issuer += "/"
	}
	return oidcBuiltIn("auth0", "Auth0", "#EB5424", "", clientID, clientSecret, Auth0User, issuer)
}
