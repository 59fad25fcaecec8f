package providers

import (
	"context"
	"net/url"

	"github.com/authport/authport/core/provider"
)

// YandexProfile is the Yandex ID user (GET login.yandex.ru/info).
type YandexProfile struct {
	ID              string   `json:"id"`
	Login           string   `json:"login"`
	ClientID        string   `json:"client_id"`
	DisplayName     string   `json:"display_name"`
	RealName        string   `json:"real_name"`
	FirstName       string   `json:"first_name"`
	LastName        string   `json:"last_name"`
	DefaultEmail    string   `json:"default_email"`
	Emails          []string `json:"emails"`
	DefaultAvatarID string   `json:"default_avatar_id"`
	IsAvatarEmpty   bool     `json:"is_avatar_empty"`
	PSUID           string   `json:"psuid"`
}

// YandexUser maps a Yandex user: id, default_email (else the first of
// emails), display_name (else real_name, else first_name), and the
// avatar's 200px URL unless is_avatar_empty.
func YandexUser(_ context.Context, p YandexProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{ID: p.ID, Email: p.DefaultEmail, Name: str(first(p.DisplayName, p.RealName, p.FirstName, p.Login))}
	if u.Email == "" && len(p.Emails) > 0 {
		u.Email = p.Emails[0]
	}
	if !p.IsAvatarEmpty && p.DefaultAvatarID != "" {
		u.Image = str("https://avatars.yandex.net/get-yapic/" + url.PathEscape(p.DefaultAvatarID) + "/islands-200")
	}
	return u, nil
}

// Yandex returns the Yandex ID OAuth 2.0 provider (id "yandex"), asking
// for login:info, login:email and login:avatar. Its userinfo endpoint
// takes the token as "Authorization: OAuth {token}".
func Yandex(clientID, clientSecret string) *provider.OAuth2Config[YandexProfile] {
	c := oauthBuiltIn("yandex", "Yandex", "#ffcc00", "", clientID, clientSecret, YandexUser,
		"https://oauth.yandex.ru/authorize", "login:info login:email login:avatar", "https://oauth.yandex.ru/token", "https://login.yandex.ru/info")
	c.Userinfo.Params = params("format", "json")
	c.Userinfo.Request = userinfoWithScheme[YandexProfile]("OAuth")
	return c
}
