package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// MailruProfile is the Mail.ru userinfo response.
type MailruProfile struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Name      string `json:"name"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Nickname  string `json:"nickname"`
	Image     string `json:"image"`
	Locale    string `json:"locale"`
}

// MailruUser maps a Mail.ru profile: id, email, name (else first and last
// name, else nickname), image.
func MailruUser(_ context.Context, p MailruProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(first(p.Name, joinNonEmpty(p.FirstName, p.LastName), p.Nickname)), Image: str(p.Image)}, nil
}

// Mailru returns the Mail.ru OAuth 2.0 provider (id "mailru"), asking for
// userinfo, with the state check, authenticating with
// client_secret_post. Its userinfo endpoint takes the token as the
// access_token query parameter.
func Mailru(clientID, clientSecret string) *provider.OAuth2Config[MailruProfile] {
	c := oauthBuiltIn("mailru", "Mail.ru", "#005ff9", "state post", clientID, clientSecret, MailruUser,
		"https://oauth.mail.ru/login", "userinfo", "https://oauth.mail.ru/token", "https://oauth.mail.ru/userinfo")
	c.Userinfo.Request = userinfoTokenInQuery[MailruProfile]("access_token")
	return c
}
