package providers

import (
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// DescopeProfile is the claims of a Descope ID token.
type DescopeProfile struct {
	StandardClaims
	PhoneNumber string `json:"phone_number,omitempty"`
}

// Descope returns the Descope OpenID Connect provider (id "descope") with
// the pkce and state checks. The client id is the Descope project id; the
// issuer is https://api.descope.com/{projectId} unless issuer is given.
func Descope(clientID, clientSecret, issuer string) *provider.OIDCConfig[DescopeProfile] {
	if strings.TrimSpace(issuer) == "" && clientID != "" {
		issuer = "https://api.descope.com/" + url.PathEscape(clientID)
	}
	return oidcBuiltIn("descope", "Descope", "#1C1C23", "pkce state", clientID, clientSecret, StandardClaimsUser[DescopeProfile], issuerURL(issuer))
}
