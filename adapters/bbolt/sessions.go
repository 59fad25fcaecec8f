package bboltadapter

import (
	"context"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// putSession writes the session with its user and expiry index entries.
func putSession(b *buckets, s *core.Session) error {
	tok := []byte(s.SessionToken)
	if err := b.sessions.Put(tok, encodeSession(s)); err != nil {
		return err
	}
	if err := b.userSessions.Put(ownerKey(s.UserID, tok), marker); err != nil {
		return err
	}
	return b.sessionExpiry.Put(expiryKey(s.Expires.UnixMilli(), tok), marker)
}

// removeSession deletes the session with its user and expiry index entries.
func removeSession(b *buckets, s *core.Session) error {
	tok := []byte(s.SessionToken)
	if err := b.userSessions.Delete(ownerKey(s.UserID, tok)); err != nil {
		return err
	}
	if err := b.sessionExpiry.Delete(expiryKey(s.Expires.UnixMilli(), tok)); err != nil {
		return err
	}
	return b.sessions.Delete(tok)
}

// deleteSession deletes the session with the token and its expiry index
// entry, leaving the user index entry to the caller (deleteUser, which
// removes them all by prefix).
func deleteSession(b *buckets, token []byte) error {
	v := b.sessions.Get(token)
	if v == nil {
		return nil
	}
	s, err := decodeSession(v)
	if err != nil {
		return err
	}
	if err := b.sessionExpiry.Delete(expiryKey(s.Expires.UnixMilli(), token)); err != nil {
		return err
	}
	return b.sessions.Delete(token)
}

// checkSessionTimes refuses a session with a time the millisecond encoding
// cannot hold (the zero time of unknown metadata it can).
func checkSessionTimes(m core.Method, s *core.Session) error {
	switch {
	case !timeOK(s.Expires):
		return invalidTime(m, "expires")
	case !timeOK(s.CreatedAt):
		return invalidTime(m, "createdAt")
	case !timeOK(s.UpdatedAt):
		return invalidTime(m, "updatedAt")
	}
	return nil
}

func getSession(sessions *bolt.Bucket, token string) (*core.Session, error) {
	return getRecord(sessions, []byte(token), decodeSession)
}

// CreateSession implements createSession. The session's metadata
// (CreatedAt, UpdatedAt, IPAddress, UserAgent) is stored as given, in the
// record's metadata section.
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	const m = core.MethodCreateSession
	s := session.Normalize()
	if err := checkSessionTimes(m, &s); err != nil {
		return nil, err
	}
	err := a.insertOwned(ctx, s.UserID, []byte(s.SessionToken), bucketSessions, "session token already taken",
		func(b *buckets) error { return putSession(b, &s) })
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// GetSessionAndUser implements getSessionAndUser in one read transaction. An
// expired session is not returned; it is then removed with its index
// entries in a write transaction (SPEC §3: removed when accessed), if it is
// still expired there, so that a concurrent extension wins.
func (a *Adapter) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	su, expired, err := a.readSessionAndUser(ctx, sessionToken)
	if err == nil && expired {
		err = a.removeExpiredSessions(ctx, []string{sessionToken})
	}
	if err != nil {
		return nil, storeErr(err)
	}
	return su, nil
}

// readSessionAndUser is GetSessionAndUser's read transaction, which ends
// before an expired session is removed. The hot path of every request: it
// runs without a closure (whose captured results would be allocated),
// looks the token up without copying it, and decodes the user into one
// allocation (decodeSessionAndUser).
func (a *Adapter) readSessionAndUser(ctx context.Context, sessionToken string) (su *core.SessionAndUser, expired bool, err error) {
	tx, err := a.readTx(ctx)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = tx.Rollback() }()
	sessions, users, err := bucket2(tx, a.root, bucketSessions, bucketUsers)
	if err != nil || sessionToken == "" {
		return nil, false, err
	}
	srec := sessions.Get(keyOf(sessionToken))
	if srec == nil {
		return nil, false, nil
	}
	uid, expires, err := decodeSessionRef(srec)
	if err != nil {
		return nil, false, err
	}
	s := core.Session{SessionToken: sessionToken, Expires: expires}
	if s.Expired(a.now()) {
		return nil, true, nil
	}
	urec := users.Get(uid)
	if len(uid) == 0 || urec == nil {
		return nil, false, nil
	}
	su, err = decodeSessionAndUser(s, urec)
	return su, false, err
}

