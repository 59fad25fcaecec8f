package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// PinterestProfile is the Pinterest account (GET /v5/user_account).
type PinterestProfile struct {
	ID             string `json:"id"`
	AccountType    string `json:"account_type"`
	Username       string `json:"username"`
	BusinessName   string `json:"business_name"`
	ProfileImage   string `json:"profile_image"`
	WebsiteURL     string `json:"website_url"`
	FollowerCount  int64  `json:"follower_count"`
	FollowingCount int64  `json:"following_count"`
}

// PinterestUser maps a Pinterest account: username as the id (stable for
// Pinterest, and the id field is absent from older responses) and the
// name, profile_image.
func PinterestUser(_ context.Context, p PinterestProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Username, Name: str(first(p.BusinessName, p.Username)), Image: str(p.ProfileImage)}, nil
}

// Pinterest returns the Pinterest OAuth 2.0 provider (id "pinterest"),
// asking for user_accounts:read, with the state check. Pinterest gives no
// e-mail address.
func Pinterest(clientID, clientSecret string) *provider.OAuth2Config[PinterestProfile] {
	return oauthBuiltIn("pinterest", "Pinterest", "#bd081c", "state", clientID, clientSecret, PinterestUser,
		"https://www.pinterest.com/oauth", "user_accounts:read", "https://api.pinterest.com/v5/oauth/token", "https://api.pinterest.com/v5/user_account")
}
