package redisadapter

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateUser implements [core.UserCreator]. On a single node it is one
// script; on a cluster it claims the e-mail index key, writes the user in
// its slot and then confirms the claim (three round trips).
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	const m = core.MethodCreateUser
	u := user.Normalize()
	if err := shared.CheckTime(m, "emailVerified", u.EmailVerified); err != nil {
		return nil, err
	}
	args := append([]any{a.k.p, a.mode(), shared.Escape(u.ID)}, userFields(&u)...)
	ek := a.k.email(u.Email)
	if !a.cluster {
		res, err := a.s.createUser.Run(ctx, a.c, []string{a.k.user(u.ID), ek}, args...).Text()
		if err != nil {
			return nil, err
		}
		if res != "ok" {
			return nil, fmt.Errorf("user id %q or e-mail %q: %w", u.ID, u.Email, core.ErrAlreadyExists)
		}
		return &u, nil
	}
	if ctx.Done() != nil {
		return withinDeadline(ctx, func(ctx context.Context) (*core.User, error) { return a.CreateUser(ctx, user) })
	}
	at, ok, err := a.claimProvisional(ctx, ek, u.ID, a.hasEmail(u.Email))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("e-mail %q: %w", u.Email, core.ErrAlreadyExists)
	}
	ctx = context.WithoutCancel(ctx) // finish what was started
	// The script writes a user stored exactly so as 'ok': run it again
	// when its reply is lost.
	res, err := again(ctx, func(ctx context.Context) (string, error) {
		return a.s.createUser.Run(ctx, a.c, []string{a.k.user(u.ID), a.k.tombstone(u.ID)}, args...).Text()
	})
	if err != nil {
		// Whether it wrote the user is unknown: undo the user if it did,
		// then give the claim back; keep (and confirm) a user that is in
		// use already, so that it stays reachable by its e-mail.
		switch state, uerr := a.undoCreate(ctx, u.ID, args); {
		case uerr != nil: // the claim expires
		case state == "same":
			_, _ = a.commit(ctx, ek, u.ID)
		default:
			_ = a.releaseClaim(ctx, ek, u.ID, at)
		}
		return nil, err
	}
	if res != "ok" {
		_ = a.releaseClaim(ctx, ek, u.ID, at)
		return nil, fmt.Errorf("user id %q: %w", u.ID, core.ErrAlreadyExists)
	}
	if ok, err = a.commit(ctx, ek, u.ID); err != nil || !ok {
		if err != nil {
			// The commit may have run. Undo the user only once its
			// pointer is released: otherwise the user is whole or its
			// claim expires, and a committed pointer never outlives it.
			if a.release(ctx, ek, u.ID) == nil {
				_, _ = a.undoCreate(ctx, u.ID, args)
			}
			return nil, err
		}
		// The claim is gone (the user was deleted, or the claim outlived
		// its TTL and was taken): undo the user.
		_, _ = a.undoCreate(ctx, u.ID, args)
		return nil, fmt.Errorf("e-mail %q claimed concurrently: %w", u.Email, core.ErrAlreadyExists)
	}
	return &u, nil
}

// undoCreate runs luaUndoCreate with createUser's arguments args: it
// deletes the user if it is stored exactly as args write it and nothing
// is attached to it, and reports "gone" (no such user now), "same" (the
// user as given, in use) or "other".
func (a *Adapter) undoCreate(ctx context.Context, id string, args []any) (string, error) {
	return again(ctx, func(ctx context.Context) (string, error) {
		return a.s.undoCreate.Run(ctx, a.c, a.userKeys(id)[:4], args...).Text()
	})
}

// GetUser implements [core.UserGetter] with one HGETALL.
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	h, err := a.c.HGetAll(ctx, a.k.user(id)).Result()
	if err != nil {
		return nil, err
	}
	return decodeUserMap(h)
}

