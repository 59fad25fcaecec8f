package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// NaverProfile is the Naver member profile (GET /v1/nid/me).
type NaverProfile struct {
	ResultCode string `json:"resultcode"`
	Message    string `json:"message"`
	Response   struct {
		ID           string `json:"id"`
		Nickname     string `json:"nickname"`
		Name         string `json:"name"`
		Email        string `json:"email"`
		Gender       string `json:"gender"`
		Age          string `json:"age"`
		Birthday     string `json:"birthday"`
		ProfileImage string `json:"profile_image"`
		Mobile       string `json:"mobile"`
	} `json:"response"`
}

// NaverUser maps a Naver profile: response.id, email, nickname (else
// name), profile_image.
func NaverUser(_ context.Context, p NaverProfile, _ provider.TokenSet) (provider.User, error) {
	r := p.Response
	return provider.User{ID: r.ID, Email: r.Email, Name: str(first(r.Nickname, r.Name)), Image: str(r.ProfileImage)}, nil
}

// Naver returns the Naver Login OAuth 2.0 provider (id "naver") with the
// state check Naver requires, authenticating with client_secret_post.
func Naver(clientID, clientSecret string) *provider.OAuth2Config[NaverProfile] {
	return oauthBuiltIn("naver", "Naver", "#03C75A", "state post", clientID, clientSecret, NaverUser,
		"https://nid.naver.com/oauth2.0/authorize", "", "https://nid.naver.com/oauth2.0/token", "https://openapi.naver.com/v1/nid/me")
}
