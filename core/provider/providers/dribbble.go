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

// Dribbble returns the Dribbble OAuth 2.0 provider (id "dribbble"),
// asking for public, with the state check.
func Dribbble(clientID, clientSecret string) *provider.OAuth2Config[DribbbleProfile] {
	c := oauthBuiltIn("dribbble", "Dribbble", "https://dribbble.com/oauth/authorize", "public",
		"https://dribbble.com/oauth/token", "https://api.dribbble.com/v2/user", clientID, clientSecret, DribbbleUser, "#ea4c89")
	c.Checks = provider.Checks{provider.CheckState}
	c.Client = postAuth()
	return c
}

// DribbbleUser maps a Dribbble profile: id, email, name (else login),
// avatar_url.
func DribbbleUser(_ context.Context, p DribbbleProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Email: p.Email, Name: str(first(p.Name, p.Login)), Image: str(p.AvatarURL)}, nil
}
