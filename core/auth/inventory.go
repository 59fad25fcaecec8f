package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/authport/authport/core"
)

// Client is what a sign-in records about the client it came from, kept
// with the database session it creates ([core.Session.IPAddress],
// UserAgent) for lists of a user's sessions. The HTTP layer puts it in the
// sign-in's context with [WithClient].
type Client struct {
	// IPAddress is the client's address, as the HTTP layer determined it
	// (behind proxies, from the header its trusted proxies set).
	IPAddress string
	// UserAgent is the request's User-Agent header; it is kept cut to
	// [core.MaxUserAgent] bytes, as valid UTF-8 without control
	// characters.
	UserAgent string
	// TrustedDevice is the value of the browser's trusted-device cookie
	// ([SignIn.TrustedDevice]), or "": with a valid one, a sign-in skips
	// the second factor.
	TrustedDevice string
}

type clientKey struct{}

// WithClient returns ctx carrying c, which [Auth.CreateSession] records
// with the session it creates.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// clientFrom returns the client ctx carries, cleaned to what a session
// keeps.
func clientFrom(ctx context.Context) Client {
	c, _ := ctx.Value(clientKey{}).(Client)
	c.IPAddress = printable(c.IPAddress, 64)
	c.UserAgent = printable(c.UserAgent, core.MaxUserAgent)
	return c
}

// printable returns s as valid UTF-8 without control characters (each
// replaced by a space), cut to at most n bytes on a rune boundary.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return strings.TrimSpace(s)
}

