package auth

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/authport/authport/core"
)

// A token family (the refresh tokens of one native client's sign-in, see
// module github.com/authport/authport/tokens) is a database session,
// created by [Auth.CreateSession] like any other: the session inventory
// lists it, and sign-out, revocation and deleteUser end it. Its token
// never leaves the server. The session's expiry is the family's
// generation counter: rotating a refresh token is one compare-and-set of
// it ([core.SessionExtender]), atomic across instances on every adapter
// that keeps the contract, so of any number of concurrent refreshes of one
// token exactly one rotates. The expiry of generation n+1 is MaxAge from
// now, truncated to the second, plus (n+1 mod 1000) milliseconds (a second
// later if that is not after the previous one): its milliseconds carry the
// generation, its seconds the rotation time. A rotation is
// getSessionAndUser and extendSession: two round trips.
//
// A token whose expiry is older than the stored one was rotated already.
// Presented again by its client between RetryAfter and RetryWindow after
// a rotation to the next generation, for the first time (a single-use
// record, [Edge.UseOnce]), it is a retry whose reply was lost, and gets
// the same successor. Anything else is reuse (RFC 9700 §4.14.2: a refresh
// token used twice has leaked): the family's session is deleted, which
// ends every token of the family.

// FamilyToken is what a refresh token of a token family stands for; the
// tokens module seals it, so that a client never sees the session token.
type FamilyToken struct {
	// Session is the family's database session token.
	Session string
	// Generation counts the rotations before this token.
	Generation uint64
	// Expires is the session's expiry when this token was issued.
	Expires time.Time
	// ClientID is the client the family was issued to.
	ClientID string
}

// FamilyPolicy bounds the lost-reply retry of [Edge.RotateFamily].
type FamilyPolicy struct {
	// RetryAfter and RetryWindow: a rotated token presented again at
	// least RetryAfter (at least a second: rotation times are known to
	// the second) and at most RetryWindow after its rotation is a retry.
	// A RetryWindow of zero turns retries off.
	RetryAfter, RetryWindow time.Duration
}

// FamilyOutcome is what [Edge.RotateFamily] did.
type FamilyOutcome int

const (
	// FamilyRotated: the token was current and is rotated; the successor
	// is the next generation.
	FamilyRotated FamilyOutcome = iota + 1
	// FamilyRetried: the token was rotated moments ago and this is the
	// client's first retry: the successor is the one already made.
	FamilyRetried
	// FamilyEnded: the family's session is gone or expired (signed out,
	// revoked, ended by reuse, unused for MaxAge); nothing changed.
	FamilyEnded
	// FamilyReused: the token was rotated before and presented again:
	// the family is ended now.
	FamilyReused
	// FamilyRefused: the token does not fit its family (another client's,
	// or an expiry the family never had); nothing changed.
	FamilyRefused
)

// RefreshTokenReusedEvent reports a token family ended because a refresh
// token was presented again after it had been rotated. It holds public
// ids, never tokens.
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

