package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// FacebookProfile is the Facebook user (GET /me?fields=id,name,email,picture).
type FacebookProfile struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Picture struct {
		Data struct {
			URL          string `json:"url"`
			Height       int    `json:"height"`
			Width        int    `json:"width"`
			IsSilhouette bool   `json:"is_silhouette"`
		} `json:"data"`
	} `json:"picture"`
}

// FacebookUser maps a Facebook profile: id, email, name,
// picture.data.url.
func FacebookUser(_ context.Context, p FacebookProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(p.Name), Image: str(p.Picture.Data.URL)}, nil
}

// Facebook returns the Facebook Login OAuth 2.0 provider (id "facebook"),
// asking for email and reading id, name, email and picture from the Graph
// API.
func Facebook(clientID, clientSecret string) *provider.OAuth2Config[FacebookProfile] {
	c := oauthBuiltIn("facebook", "Facebook", "#0866ff", "pkce state post", clientID, clientSecret, FacebookUser,
		"https://www.facebook.com/v19.0/dialog/oauth", "email", "https://graph.facebook.com/oauth/access_token", "https://graph.facebook.com/me")
	c.Userinfo.Params = params("fields", "id,name,email,picture")
	return c
}
