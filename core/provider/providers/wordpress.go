package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// WordPressProfile is the WordPress.com user (GET /rest/v1/me).
type WordPressProfile struct {
	ID            int64  `json:"ID"`
	DisplayName   string `json:"display_name"`
	Username      string `json:"username"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	AvatarURL     string `json:"avatar_URL"`
	ProfileURL    string `json:"profile_URL"`
	PrimaryBlog   int64  `json:"primary_blog"`
}

// WordPressUser maps a WordPress.com user: ID, email, display_name (else
// username), avatar_URL.
func WordPressUser(_ context.Context, p WordPressProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Email: p.Email, Name: str(first(p.DisplayName, p.Username)), Image: str(p.AvatarURL)}, nil
}

// WordPress returns the WordPress.com OAuth 2.0 provider (id
// "wordpress"), asking for auth, with the state check, authenticating
// with client_secret_post.
func WordPress(clientID, clientSecret string) *provider.OAuth2Config[WordPressProfile] {
	return oauthBuiltIn("wordpress", "WordPress.com", "#3499cd", "state post", clientID, clientSecret, WordPressUser,
		"https://public-api.wordpress.com/oauth2/authorize", "auth", "https://public-api.wordpress.com/oauth2/token", "https://public-api.wordpress.com/rest/v1/me")
}
