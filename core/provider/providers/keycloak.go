package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// KeycloakProfile is the Keycloak ID token claims the Keycloak provider
// reads.
type KeycloakProfile struct {
	StandardClaims
	SessionState string `json:"session_state,omitempty"`
}

// KeycloakUser is the Keycloak profile mapping: sub, email, name (else
// preferred_username), picture.
func KeycloakUser(_ context.Context, p KeycloakProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.Name, p.PreferredUsername), nil
}

// Keycloak returns the Keycloak OpenID Connect provider (id "keycloak").
// issuer is the realm's URL, e.g. https://auth.example.com/realms/myrealm.
func Keycloak(clientID, clientSecret, issuer string) *provider.OIDCConfig[KeycloakProfile] {
	return oidcBuiltIn("keycloak", "Keycloak", "#428bca", "", clientID, clientSecret, KeycloakUser, issuerURL(issuer))
}
