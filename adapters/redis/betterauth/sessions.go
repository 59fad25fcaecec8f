package betterauth

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateSession implements [core.SessionCreator] as Better Auth's
// createSession with secondaryStorage does: the value {session, user} at
// the token's key, expiring with the session, and the session's entry in
// active-sessions-<userId>, in one script. The user must exist in the
// primary adapter; its copy goes into the value. A session already
// expired is returned but not stored, as Better Auth stores none.
func (a *Adapter) CreateSession(ctx context.Context, s core.Session) (*core.Session, error) {
	const m = core.MethodCreateSession
	if err := checkSession(m, &s); err != nil {
		return nil, err
	}
	u, err := a.primary.GetUser(ctx, s.UserID)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, fmt.Errorf("user %q: %w", s.UserID, core.ErrNotFound)
	}
	user, err := userCopy(*u, a.now())
	if err != nil {
		return nil, err
	}
	doc, err := newSessionDoc(s, user)
	if err != nil {
		return nil, err
	}
	res, err := a.s.createSession.Run(ctx, a.c, []string{a.k.session(s.SessionToken), a.k.list(s.UserID)},
		doc, shared.ExpiryMillis(s.Expires), s.SessionToken, a.now().UnixMilli()).Text()
	if err != nil {
		return nil, err
	}
	if res == "exists" {
		return nil, fmt.Errorf("session token: %w", core.ErrAlreadyExists)
	}
	if err := a.recheckUser(ctx, s.UserID, func(ctx context.Context) error {
		_, err := a.detach(ctx, doc, &s)
		return err
	}); err != nil {
		return nil, err
	}
	return &s, nil
}

