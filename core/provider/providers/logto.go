package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// LogtoProfile is the claims of a Logto ID token.
type LogtoProfile struct {
	StandardClaims
	Username string `json:"username,omitempty"`
}

// LogtoUser maps a Logto profile: sub, email, name (else username),
// picture.
func LogtoUser(_ context.Context, p LogtoProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.Name, p.Username), nil
}

// Logto returns the Logto OpenID Connect provider (id "logto"), asking for
// offline_access, openid, email and profile. issuer is the tenant's OIDC
// issuer, e.g. https://example.logto.app/oidc.
func Logto(clientID, clientSecret, issuer string) *provider.OIDCConfig[LogtoProfile] {
	c := oidcBuiltIn("logto", "Logto", "#5d34f2", "", clientID, clientSecret, LogtoUser, issuerURL(issuer))
	c.Authorization = provider.Endpoint{Params: params("scope", "offline_access openid email profile")}
	return c
}
