package redisadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateSession implements [core.SessionCreator]: one script on a single
// node; on a cluster, SET NX of the session key (expiring at the session's
// expiry), then the script in the user's slot. The same script stores the
// session's metadata in the user's session metadata hash.
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	const m = core.MethodCreateSession
	s := session.Normalize()
	if err := errors.Join(shared.CheckTime(m, "expires", &s.Expires),
		checkOptTime(m, "createdAt", &s.CreatedAt), checkOptTime(m, "updatedAt", &s.UpdatedAt)); err != nil {
		return nil, err
	}
	ptr := a.k.session(s.SessionToken)
	ms := s.Expires.UnixMilli()
	args := []any{a.k.p, a.mode(), shared.Escape(s.UserID), shared.Escape(s.SessionToken), ms, encodeSessionMeta(&s)}
	keys := []string{a.k.user(s.UserID), a.k.sessions(s.UserID), a.k.sessionMeta(s.UserID)}
	var res string
	var err error
	if !a.cluster {
		res, err = a.s.createSession.Run(ctx, a.c, append(keys, ptr), args...).Text()
	} else {
		if ctx.Done() != nil { // the steps below run to the end; the caller's wait ends with ctx
			return withinDeadline(ctx, func(ctx context.Context) (*core.Session, error) { return a.CreateSession(ctx, session) })
		}
		var ok bool
		if ok, err = a.claim(ctx, ptr, s.UserID, shared.ExpiryMillis(s.Expires), false, nil); err == nil {
			res = "exists"
			if ok {
				res, err = a.s.createSession.Run(ctx, a.c, keys, args...).Text()
				if err != nil || res != "ok" {
					_ = a.release(ctx, ptr, s.UserID)
				}
			}
		}
	}
	switch {
	case err != nil:
		return nil, err
	case res == "notfound":
		return nil, fmt.Errorf("user %q: %w", s.UserID, core.ErrNotFound)
	case res != "ok":
		return nil, fmt.Errorf("session token: %w", core.ErrAlreadyExists)
	}
	return &s, nil
}

// GetSessionAndUser implements [core.SessionAndUserGetter]: one script
// (one round trip) on a single node; MGET of the session key and its move
// marker, then one script in the user's slot on a cluster (two). Redis evicts the session
// key at the session's expiry, and the script also compares the stored
// expiry with the caller's clock, so an expired session is never
// returned, even before Redis evicts it.
func (a *Adapter) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	ptr, member := a.k.session(sessionToken), shared.Escape(sessionToken)
	var v any
	var err error
	if !a.cluster {
		v, err = a.s.sessionAndUser.Run(ctx, a.c, []string{ptr}, a.pArg, member, a.now().UnixMilli()).Result()
	} else {
		// The session key and the move marker in one MGET: a read while
		// the session is being moved to another user waits for the move
		// (settledPointer) instead of finding no session.
		var uid string
		if uid, err = a.settledPointer(ctx, sessionToken); err == nil && uid == "" {
			err = redis.Nil
		}
		if err == nil {
			v, err = a.s.sessionAndUserC.Run(ctx, a.c, []string{a.k.user(uid), a.k.sessions(uid)}, member, a.now().UnixMilli()).Result()
			if err == nil && v == "expired" {
				// Removed from the user's set: drop the session key too,
				// if it still names this user.
				if err := a.release(ctx, ptr, uid); err != nil {
					return nil, err
				}
				return nil, nil
			}
		}
	}
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	res, ok := v.([]any)
	if !ok || len(res) != 2 {
		return nil, shared.ErrCorrupt
	}
	exp, err := parseScore(res[0])
	if err != nil {
		return nil, err
	}
	su := &core.SessionAndUser{}
	found, err := decodeUserPairsInto(&su.User, res[1])
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	su.Session = core.Session{SessionToken: sessionToken, UserID: su.User.ID, Expires: exp}
	return su, nil
}

// UpdateSession implements [core.SessionUpdater]. On a single node it is
// one script that also moves the session key's TTL. On a cluster: GET of
// the session key, the script in the user's slot, then the new TTL on the
// session key; moving a session to another user takes five steps (see
// README.md). UpdatedAt, when set, is written in the user's slot by the
// same script. The session returned has no metadata.
func (a *Adapter) UpdateSession(ctx context.Context, up core.SessionUpdate) (*core.Session, error) {
	const m = core.MethodUpdateSession
	ch := sessionChange{token: up.SessionToken}
	if up.Expires.Set {
		exp := core.NormalizeTime(up.Expires.Value)
		if err := shared.CheckTime(m, "expires", &exp); err != nil {
			return nil, err
		}
		ch.exp = strconv.FormatInt(exp.UnixMilli(), 10)
	}
	if up.UserID.Set {
		ch.uid = up.UserID.Value
	}
	if up.UpdatedAt.Set {
		seen := core.NormalizeTime(up.UpdatedAt.Value) // the zero time stays zero: unknown
		if err := checkOptTime(m, "updatedAt", &seen); err != nil {
			return nil, err
		}
		ch.seen = &seen
	}
	r, err := a.updateSession(ctx, ch)
	return r.s, err
}

