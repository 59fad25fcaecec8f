package providers

import (
	"strings"

	"github.com/authport/authport/core/provider"
)

// SalesforceProfile is the Salesforce userinfo response.
type SalesforceProfile struct {
	StandardClaims
	UserID         string `json:"user_id,omitempty"`
	OrganizationID string `json:"organization_id,omitempty"`
	Active         bool   `json:"active,omitempty"`
	UserType       string `json:"user_type,omitempty"`
}

// Salesforce returns the Salesforce OpenID Connect provider (id
// "salesforce", issuer https://login.salesforce.com; give
// https://test.salesforce.com or a My Domain URL as issuer otherwise)
// with the pkce, state and nonce checks. The profile comes from the
// userinfo endpoint (IDToken false).
func Salesforce(clientID, clientSecret, issuer string) *provider.OIDCConfig[SalesforceProfile] {
	if strings.TrimSpace(issuer) == "" {
		issuer = "https://login.salesforce.com"
	}
	c := oidcBuiltIn("salesforce", "Salesforce", "#00a1e0", "pkce state nonce", clientID, clientSecret, StandardClaimsUser[SalesforceProfile], issuerURL(issuer))
	no := false
	c.IDToken = &no
	return c
}
