package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// WikimediaProfile is the Wikimedia OAuth 2.0 profile (GET
// /w/rest.php/oauth2/resource/profile).
type WikimediaProfile struct {
	Sub            string   `json:"sub"`
	Username       string   `json:"username"`
	Realname       string   `json:"realname"`
	Email          string   `json:"email"`
	ConfirmedEmail bool     `json:"confirmed_email"`
	EditCount      int64    `json:"editcount"`
	Blocked        bool     `json:"blocked"`
	Groups         []string `json:"groups"`
	Rights         []string `json:"rights"`
	Registered     string   `json:"registered"`
}

// WikimediaUser maps a Wikimedia profile: sub, email, username; no
// picture.
func WikimediaUser(_ context.Context, p WikimediaProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Sub, Email: p.Email, Name: str(first(p.Username, p.Realname))}, nil
}

// Wikimedia returns the Wikimedia (Wikipedia and sister projects) OAuth
// 2.0 provider (id "wikimedia") at meta.wikimedia.org. The e-mail address
// is in the profile only when the consumer was granted it.
func Wikimedia(clientID, clientSecret string) *provider.OAuth2Config[WikimediaProfile] {
	const base = "https://meta.wikimedia.org/w/rest.php/oauth2"
	return oauthBuiltIn("wikimedia", "Wikimedia", "#000000", "", clientID, clientSecret, WikimediaUser,
		base+"/authorize", "", base+"/access_token", base+"/resource/profile")
}