// ExtendSession implements [core.SessionExtender] as UpdateSession of the
// expiry whose script first compares the stored expiry (the score in the
// user's sessions set, which every read of the session takes) with from:
// one script on a single node; on a cluster the compare and the write are
// one script in the user's slot, and the session key's TTL follows (only
// ever later) as updateSession moves it. The script sets UpdatedAt to seen
// in the session's metadata in the same write. The session returned has
// no metadata.
func (a *Adapter) ExtendSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*core.Session, bool, error) {
	const m = core.MethodExtendSession
	exp, at := core.NormalizeTime(expires), core.NormalizeTime(seen)
	if err := shared.CheckTime(m, "expires", &exp); err != nil {
		return nil, false, err
	}
	if err := shared.CheckTime(m, "seen", &at); err != nil {
		return nil, false, err
	}
	fromMs := int64(-shared.MaxMillis) // a from further back than any stored time
	if f := core.NormalizeTime(from); f.After(shared.MsTime(fromMs)) {
		fromMs = f.UnixMilli()
	}
	r, err := a.updateSession(ctx, sessionChange{token: sessionToken, exp: strconv.FormatInt(exp.UnixMilli(), 10), from: strconv.FormatInt(fromMs, 10), seen: &at})
	return r.s, r.wrote, err
}

// sessionChange is an update of a session: the new expiry (ms) or "", the
// new user or "", for extendSession the expiry read (ms), "" else, and
// the new UpdatedAt or nil.
type sessionChange struct {
	token, exp, uid, from string
	seen                  *time.Time
}

// args returns the updateSession script's arguments (see
// luaUpdateSession), the new user's left "" for the caller to set.
func (ch sessionChange) args(p, mode string) []any {
	set, head, whole := "0", "", ""
	if ch.seen != nil {
		set = "1"
		head = string(metaTime(nil, *ch.seen))
		whole = encodeSessionMeta(&core.Session{UpdatedAt: *ch.seen})
	}
	return []any{p, mode, shared.Escape(ch.token), ch.exp, "", ch.from, set, head, whole}
}

// updated is the outcome of updateSession: the session as stored, and
// whether the call wrote it.
type updated struct {
	s     *core.Session
	wrote bool
}

// updateSession runs an update or extension of a session (see
// UpdateSession and ExtendSession).
func (a *Adapter) updateSession(ctx context.Context, ch sessionChange) (updated, error) {
	ptr := a.k.session(ch.token)
	args := ch.args(a.k.p, a.mode())
	if !a.cluster {
		if ch.uid != "" {
			args[4] = shared.Escape(ch.uid)
		}
		v, err := a.s.updateSession.Run(ctx, a.c, []string{ptr}, args...).Result()
		if shared.IsNil(err) {
			return updated{}, nil
		}
		if err != nil {
			return updated{}, err
		}
		if v == "notfound" {
			return updated{}, fmt.Errorf("user %q: %w", ch.uid, core.ErrNotFound)
		}
		return sessionReply(ch.token, v)
	}

	if ctx.Done() != nil { // the steps below run to the end; the caller's wait ends with ctx
		return withinDeadline(ctx, func(ctx context.Context) (updated, error) { return a.updateSession(ctx, ch) })
	}
	// A session moved to another user between reading its key and acting
	// in the user's slot is looked up again (a bounded number of times);
	// while a move is under way, its end is awaited, so that an update of
	// the expiry is applied to the moved session rather than lost.
	uid, err := a.settledPointer(ctx, ch.token)
	for attempt := 0; ; attempt++ {
		if err != nil {
			return updated{}, err
		}
		if uid == "" {
			return updated{}, nil
		}
		if ch.uid != "" && ch.uid != uid {
			s, err := a.moveSessionCluster(ctx, ch, uid)
			return updated{s, s != nil}, err
		}
		v, err := a.s.updateSession.Run(ctx, a.c, a.userKeys(uid), args...).Result()
		if err != nil && !shared.IsNil(err) {
			return updated{}, err
		}
		if err == nil {
			r, err := sessionReply(ch.token, v)
			if err != nil {
				return updated{}, err
			}
			r.s.UserID = uid
			// The session key expires with the session; an extension
			// only ever moves it later, so that extensions whose steps
			// overtake each other leave the latest expiry.
			commit := []any{shared.Escape(uid), shared.ExpiryMillis(r.s.Expires)}
			if ch.from != "" {
				commit = append(commit, "GT")
			}
			ok, err := a.s.commit.Run(ctx, a.c, []string{ptr}, commit...).Int()
			if err != nil {
				return updated{}, err
			}
			if ok == 1 {
				return r, nil
			}
			if r.wrote {
				// The script wrote, then the session key was gone: the
				// session was deleted after this call's write (a
				// revocation racing it). The write happened, and a caller
				// whose compare-and-set won must hear so.
				cur, err := a.settledPointer(ctx, ch.token)
				if err != nil {
					return updated{}, err
				}
				if cur == "" {
					return r, nil
				}
			}
		}
		if attempt == 2 {
			return updated{}, nil
		}
		var cur string
		if cur, err = a.settledPointer(ctx, ch.token); err == nil && cur == uid {
			return updated{}, nil // deleted or expired meanwhile
		}
		uid = cur
	}
}

