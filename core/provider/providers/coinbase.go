package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// CoinbaseProfile is the Coinbase user (GET /v2/user).
type CoinbaseProfile struct {
	Data struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Username  string `json:"username"`
		Email     string `json:"email"`
		AvatarURL string `json:"avatar_url"`
	} `json:"data"`
}

// CoinbaseUser maps a Coinbase profile: data.id, data.email, data.name
// (else data.username), data.avatar_url.
func CoinbaseUser(_ context.Context, p CoinbaseProfile, _ provider.TokenSet) (provider.User, error) {
	d := p.Data
	return provider.User{ID: d.ID, Email: d.Email, Name: str(first(d.Name, d.Username)), Image: str(d.AvatarURL)}, nil
}

// Coinbase returns the Coinbase OAuth 2.0 provider (id "coinbase"),
// asking for wallet:user:email and wallet:user:read.
func Coinbase(clientID, clientSecret string) *provider.OAuth2Config[CoinbaseProfile] {
	return oauthBuiltIn("coinbase", "Coinbase", "#0052ff", "pkce state", clientID, clientSecret, CoinbaseUser,
		"https://login.coinbase.com/oauth2/auth", "wallet:user:email wallet:user:read", "https://login.coinbase.com/oauth2/token", "https://api.coinbase.com/v2/user")
}
