package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// BoxyHQSAMLProfile is the SAML Jackson userinfo response.
type BoxyHQSAMLProfile struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Requested any    `json:"requested,omitempty"`
}

// BoxyHQSAMLUser maps a SAML Jackson profile: id, email, first and last
// name joined.
func BoxyHQSAMLUser(_ context.Context, p BoxyHQSAMLProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: p.ID, Email: p.Email, Name: str(joinNonEmpty(p.FirstName, p.LastName))}, nil
}

// BoxyHQSAML returns the BoxyHQ SAML Jackson provider (id
// "boxyhq-saml"): SAML single sign-on behind an OAuth 2.0 interface, with
// the pkce and state checks and provider=saml on the authorization
// request. issuer is the Jackson deployment's URL; pass tenant and
// product as authorization parameters when signing in.
func BoxyHQSAML(clientID, clientSecret, issuer string) *provider.OAuth2Config[BoxyHQSAMLProfile] {
	base := baseURL(issuer)
	c := oauthBuiltIn("boxyhq-saml", "BoxyHQ SAML", "#25c2a0", "pkce state", clientID, clientSecret, BoxyHQSAMLUser,
		base+"/api/oauth/authorize", "", base+"/api/oauth/token", base+"/api/oauth/userinfo")
	if base == "" {
		c.Authorization.URL, c.Token.URL, c.Userinfo.URL = "", "", ""
	}
	c.Authorization.Params = params("provider", "saml")
	return c
}
