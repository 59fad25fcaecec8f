package tokens

import (
	"context"
	"crypto/subtle"
	"strings"

	"github.com/authport/authport/core"
)

// Revoke answers a revocation request (RFC 7009) from the client
// clientID. A refresh token of the client ends its family: the family's
// database session is deleted, so its other refresh tokens stop working
// too. An access token, or a token that is unknown, malformed or of an
// ended family, is answered with success and changes nothing, as RFC 7009
// §2.2 allows: access tokens are verified without the store and live until
// they expire ([Config.AccessTokenTTL]; keep it short), so revoking the
// family is what stops a client. Another client's refresh token is refused
// with unauthorized_client (§2.1) and changes nothing.
func (i *Issuer) Revoke(ctx context.Context, token, clientID string) error {
	switch {
	case clientID == "":
		return refuse(CodeInvalidRequest, "client_id is required")
	case i.client(clientID) == nil:
		return refuse(CodeInvalidClient, "no client is registered with this client_id")
	case token == "":
		return refuse(CodeInvalidRequest, "token is required")
	}
	rt, err := i.openRefresh(token)
	if err != nil {
		return nil // an access token, or not ours: nothing to revoke
	}
	if rt.clientID != clientID {
		return refuse(CodeUnauthorizedClient, "the token was issued to another client")
	}
	_, err = i.auth.SignOut(ctx, rt.session)
	return err
}

// Introspection is an introspection response (RFC 7662 §2.2). Inactive
// tokens give only Active false.
type Introspection struct {
	Active    bool     `json:"active"`
	Scope     string   `json:"scope,omitempty"`
	ClientID  string   `json:"client_id,omitempty"`
	TokenType string   `json:"token_type,omitempty"` // "Bearer" for access tokens, "refresh_token"
	Expiry    int64    `json:"exp,omitempty"`
	IssuedAt  int64    `json:"iat,omitempty"`
	Subject   string   `json:"sub,omitempty"`
	Audience  Audience `json:"aud,omitempty"`
	Issuer    string   `json:"iss,omitempty"`
	ID        string   `json:"jti,omitempty"`
	SessionID string   `json:"sid,omitempty"`
}

// Introspect tells the application's own services about a token (RFC
// 7662): protect the route that calls it ([Config.IntrospectionSecret];
// the handler does). A refresh token is active when its family's session
// is alive and its generation is the current one. An access token is
// active when [Issuer.Verify] accepts it and, on an adapter that lists a
// user's sessions (listSessionsByUserId, one indexed read), its family's
// session (sid) is still alive: unlike Verify, introspection sees a family
// ended by sign-out or revocation before the token expires. On an adapter
// without that extension access-token introspection is stateless, as
// Verify. An error is a store failure.
func (i *Issuer) Introspect(ctx context.Context, token string) (Introspection, error) {
	if strings.Count(token, ".") == 2 {
		c, err := i.Verify(ctx, token)
		if err != nil {
			return Introspection{}, nil
		}
		if i.auth.Capabilities().HasExtension(core.ExtensionListSessionsByUserID) {
			ids, err := i.edge.UserSessionIDs(ctx, c.Subject)
			if err != nil {
				return Introspection{}, err
			}
			alive := false
			for _, id := range ids {
				if subtle.ConstantTimeCompare([]byte(id), []byte(c.SessionID)) == 1 {
					alive = true
				}
			}
			if !alive {
				return Introspection{}, nil
			}
		}
		return Introspection{Active: true, Scope: c.Scope, ClientID: c.ClientID, TokenType: "Bearer", Expiry: c.Expiry,
			IssuedAt: c.IssuedAt, Subject: c.Subject, Audience: c.Audience, Issuer: c.Issuer, ID: c.ID, SessionID: c.SessionID}, nil
	}
	rt, err := i.openRefresh(token)
	if err != nil {
		return Introspection{}, nil
	}
	active, user, expires, err := i.edge.FamilyActive(ctx, rt.family())
	if err != nil || !active {
		return Introspection{}, err
	}
	return Introspection{Active: true, Scope: rt.scope, ClientID: rt.clientID, TokenType: "refresh_token",
		Expiry: expires.Unix(), Subject: user.ID, Issuer: i.issuer, SessionID: sessionID(rt.session)}, nil
}
