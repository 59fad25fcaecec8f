package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// FigmaProfile is the Figma user (GET /v1/me).
type FigmaProfile struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Handle string `json:"handle"`
	ImgURL string `json:"img_url"`
}

// FigmaUser maps a Figma profile: id, email, handle, img_url.
func FigmaUser(_ context.Context, p FigmaProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(p.Handle), Image: str(p.ImgURL)}, nil
}

// Figma returns the Figma OAuth 2.0 provider (id "figma"), asking for
// current_user:read, with the state check, authenticating with
// client_secret_basic.
func Figma(clientID, clientSecret string) *provider.OAuth2Config[FigmaProfile] {
	return oauthBuiltIn("figma", "Figma", "#0d99ff", "state", clientID, clientSecret, FigmaUser,
		"https://www.figma.com/oauth", "current_user:read", "https://api.figma.com/v1/oauth/token", "https://api.figma.com/v1/me")
}
