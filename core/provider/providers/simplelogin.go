package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// SimpleLoginProfile is the claims of a SimpleLogin ID token.
type SimpleLoginProfile struct {
	StandardClaims
	AvatarURL string `json:"avatar_url,omitempty"`
	ID        int64  `json:"id,omitempty"`
}

// SimpleLoginUser maps a SimpleLogin profile: sub, email, name,
// avatar_url.
func SimpleLoginUser(_ context.Context, p SimpleLoginProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Sub, Email: p.Email, Name: str(p.Name), Image: str(first(p.AvatarURL, p.Picture))}, nil
}

// SimpleLogin returns the Sign in with SimpleLogin OpenID Connect
// provider (id "simplelogin", issuer https://app.simplelogin.io).
func SimpleLogin(clientID, clientSecret string) *provider.OIDCConfig[SimpleLoginProfile] {
	return oidcBuiltIn("simplelogin", "SimpleLogin", "#e3156a", "", clientID, clientSecret, SimpleLoginUser, "https://app.simplelogin.io")
}