// removeExpiredSessions removes, in one write transaction, each session
// of the tokens that is stored and expired there (one that a concurrent
// extension moved on is kept), with its index entries.
func (a *Adapter) removeExpiredSessions(ctx context.Context, tokens []string) error {
	return a.update(ctx, func(tx *bolt.Tx) error {
		b, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		now := a.now()
		for _, tok := range tokens {
			s, err := getSession(b.sessions, tok)
			if err != nil {
				return err
			}
			if s != nil && s.Expired(now) {
				if err := removeSession(b, s); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// UpdateSession implements updateSession. A changed user or expiry moves the
// session's index entries in the same transaction; UpdatedAt, when set, is
// stored in the record's metadata section, which keeps the rest of the
// metadata.
func (a *Adapter) UpdateSession(ctx context.Context, update core.SessionUpdate) (*core.Session, error) {
	const m = core.MethodUpdateSession
	if update.Expires.Set && !timeOK(core.NormalizeTime(update.Expires.Value)) {
		return nil, invalidTime(m, "expires")
	}
	if update.UpdatedAt.Set && !timeOK(core.NormalizeTime(update.UpdatedAt.Value)) {
		return nil, invalidTime(m, "updatedAt")
	}
	return writeFound(ctx, a, func(b *buckets) (*core.Session, error) { return getSession(b.sessions, update.SessionToken) },
		func(b *buckets, old *core.Session) (*core.Session, error) {
			s := update.Apply(*old)
			if s.UserID != old.UserID && b.users.Get([]byte(s.UserID)) == nil {
				return nil, fmt.Errorf("no user with this id: %w", core.ErrNotFound)
			}
			if s.UserID != old.UserID || !s.Expires.Equal(old.Expires) {
				if err := removeSession(b, old); err != nil {
					return nil, err
				}
				if err := putSession(b, &s); err != nil {
					return nil, err
				}
			} else if err := b.sessions.Put([]byte(s.SessionToken), encodeSession(&s)); err != nil {
				return nil, err
			}
			return &s, nil
		})
}

// ExtendSession implements [core.SessionExtender]: in one write
// transaction, it sets the session's expiry to expires and its UpdatedAt to
// seen if its stored expiry is not after from, moving the expiry index
// entry as UpdateSession does. It returns the session as stored afterwards
// and whether it wrote; nil, false, nil when there is no such session.
func (a *Adapter) ExtendSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*core.Session, bool, error) {
	expires, seen = core.NormalizeTime(expires), core.NormalizeTime(seen)
	if !timeOK(expires) {
		return nil, false, invalidTime(core.MethodExtendSession, "expires")
	}
	if !timeOK(seen) {
		return nil, false, invalidTime(core.MethodExtendSession, "seen")
	}
	r, err := writeFound(ctx, a, func(b *buckets) (*core.Session, error) { return getSession(b.sessions, sessionToken) },
		func(b *buckets, old *core.Session) (extended, error) {
			if old.Expires.After(from) {
				return extended{old, false}, nil
			}
			s := *old
			s.Expires, s.UpdatedAt = expires, seen
			if err := removeSession(b, old); err != nil {
				return extended{}, err
			}
			if err := putSession(b, &s); err != nil {
				return extended{}, err
			}
			return extended{&s, true}, nil
		})
	return r.session, r.wrote, err
}

// extended is what ExtendSession's transaction returns.
type extended struct {
	session *core.Session
	wrote   bool
}

// DeleteSession implements deleteSession and returns the deleted session.
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	return writeFound(ctx, a, func(b *buckets) (*core.Session, error) { return getSession(b.sessions, sessionToken) },
		func(b *buckets, s *core.Session) (*core.Session, error) {
			if err := removeSession(b, s); err != nil {
				return nil, err
			}
			return s, nil
		})
}
