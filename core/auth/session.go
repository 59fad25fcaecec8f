package auth

import (
	"context"

	"github.com/authport/authport/core"
)

// sessionTokenBytes is the size of a session token: 256 random bits.
const sessionTokenBytes = 32

// CreateSession starts a database session for the user, expiring MaxAge
// from now, with a fresh 256-bit token from crypto/rand. It is the one
// function that creates sessions: every sign-in ([Auth.SignInWithOAuth],
// [Auth.VerifyEmailSignIn], [Auth.SignInWithPasskey], [Auth.RegisterPasskey])
// calls it. Writing the cookie is the HTTP layer's job.
func (a *Auth) CreateSession(ctx context.Context, userID string) (*core.Session, error) {
	token, err := randomHex(sessionTokenBytes)
	if err != nil {
		return nil, err
	}
	s := core.Session{SessionToken: token, UserID: userID, Expires: a.now().Add(a.maxAge)}
	return call(a, "database sessions", func(c core.SessionCreator) (*core.Session, error) {
		return c.CreateSession(ctx, s)
	})
}

// Session returns the session with the token and its user, or nil when
// there is none (SPEC §3):
//
//   - an unknown token gives nil after one read (getSessionAndUser) and no
//     write, so junk cookies cannot turn reads into writes;
//   - an expired session the adapter returns (its clock may lag the
//     library's) is deleted, to clean up, and gives nil; one the adapter
//     hides is the adapter's to remove (every built-in adapter deletes
//     it as it reads it, and PurgeExpired or a TTL the ones nobody reads);
//   - otherwise the session is extended to MaxAge from now, at most once
//     per UpdateAge (every access when UpdateAge is zero), and returned
//     with its new expiry; extended reports that it was (the caller then
//     gives the cookie the new expiry). Concurrent requests of this
//     process that find the session due share one extension write.
func (a *Auth) Session(ctx context.Context, sessionToken string) (su *core.SessionAndUser, extended bool, err error) {
	su, err = a.lookupSession(ctx, sessionToken, &extended)
	return su, extended, err
}

func (a *Auth) lookupSession(ctx context.Context, sessionToken string, extended *bool) (*core.SessionAndUser, error) {
	if sessionToken == "" {
		return nil, nil
	}
	su, err := call(a, "session lookup", func(g core.SessionAndUserGetter) (*core.SessionAndUser, error) {
		return g.GetSessionAndUser(ctx, sessionToken)
	})
	if err != nil || su == nil {
		// No deleteSession for a token the adapter does not know (issue
		// 23, item 3): Auth.js does not delete either, and a write per
		// junk cookie is a cheap denial of service on stores that sync
		// every commit.
		return nil, err
	}
	now := a.now()
	if su.Session.Expired(now) {
		if _, err := a.SignOut(ctx, sessionToken); err != nil {
			return nil, err
		}
		return nil, nil
	}
	// The session was last extended at Expires-MaxAge; it is due for
	// another extension UpdateAge after that.
	if due := su.Session.Expires.Add(-a.maxAge).Add(a.updateAge); !now.Before(due) {
		updated, err := a.extendSession(ctx, su.Session, now)
		if err != nil {
			return nil, err
		}
		if updated == nil { // deleted in the meantime
			return nil, nil
		}
		su.Session = *updated
		*extended = true
	}
	return su, nil
}

// SignOut deletes the session and returns it, or nil when there was none.
func (a *Auth) SignOut(ctx context.Context, sessionToken string) (*core.Session, error) {
	return call(a, "sign-out", func(d core.SessionDeleter) (*core.Session, error) {
		return d.DeleteSession(ctx, sessionToken)
	})
}
