package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// SpotifyProfile is the Spotify user (GET /v1/me).
type SpotifyProfile struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	Email       string `json:"email"`
	Country     string `json:"country"`
	Product     string `json:"product"`
	Images      []struct {
		URL    string `json:"url"`
		Height int    `json:"height"`
		Width  int    `json:"width"`
	} `json:"images"`
}

// SpotifyUser maps a Spotify user: id, email, display_name (else id), the
// first image.
func SpotifyUser(_ context.Context, p SpotifyProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{ID: p.ID, Email: p.Email, Name: str(first(p.DisplayName, p.ID))}
	if len(p.Images) > 0 {
		u.Image = str(p.Images[0].URL)
	}
	return u, nil
}

// Spotify returns the Spotify OAuth 2.0 provider (id "spotify"), asking
// for user-read-email.
func Spotify(clientID, clientSecret string) *provider.OAuth2Config[SpotifyProfile] {
	return oauthBuiltIn("spotify", "Spotify", "#1db954", "", clientID, clientSecret, SpotifyUser,
		"https://accounts.spotify.com/authorize", "user-read-email", "https://accounts.spotify.com/api/token", "https://api.spotify.com/v1/me")
}
