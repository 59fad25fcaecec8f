package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// FACEITProfile is the FACEIT userinfo response.
type FACEITProfile struct {
	GUID     string `json:"guid"`
	Nickname string `json:"nickname"`
	Name     string `json:"name"`
	Email    string `json:"email"`
	Picture  string `json:"picture"`
	Locale   string `json:"locale"`
}

// FACEITUser maps a FACEIT profile: guid, email, name (else nickname),
// picture.
func FACEITUser(_ context.Context, p FACEITProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.GUID, Email: p.Email, Name: str(first(p.Name, p.Nickname)), Image: str(p.Picture)}, nil
}

// FACEIT returns the FACEIT Connect OAuth 2.0 provider (id "faceit"),
// authenticating with client_secret_basic.
func FACEIT(clientID, clientSecret string) *provider.OAuth2Config[FACEITProfile] {
	c := oauthBuiltIn("faceit", "FACEIT", "#ff5500", "pkce state basic", clientID, clientSecret, FACEITUser,
		"https://accounts.faceit.com/accounts", "openid email profile", "https://api.faceit.com/auth/v1/oauth/token", "https://api.faceit.com/auth/v1/resources/userinfo")
	c.Authorization.Params.Set("redirect_popup", "true")
	return c
}
