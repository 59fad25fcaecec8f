package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// OktaProfile is the Okta ID token claims the Okta provider reads.
type OktaProfile struct {
	Sub               string `json:"sub"`
	Name              string `json:"name"`
	Nickname          string `json:"nickname,omitempty"`
	PreferredUsername string `json:"preferred_username"`
	GivenName         string `json:"given_name,omitempty"`
	MiddleName        string `json:"middle_name,omitempty"`
	FamilyName        string `json:"family_name,omitempty"`
	Email             string `json:"email"`
	EmailVerified     bool   `json:"email_verified"`
	Picture           string `json:"picture,omitempty"`
	Locale            string `json:"locale,omitempty"`
	Zoneinfo          string `json:"zoneinfo,omitempty"`
}

// OktaUser is the Okta profile mapping: sub, email, name (else nickname,
// else preferred_username), picture.
func OktaUser(_ context.Context, p OktaProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.Sub, Email: p.Email, Name: str(first(p.Name, p.Nickname, p.PreferredUsername)), Image: str(p.Picture)}, nil
}

// Okta returns the Okta OpenID Connect provider (id "okta") with the pkce
// and state checks. issuer is the org or authorization server URL, e.g.
// https://dev-123456.okta.com/oauth2/default; a bare domain is taken as
// https://{domain}.
func Okta(clientID, clientSecret, issuer string) *provider.OIDCConfig[OktaProfile] {
	return oidcBuiltIn("okta", "Okta", "#000000", "pkce state", clientID, clientSecret, OktaUser, issuerURL(issuer))
}
