package auth

import (
	"context"
	"time"

	"github.com/authport/authport/core"
)

// RefreshTokenReusedEvent reports a token family ended because a refresh
// token was presented again after it had been rotated (RFC 9700 §4.14.2:
// a refresh token used twice has leaked), by module
// github.com/authport/authport/tokens. It holds public ids, never tokens.
type RefreshTokenReusedEvent struct {
	// UserID is the family's user.
	UserID string
	// SessionID is the family's database session's public id
	// ([SessionID]); the session is gone.
	SessionID string
	// ClientID is the native client the family was issued to.
	ClientID string
	// Generation is the rotation count of the token presented again.
	Generation uint64
}

// The token families of module github.com/authport/authport/tokens are
// database sessions, created by [Auth.CreateSession] like any other (so
// that the session inventory lists them, and sign-out, revocation and
// deleteUser end them). Their refresh rotation reads and writes the
// session without the browser session's rules: no extension per
// UpdateAge, a compare-and-set of the expiry instead. These methods give
// it that access through the Auth's checked adapter layer.

// TokenSession returns the session with the token and its user as the
// adapter stores them, or nil: no extension, no deletion of an expired
// session (the caller checks Expires). One getSessionAndUser.
func (e Edge) TokenSession(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	if sessionToken == "" {
		return nil, nil
	}
	return call(e.a, "token refresh", func(g core.SessionAndUserGetter) (*core.SessionAndUser, error) {
		return g.GetSessionAndUser(ctx, sessionToken)
	})
}

// RotateTokenSession sets the session's expiry to expires if, atomically,
// it is still from ([core.SessionExtender]), recording seen as the time
// the session was last used; it returns the session as stored afterwards
// and whether this call wrote. It needs the extendSession extension: an
// adapter without it gives an error matching [core.ErrMissingAdapterMethod].
func (e Edge) RotateTokenSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*core.Session, bool, error) {
	type result struct {
		s     *core.Session
		wrote bool
	}
	r, err := call(e.a, "token refresh", func(x core.SessionExtender) (result, error) {
		s, wrote, err := x.ExtendSession(ctx, sessionToken, from, expires, seen)
		return result{s, wrote}, err
	})
	return r.s, r.wrote, err
}

// EndTokenFamily deletes the family's session because one of its refresh
// tokens was reused, runs [Events.RefreshTokenReused] and logs a WARN
// record (public ids only). It reports whether a session was deleted.
func (e Edge) EndTokenFamily(ctx context.Context, sessionToken string, ev RefreshTokenReusedEvent) (bool, error) {
	deleted, err := e.a.SignOut(ctx, sessionToken)
	if err != nil {
		return false, err
	}
	e.a.log.WarnContext(ctx, "authport: refresh token reused: the token family is ended",
		"user_id", ev.UserID, "session_id", ev.SessionID, "client_id", ev.ClientID, "generation", ev.Generation)
	emit(e.a, ctx, "refreshTokenReused", e.a.events.RefreshTokenReused, ev)
	return deleted != nil, nil
}

// ClientFrom returns the [Client] ctx carries ([WithClient]), as given,
// and whether it carries one.
func ClientFrom(ctx context.Context) (Client, bool) {
	c, ok := ctx.Value(clientKey{}).(Client)
	return c, ok
}

// UserSessionIDs returns the public ids ([SessionID]) of the user's
// unexpired database sessions, whatever the session strategy (token
// families are database sessions with JWT sessions too): one
// listSessionsByUserId. An adapter without it gives an error matching
// [core.ErrMissingAdapterMethod].
func (e Edge) UserSessionIDs(ctx context.Context, userID string) ([]string, error) {
	list, err := call(e.a, "token introspection", func(l core.SessionsByUserLister) ([]core.Session, error) {
		return l.ListSessionsByUserID(ctx, userID)
	})
	if err != nil {
		return nil, err
	}
	now := e.a.now()
	ids := make([]string, 0, len(list))
	for _, s := range list {
		if !s.Expired(now) {
			ids = append(ids, SessionID(s.SessionToken))
		}
	}
	return ids, nil
}
