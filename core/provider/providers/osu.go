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

// OsuUser maps an osu! user: id, username, avatar_url.
func OsuUser(_ context.Context, p OsuProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Name: str(p.Username), Image: str(p.AvatarURL)}, nil
}

// Osu returns the osu! OAuth 2.0 provider (id "osu"), asking for
// identify, with the state check. osu! gives no e-mail address.
func Osu(clientID, clientSecret string) *provider.OAuth2Config[OsuProfile] {
	return oauthBuiltIn("osu", "osu!", "#ff66aa", "state post", clientID, clientSecret, OsuUser,
		"https://osu.ppy.sh/oauth/authorize", "identify", "https://osu.ppy.sh/oauth/token", "https://osu.ppy.sh/api/v2/me")
}
