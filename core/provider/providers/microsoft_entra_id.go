package providers

import (
	"context"
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// MicrosoftEntraIDProfile is the claims of a Microsoft Entra ID (v2.0) ID
// token.
type MicrosoftEntraIDProfile struct {
	StandardClaims
	OID string `json:"oid"`
	TID string `json:"tid"`
}

// MicrosoftEntraIDUser is the Microsoft Entra ID profile mapping: sub,
// email, name, picture (the ID token has no picture unless one was added;
// the photo is behind Microsoft Graph).
func MicrosoftEntraIDUser(_ context.Context, p MicrosoftEntraIDProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.Name), nil
}

// MicrosoftEntraID returns the Microsoft Entra ID OpenID Connect provider
// (id "microsoft-entra-id"), asking for openid, profile, email and
// User.Read. The issuer is https://login.microsoftonline.com/{tenant}/v2.0;
// tenant is a tenant id or domain, or "common" (the default when empty:
// any work, school or personal account), "organizations" or "consumers".
// A full issuer URL is accepted too.
//
// The multi-tenant discovery documents name the issuer with a {tenantid}
// placeholder, and the ID token's iss carries the user's tenant: the
// sign-in code must compare issuers accordingly.
func MicrosoftEntraID(clientID, clientSecret, tenant string) *provider.OIDCConfig[MicrosoftEntraIDProfile] {
	issuer := strings.TrimSpace(tenant)
	if !strings.Contains(issuer, "://") {
		if issuer == "" {
			issuer = "common"
		}
		issuer = "https://login.microsoftonline.com/" + url.PathEscape(issuer) + "/v2.0"
	}
	c := oidcBuiltIn("microsoft-entra-id", "Microsoft Entra ID", "#0072c6", "", clientID, clientSecret, MicrosoftEntraIDUser, issuer)
	c.Authorization = provider.Endpoint{Params: params("scope", "openid profile email User.Read")}
	return c
}
