package providers

import (
	"context"
	"strings"

	"github.com/authport/authport/core/provider"
)

// WorkOSProfile is the WorkOS SSO profile (GET /sso/profile).
type WorkOSProfile struct {
	Object         string         `json:"object"`
	ID             string         `json:"id"`
	OrganizationID string         `json:"organization_id"`
	ConnectionID   string         `json:"connection_id"`
	ConnectionType string         `json:"connection_type"`
	IdpID          string         `json:"idp_id"`
	Email          string         `json:"email"`
	FirstName      string         `json:"first_name"`
	LastName       string         `json:"last_name"`
	RawAttributes  map[string]any `json:"raw_attributes"`
}

// WorkOSUser maps a WorkOS profile: id, email, first and last name, the
// raw attribute picture if the identity provider sent one.
func WorkOSUser(_ context.Context, p WorkOSProfile, _ provider.TokenSet) (provider.User, error) {
	pic, _ := p.RawAttributes["picture"].(string)
	return provider.User{ID: p.ID, Email: p.Email, Name: str(joinNonEmpty(p.FirstName, p.LastName)), Image: str(pic)}, nil
}

// WorkOS returns the WorkOS SSO provider (id "workos") with the state
// check, authenticating with client_secret_post. connection, when not
// empty, is sent as the connection to sign in with; otherwise pass
// organization, connection or provider as authorization parameters.
func WorkOS(clientID, clientSecret, connection string) *provider.OAuth2Config[WorkOSProfile] {
	c := oauthBuiltIn("workos", "WorkOS", "#6363f1", "state post", clientID, clientSecret, WorkOSUser,
		"https://api.workos.com/sso/authorize", "", "https://api.workos.com/sso/token", "https://api.workos.com/sso/profile")
	if s := strings.TrimSpace(connection); s != "" {
		c.Authorization.Params = params("connection", s)
	}
	return c
}
