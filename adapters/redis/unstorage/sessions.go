package unstorage

import (
	"context"
	"fmt"
	"time"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateSession implements [core.SessionCreator]: the session key expires
// at the session's expiry. Its metadata are fields of the document.
func (a *Adapter) CreateSession(ctx context.Context, s core.Session) (*core.Session, error) {
	const m = core.MethodCreateSession
	doc, err := checkedDoc(&s, encodeUSession, checkKey(m, "sessionToken", uSession, uSession+s.SessionToken), checkISOTime(m, "expires", &s.Expires),
		checkISOTime(m, "createdAt", &s.CreatedAt), checkISOTime(m, "updatedAt", &s.UpdatedAt))
	if err != nil {
		return nil, err
	}
	logical := uSession + s.SessionToken
	key := a.k.redis(logical)
	res, err := a.attach(ctx, s.UserID, key, a.k.sessionByUser(s.UserID), a.k.ownSessions(s.UserID), doc, logical, shared.ExpiryMillis(s.Expires))
	if err == nil {
		err = replyErr(res, s.UserID, "session token")
	}
	if err != nil {
		return nil, err
	}
	if s.Expired(a.now()) {
		// Redis dropped the key at once (PXAT in the past): drop its
		// index entries too, so that nothing points at it.
		if err := a.s.unindexSession.Run(context.WithoutCancel(ctx), a.c, []string{key, a.k.ownSessions(s.UserID), a.k.sessionByUser(s.UserID)}, key, logical).Err(); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

func (a *Adapter) readSession(ctx context.Context, token string) (string, *core.Session, error) {
	return readDoc(ctx, a, a.k.session(token), func(raw string) (*core.Session, error) { return decodeUSession(raw, token) })
}

// detachSession removes a session and its index entries if it is still
// stored as raw; it reports whether it did.
func (a *Adapter) detachSession(ctx context.Context, raw string, s *core.Session) (bool, error) {
	logical := uSession + s.SessionToken
	key := a.k.redis(logical)
	res, err := a.s.detach.Run(ctx, a.c, []string{key, a.k.ownSessions(s.UserID), a.k.sessionByUser(s.UserID)}, raw, key, logical).Text()
	return res == "ok", err
}

// GetSessionAndUser implements [core.SessionAndUserGetter]. A session
// found expired before Redis evicted it is removed with its index entries,
// unless it changed meanwhile.
func (a *Adapter) GetSessionAndUser(ctx context.Context, token string) (*core.SessionAndUser, error) {
	raw, s, err := a.readSession(ctx, token)
	if err != nil || s == nil {
		return nil, err
	}
	if s.Expired(a.now()) {
		_, err := a.detachSession(ctx, raw, s)
		return nil, err
	}
	_, usr, err := a.readUser(ctx, s.UserID)
	if err != nil || usr == nil {
		return nil, err
	}
	return &core.SessionAndUser{Session: *s, User: *usr}, nil
}

// UpdateSession implements [core.SessionUpdater] as a compare-and-set of
// the session document; moving it to another user moves its index
// entries in the same script.
func (a *Adapter) UpdateSession(ctx context.Context, up core.SessionUpdate) (*core.Session, error) {
	r, err := a.updateSession(ctx, up, time.Time{}, false)
	return r.s, err
}

// ExtendSession implements [core.SessionExtender]: the compare-and-set of
// UpdateSession, whose round writes only while the stored expiry is not
// after from, and otherwise returns the stored session. The write sets
// the document's updatedAt to seen.
func (a *Adapter) ExtendSession(ctx context.Context, token string, from, expires, seen time.Time) (*core.Session, bool, error) {
	r, err := a.updateSession(ctx, core.SessionUpdate{SessionToken: token, Expires: core.Set(expires), UpdatedAt: core.Set(seen)}, from, true)
	return r.s, r.wrote, err
}

// updated is the outcome of updateSession: the session as stored, and
// whether the call wrote it.
type updated struct {
	s     *core.Session
	wrote bool
}

// updateSession is UpdateSession; with cond, a round that finds the
// stored expiry after from writes nothing (ExtendSession).
func (a *Adapter) updateSession(ctx context.Context, up core.SessionUpdate, from time.Time, cond bool) (updated, error) {
	m := core.MethodUpdateSession
	if cond {
		m = core.MethodExtendSession
	}
	logical := uSession + up.SessionToken
	key := a.k.redis(logical)
	return shared.CAS(ctx, func() (updated, bool, error) {
		raw, cur, err := a.readSession(ctx, up.SessionToken)
		if err != nil || cur == nil || cur.Expired(a.now()) {
			return updated{}, true, err
		}
		if cond && cur.Expires.After(from) {
			return updated{cur, false}, true, nil
		}
		next := up.Apply(*cur)
		newDoc, err := checkedDoc(&next, encodeUSession, checkISOTime(m, "expires", &next.Expires), checkISOTime(m, "updatedAt", &next.UpdatedAt))
		if err != nil {
			return updated{}, false, err
		}
		s, err := mergeDoc(raw, newDoc, sessionMetaFields...)
		if err != nil {
			return updated{}, false, err
		}
		move := "0"
		if next.UserID != cur.UserID {
			move = "1"
		}
		res, err := a.s.updateSession.Run(ctx, a.c, []string{key, a.k.ownSessions(cur.UserID), a.k.ownSessions(next.UserID),
			a.k.user(next.UserID), a.k.sessionByUser(next.UserID), a.k.sessionByUser(cur.UserID)},
			raw, s, shared.ExpiryMillis(next.Expires), next.UserID, key, logical, move).Text()
		if err != nil || res == "retry" {
			return updated{}, false, err
		}
		if res == "notfound" {
			return updated{}, false, fmt.Errorf("user %q: %w", next.UserID, core.ErrNotFound)
		}
		return updated{&next, true}, true, nil
	})
}

// DeleteSession implements [core.SessionDeleter]. It returns the deleted
// session, or nil, nil when there was none or it had expired.
func (a *Adapter) DeleteSession(ctx context.Context, token string) (*core.Session, error) {
	return shared.CAS(ctx, func() (*core.Session, bool, error) {
		raw, s, err := a.readSession(ctx, token)
		if err != nil || s == nil {
			return nil, true, err
		}
		ok, err := a.detachSession(ctx, raw, s)
		if err != nil || !ok {
			return nil, false, err
		}
		if s.Expired(a.now()) {
			return nil, true, nil
		}
		return s, true, nil
	})
}
