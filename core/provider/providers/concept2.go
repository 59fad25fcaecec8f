package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// Concept2Profile is the Concept2 Logbook user (GET /api/users/me).
type Concept2Profile struct {
	Data Concept2ProfileData `json:"data"`
}

// Concept2ProfileData is the Data member of [Concept2Profile].
type Concept2ProfileData struct {
	ID           int64  `json:"id"`
	Username     string `json:"username"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name"`
	Email        string `json:"email"`
	ProfileImage string `json:"profile_image"`
	Country      string `json:"country"`
}

// Concept2User maps a Concept2 user: data.id, email, username (else first
// and last name), profile_image.
func Concept2User(_ context.Context, p Concept2Profile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.Data.ID), Email: p.Data.Email, Name: str(first(p.Data.Username, joinNonEmpty(p.Data.FirstName, p.Data.LastName))), Image: str(p.Data.ProfileImage)}, nil
}

// Concept2 returns the Concept2 Logbook OAuth 2.0 provider (id
// "concept2"), asking for user:read and results:write (comma-separated, as
// Concept2 takes them), with the state check, authenticating with
// client_secret_post.
func Concept2(clientID, clientSecret string) *provider.OAuth2Config[Concept2Profile] {
	return oauthBuiltIn("concept2", "Concept2", "#003a70", "state post", clientID, clientSecret, Concept2User,
		"https://log.concept2.com/oauth/authorize", "user:read,results:write", "https://log.concept2.com/oauth/access_token", "https://log.concept2.com/api/users/me")
}
