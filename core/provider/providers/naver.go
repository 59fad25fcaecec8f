package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// NaverProfile is the Naver member profile (GET /v1/nid/me).
type NaverProfile struct {
	ResultCode string               `json:"resultcode"`
	Message    string               `json:"message"`
	Response   NaverProfileResponse `json:"response"`
}

// NaverProfileResponse is the Response member of [NaverProfile].
type NaverProfileResponse struct {
	ID           string `json:"id"`
	Nickname     string `json:"nickname"`
	Name         string `json:"name"`
	Email        string `json:"email"`
	Gender       string `json:"gender"`
	Age          string `json:"age"`
	Birthday     string `json:"birthday"`
	ProfileImage string `json:"profile_image"`
	Mobile       string `json:"mobile"`
}

// NaverUser maps a Naver profile: response.id, email, nickname (else
// name), profile_image.
func NaverUser(_ context.Context, p NaverProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Response.ID, Email: p.Response.Email, Name: str(first(p.Response.Nickname, p.Response.Name)), Image: str(p.Response.ProfileImage)}, nil
}

// Naver returns the Naver Login OAuth 2.0 provider (id "naver") with the
// state check Naver requires, authenticating with client_secret_post.
func Naver(clientID, clientSecret string) *provider.OAuth2Config[NaverProfile] {
	return oauthBuiltIn("naver", "Naver", "#03C75A", "state post", clientID, clientSecret, NaverUser,
		"https://nid.naver.com/oauth2.0/authorize", "", "https://nid.naver.com/oauth2.0/token", "https://openapi.naver.com/v1/nid/me")
}
