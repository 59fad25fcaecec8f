package providers

import (
	"context"
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// HubSpotProfile is HubSpot's access token metadata (GET
// /oauth/v1/access-tokens/{token}), the only user profile HubSpot's OAuth
// exposes.
type HubSpotProfile struct {
	User      string   `json:"user"`
	UserID    int64    `json:"user_id"`
	HubID     int64    `json:"hub_id"`
	HubDomain string   `json:"hub_domain"`
	AppID     int64    `json:"app_id"`
	Scopes    []string `json:"scopes"`
	TokenType string   `json:"token_type"`
}

// HubSpotUser maps HubSpot token metadata: user_id, user (the e-mail
// address, also the name); no picture.
func HubSpotUser(_ context.Context, p HubSpotProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.UserID), Email: p.User, Name: str(p.User)}, nil
}

// HubSpot returns the HubSpot OAuth 2.0 provider (id "hubspot"), asking
// for oauth, with the state check, authenticating with
// client_secret_post. HubSpot's profile is the token's metadata: the
// access token goes in the URL path, not in a header.
func HubSpot(clientID, clientSecret string) *provider.OAuth2Config[HubSpotProfile] {
	c := oauthBuiltIn("hubspot", "HubSpot", "#ff7a59", "state post", clientID, clientSecret, HubSpotUser,
		"https://app.hubspot.com/oauth/authorize", "oauth", "https://api.hubapi.com/oauth/v1/token", "https://api.hubapi.com/oauth/v1/access-tokens")
	c.Userinfo.Request = func(ctx context.Context, req provider.UserinfoRequest) (HubSpotProfile, error) {
		var p HubSpotProfile
		u := strings.TrimSuffix(req.Endpoint.URL, "/") + "/" + url.PathEscape(req.Tokens.AccessToken)
		err := fetchJSON(ctx, clientOf(req), userinfoCall{url: u}, &p)
		return p, redactToken(err, req.Tokens.AccessToken)
	}
	return c
}
