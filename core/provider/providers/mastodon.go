package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// MastodonProfile is the Mastodon account (GET
// /api/v1/accounts/verify_credentials).
type MastodonProfile struct {
	ID           string `json:"id"`
	Username     string `json:"username"`
	Acct         string `json:"acct"`
	DisplayName  string `json:"display_name"`
	URL          string `json:"url"`
	Avatar       string `json:"avatar"`
	AvatarStatic string `json:"avatar_static"`
	Bot          bool   `json:"bot"`
}

// MastodonUser maps a Mastodon account: id, display_name (else username),
// avatar_static.
func MastodonUser(_ context.Context, p MastodonProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Name: str(first(p.DisplayName, p.Username)), Image: str(first(p.AvatarStatic, p.Avatar))}, nil
}

// Mastodon returns the Mastodon OAuth 2.0 provider (id "mastodon") for the
// server at issuer (e.g. https://mastodon.social), asking for
// read:accounts, with the pkce and state checks. Mastodon gives no e-mail
// address.
func Mastodon(clientID, clientSecret, issuer string) *provider.OAuth2Config[MastodonProfile] {
	return hostedBuiltIn("mastodon", "Mastodon", "#6364FF", "pkce state post", clientID, clientSecret, MastodonUser,
		issuer, "/oauth/authorize", "read:accounts", "/oauth/token", "/api/v1/accounts/verify_credentials")
}
