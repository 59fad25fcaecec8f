package providers

import (
	"context"
	"fmt"

	"github.com/authport/authport/core/provider"
)

// notionVersion is the Notion API version the Notion provider sends.
const notionVersion = "2022-06-28"

// NotionProfile is the person who installed a Notion public integration:
// the bot user's owner.user (GET /v1/users/me).
type NotionProfile struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	AvatarURL string `json:"avatar_url"`
	Person    struct {
		Email string `json:"email"`
	} `json:"person"`
}

// NotionUser maps the owning Notion user: id, person.email, name,
// avatar_url.
func NotionUser(_ context.Context, p NotionProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Person.Email, Name: str(p.Name), Image: str(p.AvatarURL)}, nil
}

// Notion returns the Notion public integration provider (id "notion"),
// asking for owner=user, with the state check. Its userinfo handler reads
// the integration's bot user (GET /v1/users/me, with the Notion-Version
// header) and returns the user who owns it.
func Notion(clientID, clientSecret string) *provider.OAuth2Config[NotionProfile] {
	c := oauthBuiltIn("notion", "Notion", "#000000", "state", clientID, clientSecret, NotionUser,
		"https://api.notion.com/v1/oauth/authorize", "", "https://api.notion.com/v1/oauth/token", "https://api.notion.com/v1/users/me")
	c.Authorization.Params = params("owner", "user")
	c.Userinfo.Request = func(ctx context.Context, req provider.UserinfoRequest) (NotionProfile, error) {
		var bot struct {
			Bot struct {
				Owner struct {
					Type string        `json:"type"`
					User NotionProfile `json:"user"`
				} `json:"owner"`
			} `json:"bot"`
		}
		h := authHeader("Bearer", req.Tokens.AccessToken)
		h.Set("Notion-Version", notionVersion)
		if err := fetchJSON(ctx, clientOf(req), userinfoCall{url: req.Endpoint.WithParams(), header: h}, &bot); err != nil {
			return NotionProfile{}, err
		}
		if bot.Bot.Owner.Type != "user" {
			return NotionProfile{}, fmt.Errorf("notion: the integration is owned by a %q, not a user; install it with owner=user", bot.Bot.Owner.Type)
		}
		return bot.Bot.Owner.User, nil
	}
	return c
}