// SessionID returns the public id of the database session with the token:
// what lists of sessions show and what [Sessions.Revoke] takes, so that no
// page or API ever shows a session's token (a bearer credential). It is
// the first 128 bits of SHA-256 of the token, base64url-encoded; it cannot
// be turned back into the token.
func SessionID(token string) string {
	sum := sha256.Sum256([]byte("authport session id\x00" + token))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// SessionInfo is one of a user's sessions as the user sees it.
type SessionInfo struct {
	// ID is the session's public id ([SessionID]).
	ID string `json:"id"`
	// Current reports that this is the session of the request that asked.
	Current bool `json:"current"`
	// CreatedAt is when the user signed in; zero when the adapter keeps no
	// session metadata.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// LastSeenAt is when the session was last extended, to within
	// Session.UpdateAge: the stored UpdatedAt, or where the adapter keeps
	// no metadata, the expiry less MaxAge.
	LastSeenAt time.Time `json:"lastSeenAt"`
	// Expires is when the session ends unless it is used again.
	Expires time.Time `json:"expires"`
	// IPAddress and UserAgent are the client's at sign-in; "" when
	// unknown.
	IPAddress string `json:"ipAddress,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
}

// SessionsRevokedEvent reports sessions a user ended: one ([Sessions.Revoke]),
// all but the current one ([Sessions.RevokeOthers]) or all
// ([Sessions.RevokeAll]). It holds public ids, never tokens.
type SessionsRevokedEvent struct {
	UserID string
	// Scope is "one", "others" or "all".
	Scope string
	// SessionID is the revoked session's public id, with Scope "one".
	SessionID string
	// Count is how many unexpired sessions ended.
	Count int
}

// errNeedsDatabaseSessions refuses the inventory with JWT sessions, which
// are not stored.
var errNeedsDatabaseSessions = fmt.Errorf("%w: listing and revoking sessions needs database sessions (Session.Strategy StrategyDatabase); JWT sessions are not stored", core.ErrInvalidConfig)

// Sessions lists and ends a user's database sessions: "where am I signed
// in?", "sign out that device", "sign out my other devices", "sign out
// everywhere". Get it from [Auth.Sessions]. Every method takes the user
// whose sessions it reads or ends; the HTTP layer passes the signed-in
// user's id, so that no request can reach another user's sessions.
type Sessions struct{ a *Auth }

// Sessions returns the user-facing session inventory. It needs database
// sessions and an adapter with listSessionsByUserId and
// deleteSessionsByUserId ([core.SessionsByUserLister],
// [core.SessionsByUserDeleter]); every built-in adapter has both.
func (a *Auth) Sessions() Sessions { return Sessions{a} }

// check returns why the inventory cannot run, or nil.
func (s Sessions) check() error {
	if s.a.strategy != StrategyDatabase {
		return errNeedsDatabaseSessions
	}
	return nil
}

// List returns the user's sessions, most recently seen first; the one
// whose token is current (the asking request's, or "") is marked Current.
func (s Sessions) List(ctx context.Context, userID, current string) ([]SessionInfo, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	list, err := s.a.liveSessions(ctx, "session list", userID)
	if err != nil {
		return nil, err
	}
	out := make([]SessionInfo, 0, len(list))
	for _, se := range list {
		seen := se.UpdatedAt
		if seen.IsZero() {
			seen = se.Expires.Add(-s.a.maxAge)
		}
		out = append(out, SessionInfo{
			ID: SessionID(se.SessionToken), Current: current != "" && se.SessionToken == current,
			CreatedAt: se.CreatedAt, LastSeenAt: seen, Expires: se.Expires,
			IPAddress: se.IPAddress, UserAgent: se.UserAgent,
		})
	}
	slices.SortStableFunc(out, func(x, y SessionInfo) int {
		if c := y.LastSeenAt.Compare(x.LastSeenAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}

// Revoke ends the user's session with the public id. It reports false, and
// changes nothing, when the user has no such session: an id of another
// user's session is not found.
func (s Sessions) Revoke(ctx context.Context, userID, id string) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	list, err := s.a.liveSessions(ctx, "session revocation", userID)
	if err != nil {
		return false, err
	}
	var token string
	for _, se := range list {
		if subtle.ConstantTimeCompare([]byte(SessionID(se.SessionToken)), []byte(id)) == 1 {
			token = se.SessionToken
		}
	}
	if token == "" {
		return false, nil
	}
	deleted, err := s.a.SignOut(ctx, token)
	if err != nil || deleted == nil {
		return false, err
	}
	if deleted.UserID != userID {
		// Moved to another user between the list and the delete: not
		// this user's any more. Impossible through authport, which never
		// moves sessions; refuse loudly rather than report success.
		return false, errors.New("session revocation: the session moved to another user while it was revoked")
	}
	emit(s.a, ctx, "sessionsRevoked", s.a.events.SessionsRevoked, SessionsRevokedEvent{UserID: userID, Scope: "one", SessionID: id, Count: 1})
	return true, nil
}

// liveSessions returns the user's sessions that have not expired by the
// library's clock (an adapter's may lag it): one listSessionsByUserId.
func (a *Auth) liveSessions(ctx context.Context, neededBy, userID string) ([]core.Session, error) {
	list, err := call(a, neededBy, func(l core.SessionsByUserLister) ([]core.Session, error) {
		return l.ListSessionsByUserID(ctx, userID)
	})
	now := a.now()
	return slices.DeleteFunc(list, func(s core.Session) bool { return s.Expired(now) }), err
}

// RevokeOthers ends every session of the user except the one whose token
// is current, and reports how many ended: "sign out my other devices".
func (s Sessions) RevokeOthers(ctx context.Context, userID, current string) (int, error) {
	if current == "" {
		return 0, fmt.Errorf("%w: RevokeOthers needs the current session's token (RevokeAll ends every session)", core.ErrInvalidInput)
	}
	return s.revoke(ctx, userID, current, "others")
}

// RevokeAll ends every session of the user, the asking one included, and
// reports how many ended: "sign out everywhere", and what a password
// change or an account takeover calls for.
func (s Sessions) RevokeAll(ctx context.Context, userID string) (int, error) {
	return s.revoke(ctx, userID, "", "all")
}

func (s Sessions) revoke(ctx context.Context, userID, except, scope string) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	n, err := call(s.a, "session revocation", func(d core.SessionsByUserDeleter) (int, error) {
		return d.DeleteSessionsByUserID(ctx, userID, except)
	})
	if err != nil {
		return 0, err
	}
	// Trusted devices end with the sessions: a browser that loses its
	// session loses its pass on the second factor too.
	if err := s.a.endDeviceTrust(ctx, userID); err != nil {
		return n, err
	}
	emit(s.a, ctx, "sessionsRevoked", s.a.events.SessionsRevoked, SessionsRevokedEvent{UserID: userID, Scope: scope, Count: n})
	return n, nil
}
