package unstorage

import (
	"context"
	"slices"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

var (
	_ core.SessionsByUserLister  = (*Adapter)(nil)
	_ core.SessionsByUserDeleter = (*Adapter)(nil)
	_ core.SessionMetadataKeeper = (*Adapter)(nil)
)

// KeepsSessionMetadata implements [core.SessionMetadataKeeper]: a
// session's metadata are fields of its document (createdAt, updatedAt,
// ipAddress, userAgent), which @auth/unstorage-adapter keeps through its
// own updates.
func (a *Adapter) KeepsSessionMetadata() bool { return true }

// ListSessionsByUserID implements [core.SessionsByUserLister] with one
// script (one round trip): the sessions authport's own set of the user's
// session keys names, and the one unstorage's by-user-id key names (the
// latest Auth.js wrote). On the way it deletes the sessions it finds
// expired and drops the index entries of sessions that are gone, evicted
// by Redis included. A document that the script could not tell expired (an
// expires not in toISOString's form, written by another program) and that
// has expired by the adapter's clock is left out and removed after.
func (a *Adapter) ListSessionsByUserID(ctx context.Context, userID string) ([]core.Session, error) {
	v, err := a.s.listSessions.Run(ctx, a.c, []string{a.k.ownSessions(userID), a.k.sessionByUser(userID)},
		a.k.base, userID, isoTime(a.now())).Slice()
	if err != nil && !shared.IsNil(err) {
		return nil, err
	}
	if len(v)%2 != 0 {
		return nil, shared.ErrCorrupt
	}
	out := make([]core.Session, 0, len(v)/2)
	for i := 0; i < len(v); i += 2 {
		key, _ := v[i].(string)
		raw, _ := v[i+1].(string)
		s, err := sessionOfDoc(decodeDoc[uSessionDoc](raw, "session"))
		if err != nil {
			return nil, err
		}
		if s == nil || a.k.session(s.SessionToken) != key || s.UserID != userID {
			continue // not the session its key names
		}
		if s.Expired(a.now()) {
			if _, err := a.detachSession(ctx, raw, s); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, core.CompareSessions)
	return out, nil
}

// DeleteSessionsByUserID implements [core.SessionsByUserDeleter] with one
// script, atomic: it deletes every session of the user that
// ListSessionsByUserID would find (expired ones too) but except's, with
// their index entries. An update or extension racing it compares the
// document it read and finds it gone, so it never writes a session back.
// It counts the deleted sessions whose expires was after the adapter's
// clock.
func (a *Adapter) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	keep := ""
	if except != "" {
		keep = a.k.session(except)
	}
	v, err := a.s.deleteSessions.Run(ctx, a.c, []string{a.k.ownSessions(userID), a.k.sessionByUser(userID)},
		a.k.base, userID, keep).StringSlice()
	if err != nil && !shared.IsNil(err) {
		return 0, err
	}
	now, n := a.now(), 0
	for _, e := range v {
		if t, err := parseISOTime(e); err == nil && t.After(now) {
			n++
		}
	}
	return n, nil
}
