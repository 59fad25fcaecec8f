package providers

import (
	"context"
	"strings"

	"github.com/authport/authport/core/provider"
)

// BattleNetProfile is the claims of a Battle.net ID token.
type BattleNetProfile struct {
	Sub       string `json:"sub"`
	BattleTag string `json:"battle_tag"`
}

// BattleNetUser maps a Battle.net profile: sub, and the BattleTag as the
// name; Battle.net gives no e-mail address or picture.
func BattleNetUser(_ context.Context, p BattleNetProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Sub, Name: str(p.BattleTag)}, nil
}

// BattleNet returns the Battle.net OpenID Connect provider (id
// "battlenet"). issuer is the region's issuer: https://oauth.battle.net
// (the default when empty) or https://oauth.battlenet.com.cn.
func BattleNet(clientID, clientSecret, issuer string) *provider.OIDCConfig[BattleNetProfile] {
	if strings.TrimSpace(issuer) == "" {
		issuer = "https://oauth.battle.net"
	}
	c := oidcBuiltIn("battlenet", "Battle.net", "#148eff", "", clientID, clientSecret, BattleNetUser, issuerURL(issuer))
	c.Authorization = provider.Endpoint{Params: params("scope", "openid")}
	return c
}
