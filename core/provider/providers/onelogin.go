package providers

import (
	"strings"

	"github.com/authport/authport/core/provider"
)

// OneLoginProfile is the claims of a OneLogin ID token.
type OneLoginProfile struct {
	StandardClaims
	Groups []string `json:"groups,omitempty"`
}

// OneLogin returns the OneLogin OpenID Connect provider (id "onelogin").
// issuer is the account's subdomain ("example" for
// https://example.onelogin.com), its URL, or the full issuer
// https://example.onelogin.com/oidc/2.
func OneLogin(clientID, clientSecret, issuer string) *provider.OIDCConfig[OneLoginProfile] {
	is := strings.TrimSpace(issuer)
	if is != "" && !strings.ContainsAny(is, "/.") {
		is = "https://" + is + ".onelogin.com"
	}
	is = baseURL(is)
	if is != "" && !strings.HasSuffix(is, "/oidc/2") {
		is += "/oidc/2"
	}
	return oidcBuiltIn("onelogin", "OneLogin", "#1c1f2a", "", clientID, clientSecret, StandardClaimsUser[OneLoginProfile], is)
}
