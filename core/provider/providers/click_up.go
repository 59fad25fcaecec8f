package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// ClickUpProfile is the ClickUp user (GET /api/v2/user).
type ClickUpProfile struct {
	User ClickUpProfileUser `json:"user"`
}

// ClickUpProfileUser is the User member of [ClickUpProfile].
type ClickUpProfileUser struct {
	ID             int64  `json:"id"`
	Username       string `json:"username"`
	Email          string `json:"email"`
	Color          string `json:"color"`
	ProfilePicture string `json:"profilePicture"`
}

// ClickUpUser maps a ClickUp user: user.id, email, username,
// profilePicture.
func ClickUpUser(_ context.Context, p ClickUpProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.User.ID), Email: p.User.Email, Name: str(p.User.Username), Image: str(p.User.ProfilePicture)}, nil
}

// ClickUp returns the ClickUp OAuth 2.0 provider (id "click-up") with the
// state check, authenticating with client_secret_post.
func ClickUp(clientID, clientSecret string) *provider.OAuth2Config[ClickUpProfile] {
	return oauthBuiltIn("click-up", "ClickUp", "#7b68ee", "state post", clientID, clientSecret, ClickUpUser,
		"https://app.clickup.com/api", "", "https://api.clickup.com/api/v2/oauth/token", "https://api.clickup.com/api/v2/user")
}
