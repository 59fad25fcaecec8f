package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// TwitterProfile is the X (Twitter) user (GET /2/users/me).
type TwitterProfile struct {
	Data TwitterProfileData `json:"data"`
}

// TwitterProfileData is the Data member of [TwitterProfile].
type TwitterProfileData struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Username        string `json:"username"`
	ProfileImageURL string `json:"profile_image_url"`
	ConfirmedEmail  string `json:"confirmed_email,omitempty"`
}

// TwitterUser maps an X user: data.id, data.name (else username),
// confirmed_email, profile_image_url.
func TwitterUser(_ context.Context, p TwitterProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Data.ID, Email: p.Data.ConfirmedEmail, Name: str(first(p.Data.Name, p.Data.Username)), Image: str(p.Data.ProfileImageURL)}, nil
}

// Twitter returns the X (Twitter) OAuth 2.0 provider (id "twitter"),
// asking for users.read, tweet.read and offline.access, with the pkce and
// state checks X requires. X gives an e-mail address only with the
// users.email scope (add it to the scope, and confirmed_email to
// user.fields).
func Twitter(clientID, clientSecret string) *provider.OAuth2Config[TwitterProfile] {
	c := oauthBuiltIn("twitter", "Twitter", "#000000", "pkce state", clientID, clientSecret, TwitterUser,
		"https://x.com/i/oauth2/authorize", "users.read tweet.read offline.access", "https://api.x.com/2/oauth2/token", "https://api.x.com/2/users/me")
	c.Userinfo.Params = params("user.fields", "profile_image_url")
	return c
}
