package tokens

import (
	"context"
	"errors"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// A token family is a database session made for a native client by
// auth.Auth.CreateSession, the one function that creates sessions: the
// session inventory lists it (its user agent is the client's name), and
// revoking it, "sign out everywhere", sign-out and deleteUser end the
// family with no extra work. Its token S never leaves the server.
//
// A refresh token is S, its generation n, the session's expiry E_n when it
// was issued, the client_id, the scope and the sign-in time, sealed with
// AES-256-GCM under a key derived from the Auth's secrets (see sealer):
// nothing is stored per refresh token. The session's expiry is the
// family's generation counter: rotation is one compare-and-set of it
// (core.SessionExtender: expires E_n → E_n+1, atomic across instances on
// every built-in adapter), so of any number of concurrent refreshes of
// one token exactly one rotates. E_n+1 is MaxAge from now, truncated to
// the second, plus (n+1 mod 1000) milliseconds (a second later if that is
// not after E_n): its milliseconds carry the generation, its seconds the
// rotation time. A refresh is getSessionAndUser and, when the stored
// expiry is E_n, extendSession: two round trips.
//
// A token whose E_n is older than the stored expiry was rotated already.
// Presented again by its client between RetryAfter and RetryWindow after
// a rotation to generation n+1, for the first time (a single-use record,
// auth.Edge.UseOnce), it is a retry whose reply was lost, and gets the
// same successor. Anything else is reuse (RFC 9700 §4.14.2: a refresh
// token used twice has leaked): the family's session is deleted, which
// ends every token of the family, and invalid_grant answered.

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
	now := i.now()
	su, err := i.edge.TokenSession(ctx, rt.session)
	if err != nil {
		return nil, err
	}
	if su == nil || su.Session.Expired(now) {
		return nil, refuse(CodeInvalidGrant, "the refresh token's family has ended (signed out, revoked or expired)")
	}
	stored := core.NormalizeTime(su.Session.Expires)
	if stored.Equal(rt.expires) {
		if rt.clientID != clientID {
			return nil, refuse(CodeInvalidGrant, "the refresh token was issued to another client")
		}
		next := nextExpiry(now, i.maxAge, stored, rt.gen+1)
		s, wrote, err := i.edge.RotateTokenSession(ctx, rt.session, stored, next, now)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, refuse(CodeInvalidGrant, "the refresh token's family has ended (signed out, revoked or expired)")
		}
		if wrote {
			succ := rt
			succ.gen, succ.expires = rt.gen+1, next
			return i.respond(succ, su.User.ID, now)
		}
		// Another refresh of this token rotated it first.
		stored = core.NormalizeTime(s.Expires)
	}
	if !stored.After(rt.expires) {
		// The family's expiry is older than the token's: not a state
		// authport makes. Refuse without touching the family.
		return nil, refuse(CodeInvalidGrant, "the refresh token does not match its family")
	}
	return i.rotated(ctx, rt, clientID, su.User.ID, stored, now)
}

// rotated answers a refresh token that was rotated already: the lost
// reply's retry gets the successor once, anything else ends the family.
func (i *Issuer) rotated(ctx context.Context, rt refreshToken, clientID, userID string, stored, now time.Time) (*TokenResponse, error) {
	next := rt.gen + 1
	rotatedAt := stored.Truncate(time.Second).Add(-i.maxAge)
	elapsed := now.Sub(rotatedAt)
	if i.retryWindow > 0 && clientID == rt.clientID && uint64(stored.Nanosecond()/int(time.Millisecond)) == next%1000 &&
		elapsed >= i.retryAfter && elapsed <= i.retryWindow {
		err := i.edge.UseOnce(ctx, "refresh-retry", sessionID(rt.session)+":"+uitoa(rt.gen), rotatedAt.Add(i.retryWindow+time.Minute))
		switch {
		case err == nil:
			succ := rt
			succ.gen, succ.expires = next, stored
			return i.respond(succ, userID, now)
		case !errors.Is(err, core.ErrAlreadyExists):
			return nil, err
		}
	}
	if _, err := i.edge.EndTokenFamily(ctx, rt.session, auth.RefreshTokenReusedEvent{
		UserID: userID, SessionID: sessionID(rt.session), ClientID: rt.clientID, Generation: rt.gen,
	}); err != nil {
		return nil, err
	}
	return nil, refuse(CodeInvalidGrant, "the refresh token was used before: its family is ended; sign in again")
}

// nextExpiry is E_n+1: MaxAge from now truncated to the second, plus
// gen mod 1000 milliseconds, moved on by whole seconds until it is after
// prev (a clock behind the one that wrote prev).
func nextExpiry(now time.Time, maxAge time.Duration, prev time.Time, gen uint64) time.Time {
	ms := time.Duration(gen%1000) * time.Millisecond
	e := now.Add(maxAge).Truncate(time.Second).Add(ms)
	if !e.After(prev) {
		e = prev.Truncate(time.Second).Add(ms)
		if !e.After(prev) {
			e = e.Add(time.Second)
		}
	}
	return core.NormalizeTime(e)
}

func uitoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