// recheckUser is the second half of a session write for a user checked
// in the primary before it: the primary and Redis are separate stores, so
// a deleteUser may have run between the check and the write, its cleanup
// of Redis before the write. If the user is gone now, undo takes the write
// back (unless it changed since) and the call fails with ErrNotFound, so
// that no session outlives its user. undo runs even when ctx has ended.
func (a *Adapter) recheckUser(ctx context.Context, userID string, undo func(context.Context) error) error {
	u, err := a.primary.GetUser(ctx, userID)
	if err != nil {
		return err
	}
	if u != nil {
		return nil
	}
	if err := undo(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	return fmt.Errorf("user %q was deleted while its session was written: %w", userID, core.ErrNotFound)
}

// readSession returns the value stored at the token's key and the
// session it holds, or "", nil when there is none.
func (a *Adapter) readSession(ctx context.Context, token string) (string, *core.Session, error) {
	raw, ok, err := shared.Get(ctx, a.c, a.k.session(token))
	if err != nil || !ok {
		return "", nil, err
	}
	s, err := decodeSession(raw, token)
	return raw, s, err
}

// detach deletes a session stored as raw and its list entry; it reports
// whether the value was still raw.
func (a *Adapter) detach(ctx context.Context, raw string, s *core.Session) (bool, error) {
	res, err := a.s.detachSession.Run(ctx, a.c, []string{a.k.session(s.SessionToken), a.k.list(s.UserID)},
		raw, s.SessionToken, a.now().UnixMilli()).Text()
	return res == "ok", err
}

// revokedBefore returns the time in the user's revoked-sessions-before
// key (Unix milliseconds), or 0.
func (a *Adapter) revokedBefore(ctx context.Context, userID string) (int64, error) {
	v, ok, err := shared.Get(ctx, a.c, a.k.revoked(userID))
	if err != nil || !ok {
		return 0, err
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, nil // Better Auth's Number() reads NaN, which revokes nothing
	}
	return int64(f), nil
}

// revoked reports whether s was ended by a revocation time: created
// before it (Better Auth's isRevokedSession; a session without createdAt
// never is).
func revoked(s *core.Session, before int64) bool {
	return !s.CreatedAt.IsZero() && s.CreatedAt.UnixMilli() < before
}

// GetSessionAndUser implements [core.SessionAndUserGetter]: one GET of
// the token's key, the revocation time of its user, and the user from the
// primary adapter. The user is read from the primary rather than taken
// from the value's copy, so that it is exact (authport's times and
// application fields, which Better Auth's copy holds only as of its last
// refresh) and never a deleted user's. A session found expired is deleted
// with its list entry, unless it changed meanwhile; one revoked by Better
// Auth (created before revoked-sessions-before-<userId>) is nil.
func (a *Adapter) GetSessionAndUser(ctx context.Context, token string) (*core.SessionAndUser, error) {
	if token == "" || checkToken(core.MethodGetSessionAndUser, token) != nil {
		return nil, nil
	}
	raw, s, err := a.readSession(ctx, token)
	if err != nil || s == nil {
		return nil, err
	}
	if s.Expired(a.now()) {
		_, err := a.detach(ctx, raw, s)
		return nil, err
	}
	before, err := a.revokedBefore(ctx, s.UserID)
	if err != nil || revoked(s, before) {
		return nil, err
	}
	u, err := a.primary.GetUser(ctx, s.UserID)
	if err != nil || u == nil {
		return nil, err
	}
	return &core.SessionAndUser{Session: *s, User: *u}, nil
}

// UpdateSession implements [core.SessionUpdater] as a compare-and-set of
// the session value (fields authport does not know kept); a move to
// another user moves the list entry and replaces the user copy in the
// same script.
func (a *Adapter) UpdateSession(ctx context.Context, up core.SessionUpdate) (*core.Session, error) {
	r, err := a.updateSession(ctx, up, time.Time{}, false)
	return r.s, err
}

// ExtendSession implements [core.SessionExtender]: the compare-and-set of
// UpdateSession, which writes only while the stored expiry is not after
// from, and sets updatedAt to seen, as Better Auth's refresh does.
func (a *Adapter) ExtendSession(ctx context.Context, token string, from, expires, seen time.Time) (*core.Session, bool, error) {
	r, err := a.updateSession(ctx, core.SessionUpdate{SessionToken: token, Expires: core.Set(expires), UpdatedAt: core.Set(seen)}, from, true)
	return r.s, r.wrote, err
}

type updated struct {
	s     *core.Session
	wrote bool
}

func (a *Adapter) updateSession(ctx context.Context, up core.SessionUpdate, from time.Time, cond bool) (updated, error) {
	m := core.MethodUpdateSession
	if cond {
		m = core.MethodExtendSession
	}
	if up.SessionToken == "" {
		return updated{}, shared.Invalid(m, "sessionToken", "is empty")
	}
	if checkToken(m, up.SessionToken) != nil {
		return updated{}, nil // no such key can hold a session
	}
	return shared.CAS(ctx, func() (updated, bool, error) {
		raw, cur, err := a.readSession(ctx, up.SessionToken)
		if err != nil || cur == nil || cur.Expired(a.now()) {
			return updated{}, true, err
		}
		if cond && cur.Expires.After(from) {
			return updated{cur, false}, true, nil
		}
		next := up.Apply(*cur)
		if err := checkSession(m, &next); err != nil {
			return updated{}, false, err
		}
		var user json.RawMessage
		if next.UserID != cur.UserID {
			u, err := a.primary.GetUser(ctx, next.UserID)
			if err != nil {
				return updated{}, false, err
			}
			if u == nil {
				return updated{}, false, fmt.Errorf("user %q: %w", next.UserID, core.ErrNotFound)
			}
			if user, err = userCopy(*u, a.now()); err != nil {
				return updated{}, false, err
			}
		}
		doc, err := mergeSessionDoc(raw, next, user)
		if err != nil {
			return updated{}, false, err
		}
		res, err := a.s.replaceSession.Run(ctx, a.c, []string{a.k.session(next.SessionToken), a.k.list(cur.UserID), a.k.list(next.UserID)},
			raw, doc, shared.ExpiryMillis(next.Expires), next.SessionToken, a.now().UnixMilli()).Text()
		if err != nil || res == "retry" {
			return updated{}, false, err
		}
		if next.UserID != cur.UserID {
			// Moved to a user checked above: put it back if that user is
			// gone now (see recheckUser).
			err := a.recheckUser(ctx, next.UserID, func(ctx context.Context) error {
				return a.s.replaceSession.Run(ctx, a.c, []string{a.k.session(next.SessionToken), a.k.list(next.UserID), a.k.list(cur.UserID)},
					doc, raw, shared.ExpiryMillis(cur.Expires), cur.SessionToken, a.now().UnixMilli()).Err()
			})
			if err != nil {
				return updated{}, false, err
			}
		}
		return updated{&next, true}, true, nil
	})
}

// DeleteSession implements [core.SessionDeleter] as Better Auth's
// deleteSession: the value and its list entry, in one script. It returns
// the deleted session, or nil, nil when there was none or it had expired.
func (a *Adapter) DeleteSession(ctx context.Context, token string) (*core.Session, error) {
	if token == "" || checkToken(core.MethodDeleteSession, token) != nil {
		return nil, nil
	}
	return shared.CAS(ctx, func() (*core.Session, bool, error) {
		raw, s, err := a.readSession(ctx, token)
		if err != nil || s == nil {
			return nil, true, err
		}
		ok, err := a.detach(ctx, raw, s)
		if err != nil || !ok {
			return nil, false, err
		}
		if s.Expired(a.now()) {
			return nil, true, nil
		}
		return s, true, nil
	})
}

// listEntry is an entry of active-sessions-<userId>.
type listEntry struct {
	Token     string  `json:"token"`
	ExpiresAt float64 `json:"expiresAt"`
}

// readList returns the user's list as stored (shared.Enc) and its
// entries; a list that does not decode reads as empty, as Better Auth's
// safeJSONParse makes it.
func (a *Adapter) readList(ctx context.Context, userID string) (string, []listEntry, error) {
	raw, ok, err := shared.Get(ctx, a.c, a.k.list(userID))
	if err != nil {
		return "", nil, err
	}
	var l []listEntry
	if ok {
		_ = json.Unmarshal([]byte(raw), &l)
	}
	return shared.Enc(raw, ok), l, nil
}

// ListSessionsByUserID implements [core.SessionsByUserLister] as Better
// Auth's listSessions: the list, then the values it names (one MGET),
// without the expired, revoked and missing ones. The entries of those it
// finds expired or gone it prunes from the list.
func (a *Adapter) ListSessionsByUserID(ctx context.Context, userID string) ([]core.Session, error) {
	return shared.CAS(ctx, func() ([]core.Session, bool, error) {
		enc, l, err := a.readList(ctx, userID)
		if err != nil {
			return nil, false, err
		}
		out := []core.Session{}
		if len(l) == 0 {
			return out, true, nil
		}
		tokens := make([]string, 0, len(l))
		ks := make([]string, 0, len(l))
		for _, e := range l {
			if !slices.Contains(tokens, e.Token) && checkToken(core.MethodListSessionsByUserID, e.Token) == nil {
				tokens = append(tokens, e.Token)
				ks = append(ks, a.k.session(e.Token))
			}
		}
		vals, err := a.c.MGet(ctx, ks...).Result()
		if err != nil {
			return nil, false, err
		}
		before, err := a.revokedBefore(ctx, userID)
		if err != nil {
			return nil, false, err
		}
		now := a.now()
		var drop []any
		for i, v := range vals {
			raw, ok := v.(string)
			if !ok {
				drop = append(drop, tokens[i])
				continue
			}
			s, err := decodeSession(raw, tokens[i])
			if err != nil {
				return nil, false, err
			}
			switch {
			case s.UserID != userID || s.Expired(now):
				drop = append(drop, tokens[i])
			case !revoked(s, before):
				out = append(out, *s)
			}
		}
		slices.SortFunc(out, core.CompareSessions)
		if len(drop) == 0 && len(tokens) == len(l) {
			return out, true, nil
		}
		args := append([]any{enc, now.UnixMilli()}, drop...)
		res, err := a.s.pruneList.Run(ctx, a.c, []string{a.k.list(userID)}, args...).Text()
		if err != nil {
			return nil, false, err
		}
		return out, res == "ok", nil
	})
}

// DeleteSessionsByUserID implements [core.SessionsByUserDeleter]: the
// sessions the user's list names, deleted (but except) in one script that
// first checks the list is as read. Unlike Better Auth's revokeSessions
// it writes no revocation time, which would also end the session kept and
// any created by the caller's clock before it; sessions Better Auth
// created for the user without a list entry (a lost race of its own
// writes) are left.
func (a *Adapter) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	if userID == "" {
		return 0, shared.Invalid(core.MethodDeleteSessionsByUserID, "userId", "is empty")
	}
	return a.deleteSessions(ctx, userID, except, 0)
}

