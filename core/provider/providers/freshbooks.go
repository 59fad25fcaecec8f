package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// FreshbooksProfile is the FreshBooks identity (GET /auth/api/v1/users/me).
type FreshbooksProfile struct {
	Response FreshbooksProfileResponse `json:"response"`
}

// FreshbooksProfileResponse is the Response member of [FreshbooksProfile].
type FreshbooksProfileResponse struct {
	ID        int64  `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
}

// FreshbooksUser maps a FreshBooks identity: response.id, email, first and
// last name; no picture.
func FreshbooksUser(_ context.Context, p FreshbooksProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.Response.ID), Email: p.Response.Email, Name: str(joinNonEmpty(p.Response.FirstName, p.Response.LastName))}, nil
}

// Freshbooks returns the FreshBooks OAuth 2.0 provider (id "freshbooks")
// with the state check.
func Freshbooks(clientID, clientSecret string) *provider.OAuth2Config[FreshbooksProfile] {
	return oauthBuiltIn("freshbooks", "FreshBooks", "#0075dd", "state post", clientID, clientSecret, FreshbooksUser,
		"https://auth.freshbooks.com/service/auth/oauth/authorize", "user:profile:read", "https://api.freshbooks.com/auth/oauth/token", "https://api.freshbooks.com/auth/api/v1/users/me")
}
