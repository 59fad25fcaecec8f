package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// KakaoProfile is the Kakao user (GET /v2/user/me).
type KakaoProfile struct {
	ID           int64                    `json:"id"`
	KakaoAccount KakaoProfileKakaoAccount `json:"kakao_account"`
}

// KakaoProfileKakaoAccount is the KakaoAccount member of [KakaoProfile].
type KakaoProfileKakaoAccount struct {
	Profile struct {
		Nickname        string `json:"nickname"`
		ProfileImageURL string `json:"profile_image_url"`
		ThumbnailURL    string `json:"thumbnail_image_url"`
	} `json:"profile"`
	Email           string `json:"email"`
	IsEmailValid    bool   `json:"is_email_valid"`
	IsEmailVerified bool   `json:"is_email_verified"`
	Name            string `json:"name"`
}

// KakaoUser maps a Kakao profile: id, kakao_account.email, the profile's
// nickname (else the account name), profile_image_url.
func KakaoUser(_ context.Context, p KakaoProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Email: p.KakaoAccount.Email, Name: str(first(p.KakaoAccount.Profile.Nickname, p.KakaoAccount.Name)), Image: str(p.KakaoAccount.Profile.ProfileImageURL)}, nil
}

// Kakao returns the Kakao Login OAuth 2.0 provider (id "kakao") with the
// state check, authenticating with client_secret_post.
func Kakao(clientID, clientSecret string) *provider.OAuth2Config[KakaoProfile] {
	return oauthBuiltIn("kakao", "Kakao", "#FEE500", "state post", clientID, clientSecret, KakaoUser,
		"https://kauth.kakao.com/oauth/authorize", "", "https://kauth.kakao.com/oauth/token", "https://kapi.kakao.com/v2/user/me")
}
