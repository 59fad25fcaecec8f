package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// MailchimpProfile is the Mailchimp OAuth metadata (GET
// login.mailchimp.com/oauth2/metadata).
type MailchimpProfile struct {
	DC          string `json:"dc"`
	Role        string `json:"role"`
	AccountName string `json:"accountname"`
	UserID      int64  `json:"user_id"`
	Login       struct {
		Email      string `json:"email"`
		Avatar     string `json:"avatar"`
		LoginID    int64  `json:"login_id"`
		LoginName  string `json:"login_name"`
		LoginEmail string `json:"login_email"`
	} `json:"login"`
	APIEndpoint string `json:"api_endpoint"`
}

// MailchimpUser maps Mailchimp metadata: login.login_id, login.email
// (else login_email), accountname (else login_name), login.avatar.
func MailchimpUser(_ context.Context, p MailchimpProfile, _ provider.TokenSet) (provider.User, error) {
	l := p.Login
	return provider.User{ID: itoa(l.LoginID), Email: first(l.Email, l.LoginEmail), Name: str(first(p.AccountName, l.LoginName)), Image: str(l.Avatar)}, nil
}

// Mailchimp returns the Mailchimp OAuth 2.0 provider (id "mailchimp")
// with the state check, authenticating with client_secret_post. Its
// metadata endpoint takes the token as "Authorization: OAuth {token}".
func Mailchimp(clientID, clientSecret string) *provider.OAuth2Config[MailchimpProfile] {
	c := oauthBuiltIn("mailchimp", "Mailchimp", "#ffe01b", "state post", clientID, clientSecret, MailchimpUser,
		"https://login.mailchimp.com/oauth2/authorize", "", "https://login.mailchimp.com/oauth2/token", "https://login.mailchimp.com/oauth2/metadata")
	c.Userinfo.Request = userinfoWithScheme[MailchimpProfile]("OAuth")
	return c
}
