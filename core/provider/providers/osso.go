package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// OssoProfile is the Osso user (GET /oauth/me).
type OssoProfile struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	IDP       string `json:"idp"`
	Requested struct {
		Domain string `json:"domain"`
		Email  string `json:"email"`
	} `json:"requested"`
}

// OssoUser maps an Osso user: id, email (also the name, SAML giving no
// other); no picture.
func OssoUser(_ context.Context, p OssoProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(p.Email)}, nil
}

// Osso returns the Osso (SAML single sign-on) OAuth 2.0 provider (id
// "osso") for the deployment at issuer, with the state check.
func Osso(clientID, clientSecret, issuer string) *provider.OAuth2Config[OssoProfile] {
	return hostedBuiltIn("osso", "Osso", "#5a67d8", "state post", clientID, clientSecret, OssoUser,
		issuer, "/oauth/authorize", "", "/oauth/token", "/oauth/me")
}