// RotateFamily rotates the refresh token t presented by the client
// clientID, and returns what it did, the successor (with FamilyRotated
// and FamilyRetried) and the family's user (unless FamilyEnded). An
// error is a store failure; a refusal is an outcome. It needs
// getSessionAndUser, extendSession, deleteSession and
// createVerificationToken.
func (e Edge) RotateFamily(ctx context.Context, t FamilyToken, clientID string, p FamilyPolicy) (FamilyOutcome, FamilyToken, *core.User, error) {
	a := e.a
	now := a.now()
	su, err := e.familySession(ctx, t.Session)
	if err != nil {
		return 0, FamilyToken{}, nil, err
	}
	if su == nil || su.Session.Expired(now) {
		return FamilyEnded, FamilyToken{}, nil, nil
	}
	user := &su.User
	stored := core.NormalizeTime(su.Session.Expires)
	if stored.Equal(t.Expires) {
		if t.ClientID != clientID {
			return FamilyRefused, FamilyToken{}, user, nil
		}
		next := nextFamilyExpiry(now, a.maxAge, stored, t.Generation+1)
		r, err := call(a, "token refresh", func(x core.SessionExtender) (extendResult, error) {
			s, wrote, err := x.ExtendSession(ctx, t.Session, stored, next, now)
			return extendResult{s, wrote}, err
		})
		switch {
		case err != nil:
			return 0, FamilyToken{}, nil, err
		case r.s == nil:
			return FamilyEnded, FamilyToken{}, nil, nil
		case r.wrote:
			succ := t
			succ.Generation, succ.Expires = t.Generation+1, next
			return FamilyRotated, succ, user, nil
		}
		stored = core.NormalizeTime(r.s.Expires) // another refresh of t rotated it first
	}
	if !stored.After(t.Expires) {
		return FamilyRefused, FamilyToken{}, user, nil // not a state authport makes
	}
	// Rotated already: the lost reply's retry, once, or reuse.
	next := t.Generation + 1
	rotatedAt := stored.Truncate(time.Second).Add(-a.maxAge)
	elapsed := now.Sub(rotatedAt)
	if p.RetryWindow > 0 && clientID == t.ClientID && uint64(stored.Nanosecond()/int(time.Millisecond)) == next%1000 &&
		elapsed >= max(p.RetryAfter, time.Second) && elapsed <= p.RetryWindow {
		err := e.UseOnce(ctx, "refresh-retry", SessionID(t.Session)+":"+strconv.FormatUint(t.Generation, 10), rotatedAt.Add(p.RetryWindow+time.Minute))
		switch {
		case err == nil:
			succ := t
			succ.Generation, succ.Expires = next, stored
			return FamilyRetried, succ, user, nil
		case !errors.Is(err, core.ErrAlreadyExists):
			return 0, FamilyToken{}, nil, err
		}
	}
	if _, err := a.SignOut(ctx, t.Session); err != nil {
		return 0, FamilyToken{}, nil, err
	}
	ev := RefreshTokenReusedEvent{UserID: user.ID, SessionID: SessionID(t.Session), ClientID: t.ClientID, Generation: t.Generation}
	a.log.WarnContext(ctx, "authport: refresh token reused: the token family is ended",
		"user_id", ev.UserID, "session_id", ev.SessionID, "client_id", ev.ClientID, "generation", ev.Generation)
	emit(a, ctx, "refreshTokenReused", a.events.RefreshTokenReused, ev)
	return FamilyReused, FamilyToken{}, user, nil
}

// extendResult is what [core.SessionExtender.ExtendSession] returns.
type extendResult struct {
	s     *core.Session
	wrote bool
}

// FamilyActive reports whether t is its family's current token (the
// family alive, t not rotated), with the family's user and the session's
// expiry: what introspection says of a refresh token. One
// getSessionAndUser.
func (e Edge) FamilyActive(ctx context.Context, t FamilyToken) (bool, *core.User, time.Time, error) {
	su, err := e.familySession(ctx, t.Session)
	if err != nil || su == nil || su.Session.Expired(e.a.now()) || !core.NormalizeTime(su.Session.Expires).Equal(t.Expires) {
		return false, nil, time.Time{}, err
	}
	return true, &su.User, su.Session.Expires, nil
}

// familySession reads the family's session as stored: no extension, no
// deletion when expired.
func (e Edge) familySession(ctx context.Context, token string) (*core.SessionAndUser, error) {
	if token == "" {
		return nil, nil
	}
	return call(e.a, "token refresh", func(g core.SessionAndUserGetter) (*core.SessionAndUser, error) {
		return g.GetSessionAndUser(ctx, token)
	})
}

// nextFamilyExpiry is the expiry of generation gen: MaxAge from now
// truncated to the second, plus gen mod 1000 milliseconds, moved on by
// whole seconds until it is after prev (a clock behind the one that wrote
// prev).
func nextFamilyExpiry(now time.Time, maxAge time.Duration, prev time.Time, gen uint64) time.Time {
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
	list, err := e.a.liveSessions(ctx, "token introspection", userID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list))
	for _, s := range list {
		ids = append(ids, SessionID(s.SessionToken))
	}
	return ids, nil
}
