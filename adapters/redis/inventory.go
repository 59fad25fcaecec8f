package redisadapter

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

var (
	_ core.SessionsByUserLister  = (*Adapter)(nil)
	_ core.SessionsByUserDeleter = (*Adapter)(nil)
	_ core.SessionMetadataKeeper = (*Adapter)(nil)
)

// KeepsSessionMetadata implements [core.SessionMetadataKeeper]: a
// session's metadata is kept in the user's session metadata hash
// (<p>user:{<uid>}:sessions:meta), written by the scripts that write the
// sessions set.
func (a *Adapter) KeepsSessionMetadata() bool { return true }

// ListSessionsByUserID implements [core.SessionsByUserLister] with one
// script in the user's slot (one round trip, on a cluster too): it prunes
// the entries (and metadata) of the sessions expired by the adapter's
// clock, evicted or not (ZRANGE … BYSCORE, HDEL, ZREMRANGEBYSCORE, and the
// set's new TTL, only when there are any), then reads the rest (ZRANGE
// WITHSCORES) and the metadata of each (HGET). A session deleted, moved
// away or expired is not in the set, so it is never listed.
func (a *Adapter) ListSessionsByUserID(ctx context.Context, userID string) ([]core.Session, error) {
	v, err := a.s.listSessions.Run(ctx, a.c, []string{a.k.sessions(userID), a.k.sessionMeta(userID)},
		a.k.p, a.mode(), a.now().UnixMilli()).Slice()
	if err != nil && !shared.IsNil(err) {
		return nil, err
	}
	if len(v)%3 != 0 {
		return nil, shared.ErrCorrupt
	}
	out := make([]core.Session, 0, len(v)/3)
	for i := 0; i < len(v); i += 3 {
		m, _ := v[i].(string)
		tok, err := shared.Unescape(m)
		if err != nil {
			return nil, shared.ErrCorrupt
		}
		exp, err := parseScore(v[i+1])
		if err != nil {
			return nil, err
		}
		s := core.Session{SessionToken: tok, UserID: userID, Expires: exp}
		if meta, _ := v[i+2].(string); meta != "" {
			if err := decodeSessionMeta(meta, &s); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, core.CompareSessions)
	return out, nil
}

// DeleteSessionsByUserID implements [core.SessionsByUserDeleter]. The
// user's sessions set is the truth about which sessions the user has;
// the session keys (<p>session:{<token>}) only point into it, and every
// read, update and extension of a session confirms it in the set. So:
//
//   - On a single node, one script removes every entry but except's from
//     the set, with its metadata and its session key: atomic.
//   - On a cluster the session keys live in other slots, and the steps
//     are, in this order: (1) one script in the user's slot removes the
//     entries and metadata at once, and returns the removed tokens; from
//     that instant no read finds those sessions, and no update or
//     extension can write them back, since their scripts write only to a
//     session still in the set, and the TTL they then give the session
//     key (PEXPIREAT) never creates one; (2) one pipeline releases the
//     removed sessions' keys, each only while it still names this user
//     (compare-and-delete). A session created meanwhile is claimed (its
//     key, SET NX) before its entry is added: its entry is either in the
//     set at step 1 (it is deleted whole, its key released at step 2) or
//     added after (it stays whole); until step 2 its token cannot be
//     created again, since its key still exists. The truth goes first and
//     the pointers last, as for deleteUser, so that a crash between the
//     steps leaves only keys pointing at nothing, which expire with their
//     sessions. Step 1 leaves its reply in a receipt key of this call, so
//     that go-redis's retry of the script after a lost reply (the first run
//     removed the entries) still releases their keys; step 2 deletes the
//     receipt. The steps run to their end even when ctx ends
//     (withinDeadline).
//
// It counts the removed sessions that had not expired by the adapter's
// clock.
func (a *Adapter) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	keep := ""
	if except != "" {
		keep = shared.Escape(except)
	}
	uid := shared.Escape(userID)
	keys := []string{a.k.sessions(userID), a.k.sessionMeta(userID)}
	// run runs the script; ackErr is ErrReplicaAck (WithReplicaAck) of a
	// script the master ran, whose reply n and gone still hold.
	run := func(ctx context.Context, keys []string) (n int, gone []string, ackErr, err error) {
		v, err := a.s.deleteSessions.Run(ctx, a.c, keys, a.k.p, a.mode(), uid, keep,
			a.now().UnixMilli(), shared.ReceiptTTL.Milliseconds()).Result()
		if ackErr = shared.ReplicaAckErr(&err); err != nil {
			return 0, nil, nil, err
		}
		reply, _ := v.(string)
		fields := strings.Split(reply, " ")
		if n, err = strconv.Atoi(fields[0]); err != nil || n < 0 {
			return 0, nil, nil, shared.ErrCorrupt
		}
		return n, fields[1:], ackErr, nil
	}
	if !a.cluster {
		n, _, ackErr, err := run(ctx, keys)
		return n, errors.Join(ackErr, err)
	}
	return withinDeadline(ctx, func(ctx context.Context) (int, error) {
		attempt, err := shared.AttemptID()
		if err != nil {
			return 0, err
		}
		receipt := a.k.receipt(a.slots.tag(crc16(uid)%16384), attempt)
		n, gone, ackErr, err := run(ctx, append(keys, receipt))
		if err != nil || len(gone) == 0 {
			return n, errors.Join(ackErr, err)
		}
		// The entries are gone (even when too few replicas acknowledged
		// it in time): release their keys, then report.
		ptrs := make([]string, len(gone))
		for i, m := range gone {
			ptrs[i] = a.k.p + "session:{" + m + "}"
		}
		if err := a.releaseAll(ctx, ptrs, uid, []string{receipt}); err != nil {
			return 0, err
		}
		return n, ackErr
	})
}
