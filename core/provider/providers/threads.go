package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// ThreadsProfile is the Threads user (GET graph.threads.net/v1.0/me).
type ThreadsProfile struct {
	ID                       string `json:"id"`
	Username                 string `json:"username"`
	Name                     string `json:"name"`
	ThreadsProfilePictureURL string `json:"threads_profile_picture_url"`
	ThreadsBiography         string `json:"threads_biography"`
}

// ThreadsUser maps a Threads user: id, name (else username),
// threads_profile_picture_url.
func ThreadsUser(_ context.Context, p ThreadsProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Name: str(first(p.Name, p.Username)), Image: str(p.ThreadsProfilePictureURL)}, nil
}

// Threads returns the Threads (Meta) OAuth 2.0 provider (id "threads"),
// asking for threads_basic, with the state check, authenticating with
// client_secret_post. Threads gives no e-mail address.
func Threads(clientID, clientSecret string) *provider.OAuth2Config[ThreadsProfile] {
	c := oauthBuiltIn("threads", "Threads", "#000000", "state post", clientID, clientSecret, ThreadsUser,
		"https://threads.net/oauth/authorize", "threads_basic", "https://graph.threads.net/oauth/access_token", "https://graph.threads.net/v1.0/me")
	c.Userinfo.Params = params("fields", "id,username,name,threads_profile_picture_url")
	return c
}
