package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// NetlifyProfile is the Netlify user (GET /api/v1/user).
type NetlifyProfile struct {
	ID        string `json:"id"`
	UID       string `json:"uid"`
	FullName  string `json:"full_name"`
	AvatarURL string `json:"avatar_url"`
	Email     string `json:"email"`
	Slug      string `json:"slug"`
}

// NetlifyUser maps a Netlify user: id, email, full_name (else slug),
// avatar_url.
func NetlifyUser(_ context.Context, p NetlifyProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(first(p.FullName, p.Slug)), Image: str(p.AvatarURL)}, nil
}

// Netlify returns the Netlify OAuth 2.0 provider (id "netlify") with the
// state check.
func Netlify(clientID, clientSecret string) *provider.OAuth2Config[NetlifyProfile] {
	return oauthBuiltIn("netlify", "Netlify", "#32e6e2", "state post", clientID, clientSecret, NetlifyUser,
		"https://app.netlify.com/authorize", "", "https://api.netlify.com/oauth/token", "https://api.netlify.com/api/v1/user")
}
