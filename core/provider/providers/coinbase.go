package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// CoinbaseProfile is the Coinbase user (GET /v2/user).
type CoinbaseProfile struct {
	Data CoinbaseProfileData `json:"data"`
}

// CoinbaseProfileData is the Data member of [CoinbaseProfile].
type CoinbaseProfileData struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Username  string `json:"username"`
	Email     string `json:"email"`
	AvatarURL string `json:"avatar_url"`
}

// CoinbaseUser maps a Coinbase profile: data.id, data.email, data.name
// (else data.username), data.avatar_url.
func CoinbaseUser(_ context.Context, p CoinbaseProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Data.ID, Email: p.Data.Email, Name: str(first(p.Data.Name, p.Data.Username)), Image: str(p.Data.AvatarURL)}, nil
}

// Coinbase returns the Coinbase OAuth 2.0 provider (id "coinbase"),
// asking for wallet:user:email and wallet:user:read.
func Coinbase(clientID, clientSecret string) *provider.OAuth2Config[CoinbaseProfile] {
	return oauthBuiltIn("coinbase", "Coinbase", "#0052ff", "pkce state", clientID, clientSecret, CoinbaseUser,
		"https://login.coinbase.com/oauth2/auth", "wallet:user:email wallet:user:read", "https://login.coinbase.com/oauth2/token", "https://api.coinbase.com/v2/user")
}
