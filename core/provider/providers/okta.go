package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// OktaProfile is the Okta ID token claims the Okta provider reads.
type OktaProfile struct {
	StandardClaims
}

// OktaUser is the Okta profile mapping: sub, email, name (else nickname,
// else preferred_username), picture.
func OktaUser(_ context.Context, p OktaProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.Name, p.Nickname, p.PreferredUsername), nil
}

// Okta returns the Okta OpenID Connect provider (id "okta") with the pkce
// and state checks. issuer is the org or authorization server URL, e.g.
// https://dev-123456.okta.com/oauth2/default; a bare domain is taken as
// https://{domain}.
func Okta(clientID, clientSecret, issuer string) *provider.OIDCConfig[OktaProfile] {
	return oidcBuiltIn("okta", "Okta", "#000000", "pkce state", clientID, clientSecret, OktaUser, issuerURL(issuer))
}
