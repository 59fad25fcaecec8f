package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// sessionTokenBytes is the size of a session token: 256 random bits.
const sessionTokenBytes = 32

// CreateSession starts a database session for the user, expiring MaxAge
// from now, with a fresh 256-bit token from crypto/rand. It is the one
// function that creates sessions: every sign-in ([Auth.SignInWithOAuth],
// [Auth.VerifyEmailSignIn], [Auth.SignInWithPasskey], [Auth.RegisterPasskey])
// calls it (through its variant whose token carries the sign-in's
// [Authentication]: the token this one makes carries none, so its
// authentication is unknown). It records the session's metadata: now as its creation and
// last-seen times, and the [Client] ctx carries ([WithClient]). Writing the
// cookie is the HTTP layer's job.
func (a *Auth) CreateSession(ctx context.Context, userID string) (*core.Session, error) {
	token, err := randomHex(sessionTokenBytes)
	if err != nil {
		return nil, err
	}
	return a.storeSession(ctx, userID, token)
}

// storeSession stores a new session with the token for the user.
func (a *Auth) storeSession(ctx context.Context, userID, token string) (*core.Session, error) {
	now, client := a.now(), clientFrom(ctx)
	s := core.Session{SessionToken: token, UserID: userID, Expires: now.Add(a.maxAge),
		CreatedAt: now, UpdatedAt: now, IPAddress: client.IPAddress, UserAgent: client.UserAgent}
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
	// The session was last extended at Expires-MaxAge.
	if a.due(su.Session.Expires.Add(-a.maxAge), now) {
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

// due reports whether a session last issued or extended at issued is due
// for another extension at now: UpdateAge after it (every read when
// UpdateAge is zero). The one UpdateAge rule of both strategies.
func (a *Auth) due(issued, now time.Time) bool {
	return !now.Before(issued.Add(a.updateAge))
}

// SessionRequest is what a request presents to [Edge.ReadSession].
type SessionRequest struct {
	// Token is a database session's token ([StrategyDatabase]).
	Token string
	// Claims are a JWT session's claims, as the caller opened them from
	// the cookie ([StrategyJWT]).
	Claims map[string]any
	// Update is an update of the session (Auth.js's update(data), POST
	// /session): a JWT is re-issued whatever its age, [Callbacks.JWT]
	// running with trigger update and Data.
	Update bool
	Data   any
	// Shape runs [Callbacks.Session] and [Events.Session] on the session
	// read, as GET /session does; SessionState.Body is then what to send.
	Shape bool
	// Issuer encodes re-issued JWT sessions and gives the default session
	// JSON: the HTTP layer's. Required with JWT sessions, and with Shape.
	Issuer SessionIssuer
}

// SessionIssuer is what [Edge.ReadSession] needs of the HTTP layer: the
// session token's codec and the session's default JSON.
type SessionIssuer interface {
	// IssueSession encodes a JWT session's claims into a new token
	// (MaxAge from now), and returns it with the claims it holds (its
	// iat and exp included).
	IssueSession(claims map[string]any) (token string, issued map[string]any, err error)
	// SessionJSON is the default JSON object of the session, which
	// [Callbacks.Session] receives.
	SessionJSON(st SessionState) (map[string]any, error)
}

// SessionState is a session as [Edge.ReadSession] read it.
type SessionState struct {
	// Session and User are the database session (extended when due) and
	// its user; zero and nil with JWT sessions.
	Session core.Session
	User    *core.User
	// Extended reports that the database session was extended by this
	// read: the cookie takes the new expiry.
	Extended bool
	// Claims are a JWT session's claims: as presented, or those of the
	// re-issued token.
	Claims map[string]any
	// Token is the re-issued JWT, or "" when it was not re-issued. It is
	// re-issued when due (UpdateAge after its iat), updated, or shaped by
	// a JWT callback, as Auth.js re-issues it.
	Token string
	// Body is the JSON object of GET /session after [Callbacks.Session]
	// (Shape, with a Session callback or event configured); nil means the
	// default object, which the caller writes itself.
	Body map[string]any
}

// ReadSession reads (and, when due, extends) the session a request
// presents, whichever the strategy, in one call: with database sessions
// [Auth.Session]; with JWT sessions the UpdateAge rule and
// [Callbacks.JWT] (trigger refresh, or update). With Shape it then runs
// [Callbacks.Session] and [Events.Session]. ok is false when the request
// is not signed in, or a JWT callback ended the session (nil claims).
func (e Edge) ReadSession(ctx context.Context, req SessionRequest) (st SessionState, ok bool, err error) {
	a := e.a
	if a.strategy == StrategyDatabase {
		su, extended, err := a.Session(ctx, req.Token)
		if err != nil || su == nil {
			return st, false, err
		}
		st.Session, st.User, st.Extended = su.Session, &su.User, extended
	} else {
		if req.Claims == nil {
			return st, false, nil
		}
		claims, reissue, err := a.refreshClaims(ctx, req)
		if err != nil || claims == nil {
			return st, false, err
		}
		st.Claims = claims
		if reissue {
			if req.Issuer == nil {
				return st, false, errors.New("ReadSession: a JWT session is due and SessionRequest.Issuer is nil")
			}
			if st.Token, st.Claims, err = req.Issuer.IssueSession(claims); err != nil {
				return st, false, fmt.Errorf("re-issuing the JWT session: %w", err)
			}
		}
	}
	if !req.Shape || (a.callbacks.Session == nil && a.events.Session == nil) {
		return st, true, nil
	}
	if req.Issuer == nil {
		return st, false, errors.New("ReadSession: Shape needs SessionRequest.Issuer")
	}
	body, err := req.Issuer.SessionJSON(st)
	if err == nil && a.callbacks.Session != nil {
		body, err = runCallback(a, ctx, "Session", func() (map[string]any, error) {
			return a.callbacks.Session(ctx, SessionParams{Session: body, User: st.User, Token: st.Claims})
		})
	}
	if err != nil {
		return st, false, fmt.Errorf("the Session callback failed: %w", err)
	}
	st.Body = body
	emit(a, ctx, "session", a.events.Session, SessionEvent{Session: body, Token: st.Claims})
	return st, true, nil
}

// refreshClaims applies the UpdateAge rule and [Callbacks.JWT] to a JWT
// session's claims: with a JWT callback it runs (trigger update, or
// refresh) and the token is re-issued every time, as Auth.js does; without
// one the same claims are re-issued when due or updated. nil claims end
// the session.
func (a *Auth) refreshClaims(ctx context.Context, req SessionRequest) (map[string]any, bool, error) {
	claims := make(map[string]any, len(req.Claims))
	for k, v := range req.Claims {
		claims[k] = v
	}
	if a.callbacks.JWT != nil {
		p := JWTParams{Token: claims, Trigger: JWTRefresh}
		if req.Update {
			p.Trigger, p.Update = JWTUpdate, req.Data
		}
		claims, err := runCallback(a, ctx, "JWT", func() (map[string]any, error) { return a.callbacks.JWT(ctx, p) })
		if err != nil {
			return nil, false, fmt.Errorf("the JWT callback failed: %w", err)
		}
		return claims, claims != nil, nil
	}
	iat, _ := req.Claims["iat"].(float64)
	return claims, req.Update || a.due(time.Unix(int64(iat), 0), a.now()), nil
}

// EndSession ends the session a sign-out presents and runs
// [Events.SignOut]: a database session (token) is deleted and reported by
// its public id, without its token; a JWT session's claims are only
// reported, the caller clearing the cookie.
func (e Edge) EndSession(ctx context.Context, token string, claims map[string]any) error {
	a := e.a
	var ev *SignOutEvent
	if a.strategy == StrategyDatabase {
		if token == "" {
			return nil
		}
		deleted, err := a.SignOut(ctx, token)
		if err != nil {
			return err
		}
		if deleted != nil {
			// The token is the cookie's secret: the event names the
			// session by its public id and gets it without the token.
			ended := *deleted
			ended.SessionToken = ""
			ev = &SignOutEvent{SessionID: SessionID(token), Session: &ended}
		}
	} else if claims != nil {
		ev = &SignOutEvent{Token: claims}
	}
	if ev != nil {
		emit(a, ctx, "signOut", a.events.SignOut, *ev)
	}
	return nil
}
