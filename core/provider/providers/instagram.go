package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// InstagramProfile is the Instagram user (GET graph.instagram.com/me).
type InstagramProfile struct {
	ID                string `json:"id"`
	UserID            string `json:"user_id"`
	Username          string `json:"username"`
	Name              string `json:"name"`
	AccountType       string `json:"account_type"`
	ProfilePictureURL string `json:"profile_picture_url"`
}

// InstagramUser maps an Instagram profile: id, name (else username),
// profile_picture_url.
func InstagramUser(_ context.Context, p InstagramProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: first(p.ID, p.UserID), Name: str(first(p.Name, p.Username)), Image: str(p.ProfilePictureURL)}, nil
}

// Instagram returns the Instagram API with Instagram Login provider (id
// "instagram"), asking for instagram_business_basic, with the state
// check, authenticating with client_secret_post. Instagram gives no
// e-mail address.
func Instagram(clientID, clientSecret string) *provider.OAuth2Config[InstagramProfile] {
	c := oauthBuiltIn("instagram", "Instagram", "#E1306C", "state post", clientID, clientSecret, InstagramUser,
		"https://www.instagram.com/oauth/authorize", "instagram_business_basic", "https://api.instagram.com/oauth/access_token", "https://graph.instagram.com/me")
	c.Userinfo.Params = params("fields", "id,user_id,username,name,account_type,profile_picture_url")
	return c
}
