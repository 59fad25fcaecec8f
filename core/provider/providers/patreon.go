package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// PatreonProfile is the Patreon identity (GET /api/oauth2/v2/identity).
type PatreonProfile struct {
	Data struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Attributes struct {
			FullName string `json:"full_name"`
			Email    string `json:"email"`
			ImageURL string `json:"image_url"`
			Vanity   string `json:"vanity"`
		} `json:"attributes"`
	} `json:"data"`
}

// PatreonUser maps a Patreon identity: data.id and its attributes email,
// full_name, image_url.
func PatreonUser(_ context.Context, p PatreonProfile, _ provider.TokenSet) (provider.User, error) {
	a := p.Data.Attributes
	return provider.User{ID: p.Data.ID, Email: a.Email, Name: str(first(a.FullName, a.Vanity)), Image: str(a.ImageURL)}, nil
}

// Patreon returns the Patreon OAuth 2.0 provider (id "patreon"), asking
// for identity and identity[email] and reading the v2 identity with its
// full_name, email and image_url fields, with the state check,
// authenticating with client_secret_post.
func Patreon(clientID, clientSecret string) *provider.OAuth2Config[PatreonProfile] {
	c := oauthBuiltIn("patreon", "Patreon", "#e85b46", "state post", clientID, clientSecret, PatreonUser,
		"https://www.patreon.com/oauth2/authorize", "identity identity[email]", "https://www.patreon.com/api/oauth2/token", "https://www.patreon.com/api/oauth2/v2/identity")
	c.Userinfo.Params = params("fields[user]", "full_name,email,image_url")
	return c
}
