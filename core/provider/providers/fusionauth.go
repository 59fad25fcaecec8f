package providers

import (
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// FusionAuthProfile is the claims of a FusionAuth ID token.
type FusionAuthProfile struct {
	StandardClaims
	ApplicationID string   `json:"applicationId,omitempty"`
	Roles         []string `json:"roles,omitempty"`
	TID           string   `json:"tid,omitempty"`
}

// FusionAuth returns the FusionAuth OpenID Connect provider (id
// "fusionauth") with the pkce and state checks, asking for openid,
// offline_access, email and profile. issuer is the FusionAuth URL;
// tenantID, when not empty, is sent as tenantId on discovery and
// authorization (for instances with several tenants).
func FusionAuth(clientID, clientSecret, issuer, tenantID string) *provider.OIDCConfig[FusionAuthProfile] {
	base := baseURL(issuer)
	c := oidcBuiltIn("fusionauth", "FusionAuth", "#f58320", "pkce state", clientID, clientSecret, StandardClaimsUser[FusionAuthProfile], base)
	c.Authorization = provider.Endpoint{Params: params("scope", "openid offline_access email profile")}
	if t := strings.TrimSpace(tenantID); t != "" {
		c.Authorization.Params.Set("tenantId", t)
		if base != "" {
			c.WellKnown = base + "/.well-known/openid-configuration?tenantId=" + url.QueryEscape(t)
		}
	}
	return c
}
