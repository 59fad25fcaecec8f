package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// MattermostProfile is the Mattermost user (GET /api/v4/users/me).
type MattermostProfile struct {
	ID        string `json:"id"`
	Username  string `json:"username"`
	Email     string `json:"email"`
	Nickname  string `json:"nickname"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Locale    string `json:"locale"`
}

// MattermostUser maps a Mattermost user: id, email, first and last name
// (else nickname, else username); the avatar needs authentication, so no
// picture.
func MattermostUser(_ context.Context, p MattermostProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(first(joinNonEmpty(p.FirstName, p.LastName), p.Nickname, p.Username))}, nil
}

// Mattermost returns the Mattermost OAuth 2.0 provider (id "mattermost")
// for the server at issuer, with the state check, authenticating with
// client_secret_post.
func Mattermost(clientID, clientSecret, issuer string) *provider.OAuth2Config[MattermostProfile] {
	return hostedBuiltIn("mattermost", "Mattermost", "#1e325c", "state post", clientID, clientSecret, MattermostUser,
		issuer, "/oauth/authorize", "", "/oauth/access_token", "/api/v4/users/me")
}