// deleteSessions is DeleteSessionsByUserID; revokeAt > 0 also writes the
// user's revocation time (deleteUser).
func (a *Adapter) deleteSessions(ctx context.Context, userID, except string, revokeAt int64) (int, error) {
	return shared.CAS(ctx, func() (int, bool, error) {
		enc, l, err := a.readList(ctx, userID)
		if err != nil {
			return 0, false, err
		}
		now := a.now()
		ks := []string{a.k.list(userID), a.k.revoked(userID)}
		revoke := "0"
		if revokeAt > 0 {
			revoke = "1"
		}
		args := []any{enc, except, now.UnixMilli(), userID, revoke, revokeAt, a.revoked.Milliseconds()}
		seen := map[string]bool{}
		for _, e := range l {
			if seen[e.Token] || checkToken(core.MethodDeleteSessionsByUserID, e.Token) != nil {
				continue
			}
			seen[e.Token] = true
			live := "0"
			if int64(e.ExpiresAt) > now.UnixMilli() {
				live = "1"
			}
			ks = append(ks, a.k.session(e.Token))
			args = append(args, e.Token, live)
		}
		n, err := a.s.deleteSessions.Run(ctx, a.c, ks, args...).Int()
		if err != nil {
			return 0, false, err
		}
		return n, n >= 0, nil
	})
}
