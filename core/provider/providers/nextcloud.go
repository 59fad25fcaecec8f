package providers

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// NextcloudProfile is the Nextcloud user (OCS GET /ocs/v1.php/cloud/users/{id}),
// the data member of the OCS envelope.
type NextcloudProfile struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	DisplayName string `json:"displayname"`
	Enabled     bool   `json:"enabled"`
	Language    string `json:"language"`
	// AvatarURL is set by the provider: the server's avatar URL for id.
	AvatarURL string `json:"avatar_url,omitempty"`
}

// NextcloudUser maps a Nextcloud user: id, email, displayname, the avatar
// URL.
func NextcloudUser(_ context.Context, p NextcloudProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(first(p.DisplayName, p.ID)), Image: str(p.AvatarURL)}, nil
}

// Nextcloud returns the Nextcloud OAuth 2.0 provider (id "nextcloud") for
// the server at issuer, with the state check, authenticating with
// client_secret_post. Its userinfo handler reads the OCS user API for the
// user_id of the token response, with the OCS-APIRequest header.
func Nextcloud(clientID, clientSecret, issuer string) *provider.OAuth2Config[NextcloudProfile] {
	base := baseURL(issuer)
	c := hostedBuiltIn("nextcloud", "Nextcloud", "#0082c9", "state post", clientID, clientSecret, NextcloudUser,
		issuer, "/apps/oauth2/authorize", "", "/apps/oauth2/api/v1/token", "/ocs/v1.php/cloud/users")
	c.Userinfo.Request = func(ctx context.Context, req provider.UserinfoRequest) (NextcloudProfile, error) {
		var env struct {
			OCS struct {
				Data NextcloudProfile `json:"data"`
			} `json:"ocs"`
		}
		id := tokenString(req.Tokens, "user_id")
		if id == "" {
			return env.OCS.Data, fmt.Errorf("nextcloud: the token response has no user_id")
		}
		u := strings.TrimSuffix(req.Endpoint.URL, "/") + "/" + url.PathEscape(id) + "?format=json"
		h := authHeader("Bearer", req.Tokens.AccessToken)
		h.Set("OCS-APIRequest", "true")
		if err := fetchJSON(ctx, clientOf(req), userinfoCall{url: u, header: h}, &env); err != nil {
			return env.OCS.Data, err
		}
		p := env.OCS.Data
		if p.ID != "" && base != "" {
			p.AvatarURL = base + "/avatar/" + url.PathEscape(p.ID) + "/512"
		}
		return p, nil
	}
	return c
}
