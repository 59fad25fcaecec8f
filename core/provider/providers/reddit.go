package providers

import (
	"context"
	"strings"

	"github.com/authport/authport/core/provider"
)

// RedditProfile is the Reddit account (GET /api/v1/me).
type RedditProfile struct {
	ID               string  `json:"id"`
	Name             string  `json:"name"`
	IconImg          string  `json:"icon_img"`
	SnoovatarImg     string  `json:"snoovatar_img"`
	Verified         bool    `json:"verified"`
	HasVerifiedEmail bool    `json:"has_verified_email"`
	Created          float64 `json:"created"`
}

// RedditUser maps a Reddit account: id, name, icon_img (HTML-escaped by
// Reddit: &amp; is undone), else snoovatar_img.
func RedditUser(_ context.Context, p RedditProfile, _ provider.TokenSet) (provider.User, error) {
	img := strings.ReplaceAll(first(p.IconImg, p.SnoovatarImg), "&amp;", "&")
	return provider.User{ID: p.ID, Name: str(p.Name), Image: str(img)}, nil
}

// Reddit returns the Reddit OAuth 2.0 provider (id "reddit"), asking for
// identity, with the state check (Reddit has no PKCE). Reddit gives no
// e-mail address.
func Reddit(clientID, clientSecret string) *provider.OAuth2Config[RedditProfile] {
	return oauthBuiltIn("reddit", "Reddit", "#FF4500", "state", clientID, clientSecret, RedditUser,
		"https://www.reddit.com/api/v1/authorize", "identity", "https://www.reddit.com/api/v1/access_token", "https://oauth.reddit.com/api/v1/me")
}
