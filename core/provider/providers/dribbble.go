package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// DribbbleProfile is the Dribbble user (GET /v2/user).
type DribbbleProfile struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Login     string `json:"login"`
	Email     string `json:"email"`
	AvatarURL string `json:"avatar_url"`
}

// DribbbleUser maps a Dribbble profile: id, email, name (else login),
// avatar_url.
func DribbbleUser(_ context.Context, p DribbbleProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Email: p.Email, Name: str(first(p.Name, p.Login)), Image: str(p.AvatarURL)}, nil
}

// Dribbble returns the Dribbble OAuth 2.0 provider (id "dribbble"),
// asking for public, with the state check.
func Dribbble(clientID, clientSecret string) *provider.OAuth2Config[DribbbleProfile] {
	return oauthBuiltIn("dribbble", "Dribbble", "#ea4c89", "state post", clientID, clientSecret, DribbbleUser,
		"https://dribbble.com/oauth/authorize", "public", "https://dribbble.com/oauth/token", "https://api.dribbble.com/v2/user")
}