// Timing of the wait for a move of a session on a cluster: the marker
// lives for moveMarkerTTL (should the mover stop), a waiter polls every
// movePoll and gives up after moveWaitMax.
const (
	moveMarkerTTL = 5 * time.Second
	movePoll      = 2 * time.Millisecond
	moveWaitMax   = 2 * time.Second
)

// settledPointer returns the user the session key of token names ("" when
// there is none), on a cluster. While a move of the session to another user
// is under way (its marker exists: the session is briefly absent between
// the delete at the old user and the create at the new one), it waits for
// the move to end, up to moveWaitMax, so that a concurrent update or
// delete of the session acts on the moved session instead of finding
// nothing. The two keys share a slot and are read with one MGET.
func (a *Adapter) settledPointer(ctx context.Context, token string) (string, error) {
	ptr, mark := a.k.session(token), a.k.moving(token)
	deadline := a.now().Add(moveWaitMax)
	for {
		vals, err := a.c.MGet(ctx, ptr, mark).Result()
		if err != nil {
			return "", err
		}
		if len(vals) != 2 {
			return "", shared.ErrCorrupt
		}
		if vals[1] == nil || !a.now().Before(deadline) {
			if vals[0] == nil {
				return "", nil
			}
			v, _ := vals[0].(string)
			uid, err := shared.Unescape(v)
			if err != nil {
				return "", shared.ErrCorrupt
			}
			return uid, nil
		}
		t := time.NewTimer(movePoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		}
	}
}

// movedFrom reports whether the session key ptr now holds a user other
// than uid (the session was moved to another user meanwhile).
func (a *Adapter) movedFrom(ctx context.Context, ptr, uid string) bool {
	cur, err := a.pointer(ctx, ptr)
	return err == nil && cur != uid
}

// moveSessionCluster moves a session from user from to user ch.uid on a
// cluster, as a deleteSession followed by a createSession under the new
// user with the same token and metadata (README.md explains why): both
// are safe under concurrency on their own, so their sequence never leaves
// a key pointing at nothing. The new user is checked first, so that an
// unknown user changes nothing.
func (a *Adapter) moveSessionCluster(ctx context.Context, ch sessionChange, from string) (*core.Session, error) {
	token, to, newExp := ch.token, ch.uid, ch.exp
	n, err := a.c.Exists(ctx, a.k.user(to)).Result()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("user %q: %w", to, core.ErrNotFound)
	}
	// Mark the move, so that a concurrent update or delete of the session
	// waits for its end (settledPointer) instead of finding it absent in
	// between; the marker is removed after, only if it is still ours.
	mark := a.k.moving(token)
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	own := hex.EncodeToString(nonce)
	if err := a.c.Set(ctx, mark, own, moveMarkerTTL).Err(); err != nil {
		return nil, err
	}
	defer func() { _ = a.s.release.Run(ctx, a.c, []string{mark}, own).Err() }()
	old, err := a.deleteSession(ctx, token, false)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, nil // deleted, expired or moved meanwhile
	}
	s := *old
	s.UserID = to
	if newExp != "" {
		ms, _ := strconv.ParseInt(newExp, 10, 64)
		s.Expires = shared.MsTime(ms)
	}
	if ch.seen != nil {
		s.UpdatedAt = *ch.seen
	}
	got, err := a.CreateSession(ctx, s)
	switch {
	case errors.Is(err, core.ErrNotFound):
		// The new user was deleted meanwhile: put the session back.
		_, _ = a.CreateSession(ctx, *old)
		return nil, fmt.Errorf("user %q: %w", to, core.ErrNotFound)
	case errors.Is(err, core.ErrAlreadyExists):
		return nil, nil // the token was taken again meanwhile
	case err != nil:
		return nil, err
	}
	r := got.WithoutMetadata()
	return &r, nil
}

