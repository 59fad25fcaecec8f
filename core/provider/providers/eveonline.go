package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// EVEOnlineProfile is the EVE SSO character (GET /oauth/verify).
type EVEOnlineProfile struct {
	CharacterID          int64  `json:"CharacterID"`
	CharacterName        string `json:"CharacterName"`
	ExpiresOn            string `json:"ExpiresOn"`
	Scopes               string `json:"Scopes"`
	TokenType            string `json:"TokenType"`
	CharacterOwnerHash   string `json:"CharacterOwnerHash"`
	IntellectualProperty string `json:"IntellectualProperty"`
}

// EVEOnlineUser maps an EVE character: CharacterID, CharacterName, and
// the character's portrait on EVE's image server; EVE gives no e-mail
// address.
func EVEOnlineUser(_ context.Context, p EVEOnlineProfile, _ provider.TokenSet) (provider.User, error) {
	id := itoa(p.CharacterID)
	u := provider.User{ID: id, Name: str(p.CharacterName)}
	if id != "" {
		u.Image = str("https://images.evetech.net/characters/" + id + "/portrait?size=128")
	}
	return u, nil
}

// EVEOnline returns the EVE Online SSO provider (id "eveonline"), asking
// for publicData, with the state check.
func EVEOnline(clientID, clientSecret string) *provider.OAuth2Config[EVEOnlineProfile] {
	return oauthBuiltIn("eveonline", "EVE Online", "#000000", "state", clientID, clientSecret, EVEOnlineUser,
		"https://login.eveonline.com/v2/oauth/authorize", "publicData", "https://login.eveonline.com/v2/oauth/token", "https://login.eveonline.com/oauth/verify")
}
