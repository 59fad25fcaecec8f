package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// TraktProfile is the Trakt user (GET /users/me?extended=full).
type TraktProfile struct {
	Username string `json:"username"`
	Private  bool   `json:"private"`
	Name     string `json:"name"`
	VIP      bool   `json:"vip"`
	IDs      struct {
		Slug string `json:"slug"`
		UUID string `json:"uuid"`
	} `json:"ids"`
	Images struct {
		Avatar struct {
			Full string `json:"full"`
		} `json:"avatar"`
	} `json:"images"`
}

// TraktUser maps a Trakt user: ids.slug (else ids.uuid), name (else
// username), images.avatar.full.
func TraktUser(_ context.Context, p TraktProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: first(p.IDs.Slug, p.IDs.UUID), Name: str(first(p.Name, p.Username)), Image: str(p.Images.Avatar.Full)}, nil
}

// Trakt returns the Trakt OAuth 2.0 provider (id "trakt") with the state
// check, authenticating with client_secret_post. Trakt's API wants the
// trakt-api-version and trakt-api-key (the client id) headers. Trakt
// gives no e-mail address.
func Trakt(clientID, clientSecret string) *provider.OAuth2Config[TraktProfile] {
	c := oauthBuiltIn("trakt", "Trakt", "#ED2224", "state post", clientID, clientSecret, TraktUser,
		"https://trakt.tv/oauth/authorize", "", "https://api.trakt.tv/oauth/token", "https://api.trakt.tv/users/me")
	c.Userinfo.Params = params("extended", "full")
	c.Userinfo.Request = userinfoFetch[TraktProfile](func(req provider.UserinfoRequest) userinfoCall {
		h := authHeader("Bearer", req.Tokens.AccessToken)
		h.Set("trakt-api-version", "2")
		h.Set("trakt-api-key", first(req.ClientID, clientID))
		return userinfoCall{url: req.Endpoint.WithParams(), header: h}
	})
	return c
}
