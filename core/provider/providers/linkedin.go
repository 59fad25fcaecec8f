package providers

import (
	"context"
	"encoding/json"

	"github.com/authport/authport/core/provider"
)

// LinkedInProfile is the claims of a Sign In with LinkedIn (OpenID
// Connect) ID token.
type LinkedInProfile struct {
	StandardClaims
	// Locale is a string or an object {country, language}.
	Locale json.RawMessage `json:"locale,omitempty"`
}

// LinkedInUser is the LinkedIn profile mapping: sub, email, name, picture.
func LinkedInUser(_ context.Context, p LinkedInProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.Name), nil
}

// LinkedIn returns the Sign In with LinkedIn OpenID Connect provider (id
// "linkedin", issuer https://www.linkedin.com/oauth), asking for openid,
// profile and email, and authenticating with client_secret_post.
func LinkedIn(clientID, clientSecret string) *provider.OIDCConfig[LinkedInProfile] {
	c := oidcBuiltIn("linkedin", "LinkedIn", "#069", "post", clientID, clientSecret, LinkedInUser, "https://www.linkedin.com/oauth")
	c.WellKnown = "https://www.linkedin.com/oauth/.well-known/openid-configuration"
	c.JWKSEndpoint = "https://www.linkedin.com/oauth/openid/jwks"
	c.Authorization = provider.Endpoint{Params: params("scope", "openid profile email")}
	return c
}
