package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// ZoomProfile is the Zoom user (GET /v2/users/me).
type ZoomProfile struct {
	ID            string `json:"id"`
	FirstName     string `json:"first_name"`
	LastName      string `json:"last_name"`
	DisplayName   string `json:"display_name"`
	Email         string `json:"email"`
	Type          int    `json:"type"`
	PicURL        string `json:"pic_url"`
	AccountID     string `json:"account_id"`
	Status        string `json:"status"`
	VerifiedState int    `json:"verified"`
}

// ZoomUser maps a Zoom user: id, email, display_name (else first and last
// name), pic_url.
func ZoomUser(_ context.Context, p ZoomProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(first(p.DisplayName, joinNonEmpty(p.FirstName, p.LastName))), Image: str(p.PicURL)}, nil
}

// Zoom returns the Zoom OAuth 2.0 provider (id "zoom").
func Zoom(clientID, clientSecret string) *provider.OAuth2Config[ZoomProfile] {
	return oauthBuiltIn("zoom", "Zoom", "#0b5cff", "", clientID, clientSecret, ZoomUser,
		"https://zoom.us/oauth/authorize", "", "https://zoom.us/oauth/token", "https://api.zoom.us/v2/users/me")
}
