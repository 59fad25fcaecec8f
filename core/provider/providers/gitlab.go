package providers

import (
	"context"
	"strconv"

	"github.com/authport/authport/core/provider"
)

// GitLabProfile is the GitLab user (GET /api/v4/user) the GitLab provider
// reads.
type GitLabProfile struct {
	ID               int64  `json:"id"`
	Username         string `json:"username"`
	Name             string `json:"name"`
	Email            string `json:"email"`
	PublicEmail      string `json:"public_email"`
	State            string `json:"state"`
	AvatarURL        string `json:"avatar_url"`
	WebURL           string `json:"web_url"`
	Bot              bool   `json:"bot"`
	TwoFactorEnabled bool   `json:"two_factor_enabled"`
	CreatedAt        string `json:"created_at"`
	ConfirmedAt      string `json:"confirmed_at"`
}

// GitLabUser is the GitLab profile mapping: id as a decimal string, name
// (else username), email, avatar_url.
func GitLabUser(_ context.Context, p GitLabProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{Email: p.Email, Name: str(p.Name), Image: str(p.AvatarURL)}
	if p.ID != 0 {
		u.ID = strconv.FormatInt(p.ID, 10)
	}
	if u.Name == nil {
		u.Name = str(p.Username)
	}
	return u, nil
}

// GitLab returns the GitLab.com OAuth 2.0 provider (id "gitlab"), asking
// for read_user. For a self-managed GitLab, change the three endpoint URLs.
func GitLab(clientID, clientSecret string) *provider.OAuth2Config[GitLabProfile] {
	return oauthBuiltIn("gitlab", "GitLab", "#FC6D26", "", clientID, clientSecret, GitLabUser,
		"https://gitlab.com/oauth/authorize", "read_user", "https://gitlab.com/oauth/token", "https://gitlab.com/api/v4/user")
}
