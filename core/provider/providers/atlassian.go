package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// AtlassianProfile is the Atlassian account (GET https://api.atlassian.com/me).
type AtlassianProfile struct {
	AccountID     string `json:"account_id"`
	AccountType   string `json:"account_type"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	Name          string `json:"name"`
	Nickname      string `json:"nickname"`
	Picture       string `json:"picture"`
	AccountStatus string `json:"account_status"`
}

// AtlassianUser maps an Atlassian profile: account_id, email, name (else
// nickname), picture.
func AtlassianUser(_ context.Context, p AtlassianProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.AccountID, Email: p.Email, Name: str(first(p.Name, p.Nickname)), Image: str(p.Picture)}, nil
}

// Atlassian returns the Atlassian (Jira, Confluence) OAuth 2.0 (3LO)
// provider (id "atlassian"), asking for read:me with audience
// api.atlassian.com and prompt consent, with the state check Atlassian
// requires.
func Atlassian(clientID, clientSecret string) *provider.OAuth2Config[AtlassianProfile] {
	c := oauthBuiltIn("atlassian", "Atlassian", "#0052cc", "state post", clientID, clientSecret, AtlassianUser,
		"https://auth.atlassian.com/authorize", "read:me", "https://auth.atlassian.com/oauth/token", "https://api.atlassian.com/me")
	c.Authorization.Params.Set("audience", "api.atlassian.com")
	c.Authorization.Params.Set("prompt", "consent")
	return c
}