// checkOptTime is shared.CheckTime for a metadata time, whose zero value
// (unknown) is stored as such.
func checkOptTime(m core.Method, field string, t *time.Time) error {
	if t.IsZero() {
		return nil
	}
	return shared.CheckTime(m, field, t)
}

// sessionReply decodes the {expiry, uid, written} reply of the update
// script.
func sessionReply(token string, v any) (updated, error) {
	res, ok := v.([]any)
	if !ok || len(res) != 3 {
		return updated{}, shared.ErrCorrupt
	}
	exp, err := parseScore(res[0])
	if err != nil {
		return updated{}, err
	}
	e, _ := res[1].(string)
	uid, err := shared.Unescape(e)
	if err != nil {
		return updated{}, shared.ErrCorrupt
	}
	wrote, _ := res[2].(int64)
	return updated{&core.Session{SessionToken: token, UserID: uid, Expires: exp}, wrote == 1}, nil
}

// DeleteSession implements [core.SessionDeleter]. It returns the deleted
// session, or nil, nil when there was none or it had expired.
// On a cluster its steps run to their end, in the background once ctx
// ends (see withinDeadline).
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	if a.cluster {
		return withinDeadline(ctx, func(ctx context.Context) (*core.Session, error) { return a.deleteSession(ctx, sessionToken, true) })
	}
	return a.deleteSession(ctx, sessionToken, true)
}

// deleteSession is DeleteSession; on a cluster, awaitMoves makes it wait
// for a move of the session under way (see settledPointer) when it finds
// the session absent, and delete the moved session. The move itself
// deletes without waiting for its own marker. On a cluster ctx has no
// cancellation (the caller's wait is bounded by withinDeadline).
func (a *Adapter) deleteSession(ctx context.Context, sessionToken string, awaitMoves bool) (*core.Session, error) {
	ptr := a.k.session(sessionToken)
	v, uid, err := a.follow(ctx, a.s.deleteSession, ptr, shared.Escape(sessionToken))
	if a.cluster && awaitMoves && shared.IsNil(err) {
		// Absent, or absent for a moment while a move is under way.
		var cur string
		if cur, err = a.settledPointer(ctx, sessionToken); err != nil {
			return nil, err
		}
		err = redis.Nil
		if cur != "" && cur != uid {
			uid = cur
			v, err = a.s.deleteSession.Run(ctx, a.c, a.userKeys(uid), a.k.p, "C", shared.Escape(sessionToken)).Result()
		}
	}
	// On a cluster the session may have moved to another user between
	// reading its key and deleting in the user's slot: look again.
	for attempt := 0; a.cluster && shared.IsNil(err) && uid != "" && attempt < 2 && a.movedFrom(ctx, ptr, uid); attempt++ {
		v, uid, err = a.follow(ctx, a.s.deleteSession, ptr, shared.Escape(sessionToken))
	}
	if shared.IsNil(err) {
		return nil, nil
	}
	res, ok := v.([]any)
	if !ok || len(res) != 4 {
		return nil, shared.ErrCorrupt
	}
	if a.cluster {
		// Release the session key if it still names this user. If it does
		// not, an updateSession moved the session to another user after
		// we removed it here: delete it there too.
		for attempt := 0; ; attempt++ {
			n, err := a.s.release.Run(ctx, a.c, []string{ptr}, shared.Escape(uid)).Int()
			if err != nil {
				return nil, err
			}
			if n == 1 || attempt == 2 || !a.movedFrom(ctx, ptr, uid) {
				break
			}
			v2, uid2, err := a.follow(ctx, a.s.deleteSession, ptr, shared.Escape(sessionToken))
			if shared.IsNil(err) {
				break
			}
			if err != nil {
				return nil, err
			}
			uid = uid2
			if res, ok = v2.([]any); !ok || len(res) != 4 {
				return nil, shared.ErrCorrupt
			}
		}
	} else {
		e, _ := res[1].(string)
		if uid, err = shared.Unescape(e); err != nil {
			return nil, shared.ErrCorrupt
		}
	}
	if alive, _ := res[2].(int64); alive != 1 {
		return nil, nil
	}
	exp, err := parseScore(res[0])
	if err != nil {
		return nil, err
	}
	s := &core.Session{SessionToken: sessionToken, UserID: uid, Expires: exp}
	if meta, _ := res[3].(string); meta != "" {
		if err := decodeSessionMeta(meta, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseScore parses a sorted-set score (milliseconds) as a UTC time.
func parseScore(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, shared.ErrCorrupt
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, shared.ErrCorrupt
	}
	return shared.MsTime(int64(f)), nil
}
