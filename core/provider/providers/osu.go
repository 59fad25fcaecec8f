package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// OsuProfile is the osu! user (GET /api/v2/me).
type OsuProfile struct {
	ID          int64  `json:"id"`
	Username    string `json:"username"`
	AvatarURL   string `json:"avatar_url"`
	CountryCode string `json:"country_code"`
	IsSupporter bool   `json:"is_supporter"`
}

// Osu returns the osu! OAuth 2.0 provider (id "osu"), asking for
// identify, with the state check. osu! gives no e-mail address.
func Osu(clientID, clientSecret string) *provider.OAuth2Config[OsuProfile] {
	c := oauthBuiltIn("osu", "osu!", "https://osu.ppy.sh/oauth/authorize", "identify",
		"https://osu.ppy.sh/oauth/token", "https://osu.ppy.sh/api/v2/me", clientID, clientSecret, OsuUser, "#ff66aa")
	c.Checks = provider.Checks{provider.CheckState}
	c.Client = postAuth()
	return c
}

// OsuUser maps an osu! user: id, username, avatar_url.
func OsuUser(_ context.Context, p OsuProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Name: str(p.Username), Image: str(p.AvatarURL)}, nil
}
