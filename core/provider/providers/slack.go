package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// SlackProfile is the claims of a Sign in with Slack (OpenID Connect) ID
// token.
type SlackProfile struct {
	StandardClaims
	UserID       string `json:"https://slack.com/user_id"`
	TeamID       string `json:"https://slack.com/team_id"`
	TeamName     string `json:"https://slack.com/team_name,omitempty"`
	TeamDomain   string `json:"https://slack.com/team_domain,omitempty"`
	UserImage512 string `json:"https://slack.com/user_image_512,omitempty"`
}

// SlackUser is the Slack profile mapping: sub (else the Slack user id),
// email, name, picture (else the 512px user image).
func SlackUser(_ context.Context, p SlackProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: first(p.Sub, p.UserID), Email: p.Email, Name: str(p.Name), Image: str(first(p.Picture, p.UserImage512))}, nil
}

// Slack returns the Sign in with Slack OpenID Connect provider (id
// "slack", issuer https://slack.com) with the nonce check.
func Slack(clientID, clientSecret string) *provider.OIDCConfig[SlackProfile] {
	return oidcBuiltIn("slack", "Slack", "#611f69", "nonce", clientID, clientSecret, SlackUser, "https://slack.com")
}
