package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// BoxProfile is the Box user (GET /2.0/users/me).
type BoxProfile struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	Login     string `json:"login"`
	AvatarURL string `json:"avatar_url"`
	Language  string `json:"language"`
	Status    string `json:"status"`
}

// BoxUser maps a Box profile: id, login (the e-mail address), name,
// avatar_url.
func BoxUser(_ context.Context, p BoxProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Login, Name: str(p.Name), Image: str(p.AvatarURL)}, nil
}

// Box returns the Box OAuth 2.0 provider (id "box") with the state check,
// authenticating with client_secret_post as Box documents.
func Box(clientID, clientSecret string) *provider.OAuth2Config[BoxProfile] {
	return oauthBuiltIn("box", "Box", "#0075C9", "state post", clientID, clientSecret, BoxUser,
		"https://account.box.com/api/oauth2/authorize", "", "https://api.box.com/oauth2/token", "https://api.box.com/2.0/users/me")
}