// GetUserByEmail implements [core.UserByEmailGetter]: one script on a
// single node, GET and HGETALL on a cluster.
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	ek := a.k.email(email)
	var u *core.User
	if !a.cluster {
		v, err := a.s.userByEmail.Run(ctx, a.c, []string{ek}, a.k.p).Result()
		if shared.IsNil(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if u, err = decodeUserPairs(v); err != nil {
			return nil, err
		}
	} else {
		uid, err := a.pointer(ctx, ek)
		if shared.IsNil(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		h, err := a.c.HGetAll(ctx, a.k.user(uid)).Result()
		if err != nil {
			return nil, err
		}
		if u, err = decodeUserMap(h); err != nil {
			return nil, err
		}
	}
	// The index key is only a pointer: the user's own record decides. (On a
	// cluster it can briefly point at a user being created or changed.)
	if u == nil || u.Email != email {
		return nil, nil
	}
	return u, nil
}

// GetUserByAccount implements [core.UserByAccountGetter].
func (a *Adapter) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	field := accountField(key.Provider, key.ProviderAccountID)
	v, _, err := a.follow(ctx, a.s.userByAccount, a.k.account(field), field)
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeUserPairs(v)
}

// UpdateUser implements [core.UserUpdater]. On a single node it is one
// script that also moves the e-mail index; on a cluster an e-mail change
// takes the user's e-mail-change lock, claims the new index key first and
// releases the old one last (see updateEmailCluster).
func (a *Adapter) UpdateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	const m = core.MethodUpdateUser
	var set []any
	var del []any
	newEmail := ""
	if up.Email.Set {
		newEmail = up.Email.Value
		set = append(set, fEmail, newEmail)
	}
	if up.EmailVerified.Set {
		if t := core.NormalizeTimePtr(up.EmailVerified.Value); t != nil {
			if err := shared.CheckTime(m, "emailVerified", t); err != nil {
				return nil, err
			}
			set = append(set, fEmailVerified, strconv.FormatInt(t.UnixMilli(), 10))
		} else {
			del = append(del, fEmailVerified)
		}
	}
	for _, f := range []struct {
		name string
		v    core.Field[*string]
	}{{fName, up.Name}, {fImage, up.Image}} {
		if !f.v.Set {
			continue
		}
		if f.v.Value != nil {
			set = append(set, f.name, *f.v.Value)
		} else {
			del = append(del, f.name)
		}
	}
	for name, v := range up.Data {
		if d, ok := dataValue(v); ok {
			set = append(set, fDataPrefix+name, d)
		} else {
			del = append(del, fDataPrefix+name)
		}
	}
	args := append([]any{a.k.p, a.mode(), shared.Escape(up.ID), newEmail, len(set) / 2}, set...)
	args = append(args, del...)

	if a.cluster && newEmail != "" {
		return a.updateEmailCluster(ctx, up.ID, newEmail, args)
	}
	v, err := a.s.updateUser.Run(ctx, a.c, []string{a.k.user(up.ID)}, args...).Result()
	if err != nil {
		return nil, err
	}
	return updateUserReply(up, v)
}

// updateUserReply decodes the update script's reply.
func updateUserReply(up core.UserUpdate, v any) (*core.User, error) {
	switch v {
	case "notfound":
		return nil, fmt.Errorf("user %q: %w", up.ID, core.ErrNotFound)
	case "exists":
		return nil, fmt.Errorf("e-mail %q: %w", up.Email.Value, core.ErrAlreadyExists)
	}
	_, u, err := userInReply(v, 2, 1)
	return u, err
}

