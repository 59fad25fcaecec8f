package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// FortyTwoSchoolProfile is the 42 intranet user (GET /v2/me).
type FortyTwoSchoolProfile struct {
	ID            int64  `json:"id"`
	Email         string `json:"email"`
	Login         string `json:"login"`
	FirstName     string `json:"first_name"`
	LastName      string `json:"last_name"`
	UsualFullName string `json:"usual_full_name"`
	Displayname   string `json:"displayname"`
	Image         struct {
		Link string `json:"link"`
	} `json:"image"`
	ImageURL string `json:"image_url,omitempty"`
}

// FortyTwoSchoolUser maps a 42 profile: id, email, usual_full_name (else
// displayname, else login), image.link (else image_url).
func FortyTwoSchoolUser(_ context.Context, p FortyTwoSchoolProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Email: p.Email, Name: str(first(p.UsualFullName, p.Displayname, p.Login)),
		Image: str(first(p.Image.Link, p.ImageURL))}, nil
}

// FortyTwoSchool returns the 42 School OAuth 2.0 provider (id
// "42-school"), asking for public, with the state check.
func FortyTwoSchool(clientID, clientSecret string) *provider.OAuth2Config[FortyTwoSchoolProfile] {
	return oauthBuiltIn("42-school", "42 School", "#000000", "state", clientID, clientSecret, FortyTwoSchoolUser,
		"https://api.intra.42.fr/oauth/authorize", "public", "https://api.intra.42.fr/oauth/token", "https://api.intra.42.fr/v2/me")
}
