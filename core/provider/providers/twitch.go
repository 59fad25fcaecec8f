package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// TwitchProfile is the claims of a Twitch ID token, as the Twitch provider
// requests them: standard claims (sub, preferred_username, email,
// email_verified, picture).
type TwitchProfile struct {
	StandardClaims
}

// TwitchUser is the Twitch profile mapping: sub, email,
// preferred_username, picture.
func TwitchUser(_ context.Context, p TwitchProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.PreferredUsername), nil
}

// Twitch returns the Twitch OpenID Connect provider (id "twitch", issuer
// https://id.twitch.tv/oauth2), asking for openid and user:read:email and
// for the email, picture and preferred_username claims in the ID token,
// and authenticating with client_secret_post. Twitch returns scope as a
// list; [provider.TokenSet] joins it.
func Twitch(clientID, clientSecret string) *provider.OIDCConfig[TwitchProfile] {
	claims := `{"id_token":{"email":null,"picture":null,"preferred_username":null}}`
	c := oidcBuiltIn("twitch", "Twitch", "#65459B", "post", clientID, clientSecret, TwitchUser, "https://id.twitch.tv/oauth2")
	c.Authorization = provider.Endpoint{Params: params("scope", "openid user:read:email", "claims", claims)}
	return c
}
