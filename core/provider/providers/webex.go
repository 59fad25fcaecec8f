package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// WebexProfile is the Webex person (GET /v1/people/me).
type WebexProfile struct {
	ID          string   `json:"id"`
	Emails      []string `json:"emails"`
	DisplayName string   `json:"displayName"`
	NickName    string   `json:"nickName"`
	FirstName   string   `json:"firstName"`
	LastName    string   `json:"lastName"`
	Avatar      string   `json:"avatar"`
	OrgID       string   `json:"orgId"`
}

// WebexUser maps a Webex person: id, the first of emails, displayName,
// avatar.
func WebexUser(_ context.Context, p WebexProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{ID: p.ID, Name: str(first(p.DisplayName, joinNonEmpty(p.FirstName, p.LastName))), Image: str(p.Avatar)}
	if len(p.Emails) > 0 {
		u.Email = p.Emails[0]
	}
	return u, nil
}

// Webex returns the Webex OAuth 2.0 provider (id "webex"), asking for
// spark:kms and spark:people_read, authenticating with client_secret_post.
func Webex(clientID, clientSecret string) *provider.OAuth2Config[WebexProfile] {
	return oauthBuiltIn("webex", "Webex", "#07C1E4", "post", clientID, clientSecret, WebexUser,
		"https://webexapis.com/v1/authorize", "spark:kms spark:people_read", "https://webexapis.com/v1/access_token", "https://webexapis.com/v1/people/me")
}
