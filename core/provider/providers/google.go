package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// GoogleProfile is the claims of a Google ID token.
type GoogleProfile struct {
	StandardClaims
	Iss string `json:"iss"`
	Azp string `json:"azp"`
	HD  string `json:"hd,omitempty"`
	Iat int64  `json:"iat"`
	Exp int64  `json:"exp"`
}

// GoogleUser is the Google profile mapping: sub, email, name, picture.
func GoogleUser(_ context.Context, p GoogleProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.Name), nil
}

// Google returns the Google OpenID Connect provider (id "google", issuer
// https://accounts.google.com).
func Google(clientID, clientSecret string) *provider.OIDCConfig[GoogleProfile] {
	return oidcBuiltIn("google", "Google", "#1a73e8", "", clientID, clientSecret, GoogleUser, "https://accounts.google.com")
}
