package providers

import (
	"context"
	"net/http"

	"github.com/authport/authport/core/provider"
)

// DropboxProfile is the Dropbox account (POST /2/users/get_current_account).
type DropboxProfile struct {
	AccountID string `json:"account_id"`
	Name      struct {
		DisplayName  string `json:"display_name"`
		GivenName    string `json:"given_name"`
		Surname      string `json:"surname"`
		FamiliarName string `json:"familiar_name"`
	} `json:"name"`
	Email           string `json:"email"`
	EmailVerified   bool   `json:"email_verified"`
	ProfilePhotoURL string `json:"profile_photo_url"`
	Country         string `json:"country"`
	Locale          string `json:"locale"`
}

// DropboxUser maps a Dropbox profile: account_id, email,
// name.display_name, profile_photo_url.
func DropboxUser(_ context.Context, p DropboxProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.AccountID, Email: p.Email, Name: str(first(p.Name.DisplayName, joinNonEmpty(p.Name.GivenName, p.Name.Surname))),
		Image: str(p.ProfilePhotoURL)}, nil
}

// Dropbox returns the Dropbox OAuth 2.0 provider (id "dropbox"), asking
// for account_info.read with token_access_type offline (a refresh token).
// Dropbox's account endpoint is an RPC: its userinfo handler POSTs to it
// without a body.
func Dropbox(clientID, clientSecret string) *provider.OAuth2Config[DropboxProfile] {
	c := oauthBuiltIn("dropbox", "Dropbox", "#0061fe", "", clientID, clientSecret, DropboxUser,
		"https://www.dropbox.com/oauth2/authorize", "account_info.read", "https://api.dropboxapi.com/oauth2/token", "https://api.dropboxapi.com/2/users/get_current_account")
	c.Authorization.Params.Set("token_access_type", "offline")
	c.Userinfo.Request = userinfoFetch[DropboxProfile](func(req provider.UserinfoRequest) userinfoCall {
		return userinfoCall{method: http.MethodPost, url: req.Endpoint.WithParams(), header: authHeader("Bearer", req.Tokens.AccessToken)}
	})
	return c
}
