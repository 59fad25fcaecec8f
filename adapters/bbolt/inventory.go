package bboltadapter

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
)

// The session inventory: a user's sessions, listed and ended through the
// user → sessions index (user_sessions, keys P(user id, token)), which is
// written and deleted in the same transaction as each session record.

// KeepsSessionMetadata implements [core.SessionMetadataKeeper]: a session
// record keeps CreatedAt, UpdatedAt, IPAddress and UserAgent in its
// metadata section, always.
func (a *Adapter) KeepsSessionMetadata() bool { return true }

// ListSessionsByUserID implements [core.SessionsByUserLister] in one read
// transaction: a Seek to P(userID, "") in user_sessions, Next while the
// prefix holds, and a Get of each session record, which comes with its
// metadata. The index keys of one user differ only in the token, so the
// list comes out ordered by token. An expired session is not listed; when
// it saw one, it then removes each session that is still expired in one
// write transaction (a concurrent extension wins), with its index entries.
// An unknown user gives an empty, non-nil list.
func (a *Adapter) ListSessionsByUserID(ctx context.Context, userID string) ([]core.Session, error) {
	now := a.now()
	var expired []string
	out, err := listOwned(ctx, a, bucketUserSessions, bucketSessions, userID, decodeSession, func(s *core.Session) bool {
		if s.Expired(now) {
			expired = append(expired, s.SessionToken)
			return false
		}
		return true
	})
	if err == nil && len(expired) > 0 {
		err = a.removeExpiredSessions(ctx, expired)
	}
	if err != nil {
		return nil, storeErr(err)
	}
	return out, nil
}

// DeleteSessionsByUserID implements [core.SessionsByUserDeleter] in one
// write transaction: it takes the user's entries of user_sessions (a Seek
// to P(userID, "") and Next while the prefix holds) and deletes each
// session but the one whose token is except, with its index entries, and
// the expired one whose token is except too. It returns how many of the
// deleted sessions had not expired. bbolt runs one write transaction at a
// time, so a createSession, extendSession or updateSession of the user's
// sessions runs wholly before it (and its session is deleted) or wholly
// after it (and finds no session to extend, or creates a whole one). An
// except that is not one of the user's sessions keeps nothing and touches
// nothing else.
func (a *Adapter) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	return write(ctx, a, func(b *buckets) (int, error) {
		now, prefix, n := a.now(), ownerPrefix(userID), 0
		for _, k := range prefixed(b.userSessions, prefix) {
			token := k[len(prefix):]
			v := b.sessions.Get(token)
			if v == nil {
				return 0, fmt.Errorf("%w: index entry in %s for a missing session", ErrCorrupt, bucketUserSessions)
			}
			_, expires, err := decodeSessionRef(v)
			if err != nil {
				return 0, err
			}
			s := core.Session{SessionToken: string(token), UserID: userID, Expires: expires}
			live := !s.Expired(now)
			if live && except != "" && s.SessionToken == except {
				continue
			}
			if err := removeSession(b, &s); err != nil {
				return 0, err
			}
			if live {
				n++
			}
		}
		return n, nil
	})
}
