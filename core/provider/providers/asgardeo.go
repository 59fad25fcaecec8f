package providers

import (
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// AsgardeoProfile is the claims of an Asgardeo ID token.
type AsgardeoProfile struct {
	StandardClaims
	Username string `json:"username,omitempty"`
}

// Asgardeo returns the WSO2 Asgardeo OpenID Connect provider (id
// "asgardeo"). org is the organization's base URL,
// https://api.asgardeo.io/t/{org}, or just the organization name; the
// issuer is {base}/oauth2/token, which is where Asgardeo publishes its
// discovery document.
func Asgardeo(clientID, clientSecret, org string) *provider.OIDCConfig[AsgardeoProfile] {
	base := strings.TrimSpace(org)
	if base != "" && !strings.ContainsAny(base, "/.") {
		base = "https://api.asgardeo.io/t/" + url.PathEscape(base)
	}
	base = strings.TrimSuffix(baseURL(base), "/oauth2/token")
	issuer := ""
	if base != "" {
		issuer = base + "/oauth2/token"
	}
	return oidcBuiltIn("asgardeo", "Asgardeo", "#ff5000", "", clientID, clientSecret, StandardClaimsUser[AsgardeoProfile], issuer)
}
