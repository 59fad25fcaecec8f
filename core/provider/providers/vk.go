package providers

import (
	"context"
	"fmt"

	"github.com/authport/authport/core/provider"
)

// vkAPIVersion is the VK API version the VK provider asks for.
const vkAPIVersion = "5.131"

// VKProfile is one VK user (users.get), with the e-mail address of the
// token response.
type VKProfile struct {
	ID        int64  `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Photo100  string `json:"photo_100"`
	// Email comes from the token response, where VK puts it.
	Email string `json:"email,omitempty"`
}

// VKUser maps a VK user: id, the token response's email, first and last
// name, photo_100.
func VKUser(_ context.Context, p VKProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Email: p.Email, Name: str(joinNonEmpty(p.FirstName, p.LastName)), Image: str(p.Photo100)}, nil
}

// VK returns the VK OAuth 2.0 provider (id "vk"), asking for email, with
// the state check, authenticating with client_secret_post. VK returns the
// e-mail address in the token response (email), and the profile from
// users.get as a list under response.
func VK(clientID, clientSecret string) *provider.OAuth2Config[VKProfile] {
	c := oauthBuiltIn("vk", "VK", "#0077FF", "state post", clientID, clientSecret, VKUser,
		"https://oauth.vk.com/authorize", "email", "https://oauth.vk.com/access_token", "https://api.vk.com/method/users.get")
	c.Authorization.Params.Set("v", vkAPIVersion)
	c.Token.Params = params("v", vkAPIVersion)
	c.Userinfo.Params = params("fields", "photo_100", "v", vkAPIVersion)
	c.Userinfo.Request = func(ctx context.Context, req provider.UserinfoRequest) (VKProfile, error) {
		var res struct {
			Response []VKProfile `json:"response"`
			Error    *struct {
				Code int    `json:"error_code"`
				Msg  string `json:"error_msg"`
			} `json:"error"`
		}
		if err := fetchJSON(ctx, clientOf(req), userinfoCall{url: req.Endpoint.WithParams(), header: authHeader("Bearer", req.Tokens.AccessToken)}, &res); err != nil {
			return VKProfile{}, err
		}
		if res.Error != nil {
			return VKProfile{}, fmt.Errorf("vk users.get: error %d: %s", res.Error.Code, res.Error.Msg)
		}
		if len(res.Response) == 0 {
			return VKProfile{}, fmt.Errorf("vk users.get: no user in the response")
		}
		p := res.Response[0]
		p.Email = tokenString(req.Tokens, "email")
		return p, nil
	}
	return c
}
