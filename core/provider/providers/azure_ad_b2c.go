package providers

import (
	"context"
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
)

// AzureADB2CProfile is the claims of an Azure AD B2C ID token. B2C puts
// the e-mail addresses in the emails list, not in email.
type AzureADB2CProfile struct {
	StandardClaims
	OID    string   `json:"oid,omitempty"`
	TFP    string   `json:"tfp,omitempty"`
	Emails []string `json:"emails,omitempty"`
}

// AzureADB2CUser maps an Azure AD B2C profile: sub, the first of emails
// (else email), name (else the standard fallbacks), no picture.
func AzureADB2CUser(ctx context.Context, p AzureADB2CProfile, t provider.TokenSet) (provider.User, error) {
	u, err := StandardClaimsUser(ctx, p, t)
	if len(p.Emails) > 0 {
		u.Email = p.Emails[0]
	}
	return u, err
}

// AzureADB2C returns the Azure AD B2C OpenID Connect provider (id
// "azure-ad-b2c"), asking for openid, profile and offline_access. issuer
// is the tenant's issuer, https://{tenant}.b2clogin.com/{tenant-id}/v2.0/
// (with B2C's trailing slash); policy is the user flow (e.g.
// B2C_1_signupsignin), sent as p to discovery, which is how B2C serves a
// flow's metadata under the issuer.
func AzureADB2C(clientID, clientSecret, issuer, policy string) *provider.OIDCConfig[AzureADB2CProfile] {
	is := issuerURL(issuer)
	c := oidcBuiltIn("azure-ad-b2c", "Azure AD B2C", "#0072c6", "", clientID, clientSecret, AzureADB2CUser, is)
	c.Authorization = provider.Endpoint{Params: params("scope", "openid profile offline_access")}
	if p := strings.TrimSpace(policy); p != "" && is != "" {
		c.WellKnown = strings.TrimSuffix(is, "/") + "/.well-known/openid-configuration?p=" + url.QueryEscape(p)
	}
	return c
}
