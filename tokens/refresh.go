package tokens

import (
	"context"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// A token family is a database session made for a native client by
// auth.Auth.CreateSession; rotation, the lost reply's retry and reuse are
// core/auth's (auth.Edge.RotateFamily, whose comment tells how). A refresh
// token is the family token (the session token S, its generation n, the
// session's expiry E_n when it was issued, the client_id) with the scope
// and the sign-in time, sealed with AES-256-GCM under a key derived from
// the Auth's secrets (see sealer): nothing is stored per refresh token,
// and a client never sees S.

// sessionID is the public id of a family's session.
var sessionID = auth.SessionID

// refreshToken is the content of a refresh token.
type refreshToken struct {
	session  string    // S
	gen      uint64    // n
	expires  time.Time // E_n
	clientID string
	scope    string
	authTime int64
}

func (i *Issuer) sealRefresh(rt refreshToken) string {
	var w writer
	w.uint(rt.gen)
	w.time(rt.expires)
	w.int(rt.authTime)
	w.str(rt.session)
	w.str(rt.clientID)
	w.str(rt.scope)
	return i.refresh.seal(w.b)
}

func (i *Issuer) openRefresh(token string) (refreshToken, error) {
	pt, err := i.refresh.open(token)
	if err != nil {
		return refreshToken{}, err
	}
	r := reader{b: pt}
	rt := refreshToken{gen: r.uint(), expires: r.time(), authTime: r.int(), session: r.str(), clientID: r.str(), scope: r.str()}
	if err := r.done(); err != nil || rt.session == "" || rt.clientID == "" {
		return refreshToken{}, errUnsealed
	}
	return rt, nil
}

// TokenResponse is a successful token response (RFC 6749 §5.1).
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"` // "Bearer"
	ExpiresIn    int64  `json:"expires_in"` // seconds
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope,omitempty"`
}

// respond signs an access token for the family and returns it with the
// refresh token.
func (i *Issuer) respond(rt refreshToken, userID string, now time.Time) (*TokenResponse, error) {
	at, err := i.signAccess(family{userID: userID, clientID: rt.clientID, sessionToken: rt.session, scope: rt.scope, authTime: rt.authTime}, now)
	if err != nil {
		return nil, err
	}
	return &TokenResponse{AccessToken: at, TokenType: "Bearer", ExpiresIn: int64(i.accessTTL / time.Second),
		RefreshToken: i.sealRefresh(rt), Scope: rt.scope}, nil
}

// IssueOptions are the optional parts of [Issuer.Issue].
type IssueOptions struct {
	// Scope is the scope to grant, space-separated; each must be one of
	// the client's Scopes.
	Scope string
	// AuthTime is when the user signed in (auth_time); zero leaves the
	// claim out.
	AuthTime time.Time
}

// Issue starts a token family for the user and the registered client: a
// new database session (auth.Auth.CreateSession; the client ctx carries,
// auth.WithClient, is recorded with the client's name as its user agent)
// and the first access and refresh tokens. It is what the code exchange
// does after checking the code; an application calls it to hand tokens
// to a client it has authenticated by other means.
func (i *Issuer) Issue(ctx context.Context, userID, clientID string, opts IssueOptions) (*TokenResponse, error) {
	c := i.client(clientID)
	if c == nil {
		return nil, refuse(CodeInvalidClient, "no client is registered with this client_id")
	}
	if userID == "" {
		return nil, refuse(CodeInvalidRequest, "no user")
	}
	scope, ok := c.scopeAllowed(opts.Scope)
	if !ok {
		return nil, refuse(CodeInvalidScope, "the client may not ask for this scope")
	}
	var authTime int64
	if !opts.AuthTime.IsZero() {
		authTime = opts.AuthTime.Unix()
	}
	cl, _ := auth.ClientFrom(ctx)
	ua := c.displayName()
	if cl.UserAgent != "" {
		ua += " (" + cl.UserAgent + ")"
	}
	cl.UserAgent = ua
	s, err := i.auth.CreateSession(auth.WithClient(ctx, cl), userID)
	if err != nil {
		return nil, err
	}
	rt := refreshToken{session: s.SessionToken, gen: 0, expires: core.NormalizeTime(s.Expires), clientID: c.ID, scope: scope, authTime: authTime}
	return i.respond(rt, userID, i.now())
}

// Refresh answers grant_type=refresh_token: it rotates the refresh token
// and returns a new access token with the successor. clientID is the
// request's client_id, which must be the token's. A refused request gives
// an *Error (invalid_grant for a token that is malformed, another
// issuer's or client's, of an ended family, or reused) and changes
// nothing, except reuse, which ends the family.
func (i *Issuer) Refresh(ctx context.Context, token, clientID string) (*TokenResponse, error) {
	if clientID == "" {
		return nil, refuse(CodeInvalidRequest, "client_id is required")
	}
	if i.client(clientID) == nil {
		return nil, refuse(CodeInvalidClient, "no client is registered with this client_id")
	}
	if token == "" {
		return nil, refuse(CodeInvalidRequest, "refresh_token is required")
	}
	rt, err := i.openRefresh(token)
	if err != nil {
		return nil, refuse(CodeInvalidGrant, "the refresh token is malformed, expired or not from this server")
	}
	outcome, next, user, err := i.edge.RotateFamily(ctx, rt.family(), clientID, auth.FamilyPolicy{RetryAfter: i.retryAfter, RetryWindow: i.retryWindow})
	switch {
	case err != nil:
		return nil, err
	case outcome == auth.FamilyRotated || outcome == auth.FamilyRetried:
		succ := rt
		succ.gen, succ.expires = next.Generation, next.Expires
		return i.respond(succ, user.ID, i.now())
	case outcome == auth.FamilyEnded:
		return nil, refuse(CodeInvalidGrant, "the refresh token's family has ended (signed out, revoked or expired)")
	case outcome == auth.FamilyReused:
		return nil, refuse(CodeInvalidGrant, "the refresh token was used before: its family is ended; sign in again")
	}
	return nil, refuse(CodeInvalidGrant, "the refresh token does not match its family (or was issued to another client)")
}

// family is the family token rt stands for.
func (rt refreshToken) family() auth.FamilyToken {
	return auth.FamilyToken{Session: rt.session, Generation: rt.gen, Expires: rt.expires, ClientID: rt.clientID}
}
