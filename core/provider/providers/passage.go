package providers

import (
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// PassageProfile is the claims of a Passage ID token.
type PassageProfile struct {
	StandardClaims
	PhoneNumber         string `json:"phone_number,omitempty"`
	PhoneNumberVerified bool   `json:"phone_number_verified,omitempty"`
}

// Passage returns the Passage by 1Password OpenID Connect provider (id
// "passage"), authenticating with client_secret_basic. issuer is the
// app's issuer, https://auth.passage.id/v1/apps/{appID}; an app id alone
// is accepted.
func Passage(clientID, clientSecret, issuer string) *provider.OIDCConfig[PassageProfile] {
	is := strings.TrimSpace(issuer)
	if is != "" && !strings.ContainsAny(is, "/.") {
		is = "https://auth.passage.id/v1/apps/" + url.PathEscape(is)
	}
	return oidcBuiltIn("passage", "Passage", "#000000", "basic", clientID, clientSecret, StandardClaimsUser[PassageProfile], issuerURL(is))
}