// updateEmailCluster is updateUser with an e-mail on a cluster. E-mail
// changes of one user are serialized by a lease lock in the user's hash
// (field lockField), taken first and given back last, so that two of them
// cannot interleave their claims and releases of index keys. Then: claim
// the new e-mail's index key, update the user, confirm the claim, release
// the old e-mail's index key.
func (a *Adapter) updateEmailCluster(ctx context.Context, id, newEmail string, args []any) (*core.User, error) {
	uk := a.k.user(id)
	nonce, err := shared.AttemptID()
	if err != nil {
		return nil, err
	}
	// unlock gives the lock back if this call holds it: to the end, in
	// the background once ctx ends; run again when its reply is lost.
	unlock := func(ctx context.Context) {
		_ = finish(ctx, func(ctx context.Context) error {
			_, err := again(ctx, func(ctx context.Context) (any, error) { return a.s.unlock.Run(ctx, a.c, []string{uk}, nonce).Result() })
			return err
		})
	}
	var old string
	for backoff := time.Millisecond; ; backoff = min(2*backoff, 50*time.Millisecond) {
		// The lock is taken again by the nonce holding it: run it again
		// when its reply is lost.
		v, err := again(ctx, func(ctx context.Context) (string, error) {
			return a.s.lock.Run(ctx, a.c, []string{uk}, nonce, a.claimTTL.Milliseconds()).Text()
		})
		if err != nil {
			// The lock may have been taken (the script ran, its reply
			// lost, or ctx ended while it ran): give it back now rather
			// than let it block the next change for its whole lease.
			unlock(ctx)
			return nil, err
		}
		if v == "notfound" {
			return nil, fmt.Errorf("user %q: %w", id, core.ErrNotFound)
		}
		if v != "busy" {
			old = v[1:] // "=" + the current e-mail
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
	}
	// From here on, finish what was started, in the background once ctx
	// ends.
	return withinDeadline(ctx, func(ctx context.Context) (*core.User, error) {
		defer unlock(ctx)
		return a.changeEmailLocked(ctx, id, old, newEmail, args)
	})
}

// changeEmailLocked is updateEmailCluster once it holds the user's lock:
// claim the new e-mail's index key, update the user, confirm the claim,
// release the old e-mail's index key. Each step runs again when its reply
// is lost (again); a step whose outcome stays unknown is undone before
// the claim is given back.
func (a *Adapter) changeEmailLocked(ctx context.Context, id, old, newEmail string, args []any) (*core.User, error) {
	up := core.UserUpdate{ID: id, Email: core.Set(newEmail)}
	uk := a.k.user(id)
	update := func() (*core.User, error) {
		v, err := again(ctx, func(ctx context.Context) (any, error) {
			return a.s.updateUser.Run(ctx, a.c, []string{uk}, args...).Result()
		})
		if err != nil {
			return nil, err
		}
		return updateUserReply(up, v)
	}
	if old == newEmail {
		return update()
	}
	ek := a.k.email(newEmail)
	_, claimed, err := a.claimProvisional(ctx, ek, id, a.hasEmail(newEmail))
	if err != nil {
		return nil, err
	}
	if !claimed {
		// Our own pointer, left by an earlier change: make it provisional
		// again, so that it is confirmed with the update or released.
		holder, err := a.pointer(ctx, ek)
		if err == nil && holder == id {
			claimed, err = again(ctx, func(ctx context.Context) (bool, error) {
				n, err := a.s.commit.Run(ctx, a.c, []string{ek}, shared.Escape(id), time.Now().Add(a.claimTTL).UnixMilli()).Int()
				return n == 1, err
			})
		}
		if err != nil || !claimed {
			return nil, fmt.Errorf("e-mail %q: %w", newEmail, core.ErrAlreadyExists)
		}
	}
	u, err := update()
	if err != nil {
		// The update may have run: put the old e-mail back before the
		// new one's claim is released, so that the user never has an
		// e-mail whose index key is free.
		if a.setEmail(ctx, id, old) == nil {
			_ = a.release(ctx, ek, id)
		}
		return nil, err
	}
	if ok, err := a.commit(ctx, ek, id); err != nil || !ok {
		// The user was deleted (which released the claim) or the claim
		// outlived its TTL and was taken: undo.
		if n, _ := a.c.Exists(ctx, uk).Result(); n == 0 {
			_ = a.releaseEmail(ctx, old, id)
			return nil, fmt.Errorf("user %q deleted meanwhile: %w", id, core.ErrNotFound)
		}
		_ = a.setEmail(ctx, id, old)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("e-mail %q claimed concurrently: %w", newEmail, core.ErrAlreadyExists)
	}
	if err := a.releaseEmail(ctx, old, id); err != nil {
		return nil, err
	}
	return u, nil
}

// setEmail sets the e-mail field of the user (removes it for ""), on a
// cluster, where the caller moves the index keys; it undoes an e-mail
// change.
func (a *Adapter) setEmail(ctx context.Context, id, email string) error {
	args := []any{a.k.p, "C", shared.Escape(id), "", 1, fEmail, email}
	if email == "" {
		args = []any{a.k.p, "C", shared.Escape(id), "", 0, fEmail}
	}
	_, err := again(ctx, func(ctx context.Context) (any, error) {
		return a.s.updateUser.Run(ctx, a.c, []string{a.k.user(id)}, args...).Result()
	})
	return err
}

// releaseEmail releases the index key of the e-mail if it holds uid; ""
// has none.
func (a *Adapter) releaseEmail(ctx context.Context, email, uid string) error {
	if email == "" {
		return nil
	}
	return a.release(ctx, a.k.email(email), uid)
}

// DeleteUser implements [core.UserDeleter]. One script deletes the user
// and everything in its slot; on a single node the same script deletes the
// index keys, on a cluster one pipeline releases them afterwards, then the
// tombstone the script left is deleted (see luaDeleteUser): a retry of a
// deleteUser whose reply was lost, or that stopped before the release,
// still releases every index key of the user.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	attempt, err := shared.AttemptID()
	if err != nil {
		return nil, err
	}
	args := []any{a.k.p, a.mode(), shared.Escape(id), attempt, tombstoneTTL.Milliseconds()}
	for _, ix := range userIndexes() {
		args = append(args, ix.field, ix.kind)
	}
	keys := append(a.userKeys(id), a.k.tombstone(id))
	run := func(ctx context.Context) (any, error) { return a.s.deleteUser.Run(ctx, a.c, keys, args...).Result() }
	var v any
	if a.cluster {
		// A second run replies the first's answer (the tombstone).
		v, err = again(ctx, run)
	} else {
		v, err = run(ctx)
	}
	if shared.IsNil(err) {
		return nil, nil
	}
	// ErrReplicaAck (WithReplicaAck): the master deleted the user (v is
	// its answer) but too few replicas confirmed it in time. Finish the
	// cascade, so that no index key is left pointing at the deleted user,
	// then report it.
	ackErr := shared.ReplicaAckErr(&err)
	if err != nil {
		return nil, err
	}
	res, ok := v.([]any)
	if !ok || len(res) != 2 {
		return nil, shared.ErrCorrupt
	}
	// An empty user: another call deleted it, and this one releases what
	// that call left (it returns the user; this one, nil).
	u, err := decodeUserPairs(res[0])
	if err != nil {
		return nil, shared.ErrCorrupt
	}
	list, _ := res[1].([]any)
	if a.cluster && len(list) > 0 {
		ptrs := make([]string, 0, len(list))
		for _, p := range list {
			if s, ok := p.(string); ok {
				ptrs = append(ptrs, s)
			}
		}
		// The user is gone: release its index keys to the end, in the
		// background once ctx ends; then the tombstone has served.
		uid := shared.Escape(id)
		if err := finish(ctx, func(ctx context.Context) error {
			if _, err := again(ctx, func(ctx context.Context) (struct{}, error) {
				return struct{}{}, a.releaseAll(ctx, ptrs, uid, nil)
			}); err != nil {
				return err
			}
			_ = a.c.Del(ctx, a.k.tombstone(id)).Err() // else it expires
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if ackErr != nil {
		return nil, ackErr
	}
	return u, nil
}

// tombstoneTTL is how long, on a cluster, a deleteUser whose release of
// the index keys did not complete leaves its tombstone (luaDeleteUser) for
// a retry to complete it.
const tombstoneTTL = 24 * time.Hour

// userInReply checks that a script's reply is a list of n items and
// decodes item i, a user's HGETALL.
func userInReply(v any, n, i int) ([]any, *core.User, error) {
	res, ok := v.([]any)
	if !ok || len(res) != n {
		return nil, nil, shared.ErrCorrupt
	}
	u, err := decodeUserPairs(res[i])
	if err != nil || u == nil {
		return nil, nil, shared.ErrCorrupt
	}
	return res, u, nil
}

// hasEmail returns a claim's holds function for the index key of email:
// whether the holder still has that e-mail.
func (a *Adapter) hasEmail(email string) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, holder string) (bool, error) {
		cur, err := a.c.HGet(ctx, a.k.user(holder), fEmail).Result()
		if shared.IsNil(err) {
			return false, nil
		}
		return cur == email, err
	}
}

// releaseAll releases every pointer in ptrs that still holds uid, and
// deletes the keys in drop, in one pipeline of EVALSHA and DEL (the
// script's text is sent only to a node that answers NOSCRIPT, in a second
// pipeline of EVAL for its pointers).
func (a *Adapter) releaseAll(ctx context.Context, ptrs []string, uid string, drop []string) error {
	cmds, err := a.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range ptrs {
			a.s.release.EvalSha(ctx, p, []string{k}, uid)
		}
		for _, k := range drop {
			p.Del(ctx, k)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	var retry []string
	for i, c := range cmds {
		if e := c.Err(); e != nil {
			if i >= len(ptrs) || !redis.HasErrorPrefix(e, "NOSCRIPT") {
				return e
			}
			retry = append(retry, ptrs[i])
		}
	}
	if len(retry) == 0 {
		return err
	}
	_, err = a.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range retry {
			a.s.release.Eval(ctx, p, []string{k}, uid)
		}
		return nil
	})
	return err
}
