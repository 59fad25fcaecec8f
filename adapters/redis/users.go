package redisadapter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateUser implements [core.UserCreator]. On a single node it is one
// script; on a cluster it claims the index key of each unique value the
// user has (e-mail, username), writes the user in its slot and then
// confirms the claims (three round trips for a user with an e-mail).
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	const m = core.MethodCreateUser
	u := user.Normalize()
	if err := shared.CheckTime(m, "emailVerified", u.EmailVerified); err != nil {
		return nil, err
	}
	args := append([]any{a.k.p, a.mode(), shared.Escape(u.ID)}, userFields(&u)...)
	if !a.cluster {
		res, err := a.s.createUser.Run(ctx, a.c, []string{a.k.user(u.ID)}, args...).Text()
		if err != nil {
			return nil, err
		}
		if err := a.takenErr(res, &u); err != nil {
			return nil, err
		}
		return &u, nil
	}
	if ctx.Done() != nil {
		return withinDeadline(ctx, func(ctx context.Context) (*core.User, error) { return a.CreateUser(ctx, user) })
	}
	var claimed []heldClaim
	for _, f := range uniqueFields() {
		v := uniqueValue(&u, f)
		if v == "" {
			continue
		}
		k := a.k.unique(f, v)
		at, ok, err := a.claimProvisional(ctx, k, u.ID, a.hasValue(f, v))
		if err != nil || !ok {
			a.releaseClaims(ctx, claimed, u.ID)
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s %q: %w", uniqueWhat(f), v, core.ErrAlreadyExists)
		}
		claimed = append(claimed, heldClaim{k, at})
	}
	ctx = context.WithoutCancel(ctx) // finish what was started
	// The script writes a user stored exactly so as 'ok': run it again
	// when its reply is lost.
	res, err := again(ctx, func(ctx context.Context) (string, error) {
		return a.s.createUser.Run(ctx, a.c, []string{a.k.user(u.ID), a.k.tombstone(u.ID)}, args...).Text()
	})
	if err != nil {
		// Whether it wrote the user is unknown: undo the user if it did,
		// then give the claims back; keep (and confirm) a user that is in
		// use already, so that it stays reachable by its unique values.
		switch state, uerr := a.undoCreate(ctx, u.ID, args); {
		case uerr != nil: // the claims expire
		case state == "same":
			for _, c := range claimed {
				_, _ = a.commit(ctx, c.key, u.ID)
			}
		default:
			a.releaseClaims(ctx, claimed, u.ID)
		}
		return nil, err
	}
	if res != "ok" {
		a.releaseClaims(ctx, claimed, u.ID)
		return nil, fmt.Errorf("user id %q: %w", u.ID, core.ErrAlreadyExists)
	}
	for _, c := range claimed {
		if ok, err := a.commit(ctx, c.key, u.ID); err != nil || !ok {
			if err != nil {
				// The commit may have run: undo the user only once its
				// index keys are released (confirmed ones too, by user
				// id); otherwise the user is whole or its claims expire,
				// and a confirmed pointer never outlives its user.
				if a.releaseAllOf(ctx, claimed, u.ID) == nil {
					_, _ = a.undoCreate(ctx, u.ID, args)
				}
				return nil, err
			}
			// The claim is gone (the user was deleted, or the claim
			// outlived its TTL and was taken): undo the user, then
			// release its other index keys.
			_, _ = a.undoCreate(ctx, u.ID, args)
			_ = a.releaseAllOf(ctx, claimed, u.ID)
			return nil, fmt.Errorf("%s claimed concurrently: %w", c.key, core.ErrAlreadyExists)
		}
	}
	return &u, nil
}

// undoCreate runs luaUndoCreate with createUser's arguments args: it
// deletes the user if it is stored exactly as args write it and nothing
// is attached to it, and reports "gone" (no such user now), "same" (the
// user as given, in use) or "other".
func (a *Adapter) undoCreate(ctx context.Context, id string, args []any) (string, error) {
	return again(ctx, func(ctx context.Context) (string, error) {
		return a.s.undoCreate.Run(ctx, a.c, append(a.userKeys(id)[:4], a.k.factors(id)), args...).Text()
	})
}

// heldClaim is an index key a write claimed, with the claim's token (see
// claimProvisional), or 0 for a pointer of the user's own made
// provisional again (claimForChange).
type heldClaim struct {
	key string
	at  int64
}

// takenErr turns a single-node write script's reply into the error of a
// taken id or unique value ('exists:<field>'), nil for "ok".
func (a *Adapter) takenErr(res string, u *core.User) error {
	f, taken := strings.CutPrefix(res, "exists:")
	switch {
	case res == "ok":
		return nil
	case taken && f == "id":
		return fmt.Errorf("user id %q: %w", u.ID, core.ErrAlreadyExists)
	case taken && (f == fEmail || f == fUsername):
		return fmt.Errorf("%s %q: %w", uniqueWhat(f), uniqueValue(u, f), core.ErrAlreadyExists)
	}
	return shared.ErrCorrupt
}

// uniqueWhat names a unique field in errors.
func uniqueWhat(f string) string {
	if f == fEmail {
		return "e-mail"
	}
	return f
}

// releaseClaims releases the claims a write made (undoing it) that are
// still its own: by token (releaseClaim), or by user id for a pointer of
// the user's own made provisional again; by the caller's deadline.
func (a *Adapter) releaseClaims(ctx context.Context, cs []heldClaim, uid string) {
	for _, c := range cs {
		if c.at != 0 {
			_ = a.releaseClaim(ctx, c.key, uid, c.at)
		} else {
			_ = a.release(ctx, c.key, uid)
		}
	}
}

// releaseAllOf releases the keys of cs that hold uid, whether claims or
// confirmed (a commit whose outcome is unknown), and returns the first
// error.
func (a *Adapter) releaseAllOf(ctx context.Context, cs []heldClaim, uid string) error {
	var first error
	for _, c := range cs {
		if err := a.release(ctx, c.key, uid); err != nil && first == nil {
			first = err
		}
	}
	return first
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
// single node, GET and HGETALL on a cluster. "" finds nobody: a user
// without an e-mail address has no index key.
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	return a.userByUnique(ctx, fEmail, email)
}

// GetUserByUsername implements [core.UserByUsernameGetter] like
// GetUserByEmail, through the username's index key.
func (a *Adapter) GetUserByUsername(ctx context.Context, username string) (*core.User, error) {
	return a.userByUnique(ctx, fUsername, username)
}

// userByUnique returns the user whose unique field f (e-mail, username)
// is v, following its index key.
func (a *Adapter) userByUnique(ctx context.Context, f, v string) (*core.User, error) {
	if v == "" {
		return nil, nil
	}
	ptr := a.k.unique(f, v)
	var u *core.User
	if !a.cluster {
		res, err := a.s.userByEmail.Run(ctx, a.c, []string{ptr}, a.k.p).Result()
		if shared.IsNil(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if u, err = decodeUserPairs(res); err != nil {
			return nil, err
		}
	} else {
		uid, err := a.pointer(ctx, ptr)
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
	if u == nil || uniqueValue(u, f) != v {
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

// uniqueChange is an update's change of a unique user field (e-mail,
// username): the field, its new value ("" removes it) and, on a cluster,
// its value when the user's lock was taken.
type uniqueChange struct{ field, old, new string }

// UpdateUser implements [core.UserUpdater]. On a single node it is one
// script that also moves the index keys of the e-mail and the username;
// on a cluster a change of either takes the user's lock, claims the new
// index keys first and releases the old ones last (see
// updateUniqueCluster).
func (a *Adapter) UpdateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	const m = core.MethodUpdateUser
	var set, del []any
	var changes []uniqueChange
	for _, f := range []struct {
		name string
		v    core.Field[string]
	}{{fEmail, up.Email}, {fUsername, up.Username}} {
		if !f.v.Set {
			continue
		}
		changes = append(changes, uniqueChange{field: f.name, new: f.v.Value})
		if f.v.Value != "" {
			set = append(set, f.name, f.v.Value)
		} else {
			del = append(del, f.name)
		}
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
	args := a.updateArgs(up.ID, changes, set, del)
	if a.cluster && len(changes) > 0 {
		return a.updateUniqueCluster(ctx, up, changes, args)
	}
	v, err := a.s.updateUser.Run(ctx, a.c, []string{a.k.user(up.ID)}, args...).Result()
	if err != nil {
		return nil, err
	}
	return a.updateUserReply(up, v)
}

// updateArgs returns the update script's arguments (see luaUpdateUser).
func (a *Adapter) updateArgs(id string, changes []uniqueChange, set, del []any) []any {
	args := make([]any, 0, 6+2*len(changes)+len(set)+len(del))
	args = append(args, a.k.p, a.mode(), shared.Escape(id), len(changes))
	for _, c := range changes {
		args = append(args, c.field, c.new)
	}
	args = append(append(args, len(set)/2), set...)
	return append(args, del...)
}

// updateUserReply decodes the update script's reply.
func (a *Adapter) updateUserReply(up core.UserUpdate, v any) (*core.User, error) {
	if s, ok := v.(string); ok {
		if s == "notfound" {
			return nil, fmt.Errorf("user %q: %w", up.ID, core.ErrNotFound)
		}
		next := up.Apply(core.User{ID: up.ID})
		return nil, a.takenErr(s, &next)
	}
	_, u, err := userInReply(v, 2, 1)
	return u, err
}

// updateUniqueCluster is updateUser of the e-mail or the username on a
// cluster. Such changes of one user are serialized by a lease lock in the
// user's hash (field lockField), taken first and given back last, so that
// two of them cannot interleave their claims and releases of index keys.
// Then: claim the new values' index keys, update the user, confirm the
// claims, release the old values' index keys.
func (a *Adapter) updateUniqueCluster(ctx context.Context, up core.UserUpdate, changes []uniqueChange, args []any) (*core.User, error) {
	uk := a.k.user(up.ID)
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
	lockArgs := []any{nonce, a.claimTTL.Milliseconds()}
	for _, c := range changes {
		lockArgs = append(lockArgs, c.field)
	}
	for backoff := time.Millisecond; ; backoff = min(2*backoff, 50*time.Millisecond) {
		// The lock is taken again by the nonce holding it: run it again
		// when its reply is lost.
		v, err := again(ctx, func(ctx context.Context) (any, error) {
			return a.s.lock.Run(ctx, a.c, []string{uk}, lockArgs...).Result()
		})
		if err != nil {
			// The lock may have been taken (the script ran, its reply
			// lost, or ctx ended while it ran): give it back now rather
			// than let it block the next change for its whole lease.
			unlock(ctx)
			return nil, err
		}
		if v == "notfound" {
			return nil, fmt.Errorf("user %q: %w", up.ID, core.ErrNotFound)
		}
		if v != "busy" {
			olds, ok := v.([]any)
			if !ok || len(olds) != 1+len(changes) {
				unlock(ctx)
				return nil, shared.ErrCorrupt
			}
			for i := range changes {
				changes[i].old, _ = olds[1+i].(string)
			}
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
		return a.changeUniqueLocked(ctx, up, changes, args)
	})
}

// changeUniqueLocked is updateUniqueCluster once it holds the user's lock:
// claim the new values' index keys, update the user, confirm the claims,
// release the old values' index keys. Each step runs again when its reply
// is lost (again); a step whose outcome stays unknown is undone before the
// claims are given back.
func (a *Adapter) changeUniqueLocked(ctx context.Context, up core.UserUpdate, changes []uniqueChange, args []any) (*core.User, error) {
	id := up.ID
	uk := a.k.user(id)
	var claimed []heldClaim
	for _, c := range changes {
		if c.new == "" || c.new == c.old {
			continue
		}
		k := a.k.unique(c.field, c.new)
		hc, ok, err := a.claimForChange(ctx, k, id, c.field, c.new)
		if err != nil || !ok {
			a.releaseClaims(ctx, claimed, id)
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s %q: %w", uniqueWhat(c.field), c.new, core.ErrAlreadyExists)
		}
		claimed = append(claimed, hc)
	}
	v, err := again(ctx, func(ctx context.Context) (any, error) {
		return a.s.updateUser.Run(ctx, a.c, []string{uk}, args...).Result()
	})
	var u *core.User
	if err == nil {
		u, err = a.updateUserReply(up, v)
	} else if a.revertUnique(ctx, id, changes) != nil {
		// The update may have run and could not be undone: keep the
		// claims, which expire unless confirmed, rather than free a value
		// the user may have.
		return nil, err
	}
	if err != nil {
		a.releaseClaims(ctx, claimed, id)
		return nil, err
	}
	var olds []string
	for _, c := range changes {
		if c.old != "" && c.old != c.new {
			olds = append(olds, a.k.unique(c.field, c.old))
		}
	}
	for _, c := range claimed {
		if ok, err := a.commit(ctx, c.key, id); err != nil || !ok {
			// The user was deleted (which released the claims) or a claim
			// outlived its TTL and was taken: undo.
			if n, _ := a.c.Exists(ctx, uk).Result(); n == 0 {
				for _, k := range olds {
					_ = a.release(ctx, k, id)
				}
				_ = a.releaseAllOf(ctx, claimed, id)
				return nil, fmt.Errorf("user %q deleted meanwhile: %w", id, core.ErrNotFound)
			}
			if a.revertUnique(ctx, id, changes) == nil {
				_ = a.releaseAllOf(ctx, claimed, id)
			}
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s claimed concurrently: %w", c.key, core.ErrAlreadyExists)
		}
	}
	for _, k := range olds {
		if err := a.release(ctx, k, id); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// revertUnique puts the unique fields changes change back to their old
// values (undoing an update whose claims are given back), on a cluster,
// where the caller moves the index keys.
func (a *Adapter) revertUnique(ctx context.Context, id string, changes []uniqueChange) error {
	var set, del []any
	for _, c := range changes {
		if c.old != "" {
			set = append(set, c.field, c.old)
		} else {
			del = append(del, c.field)
		}
	}
	_, err := again(ctx, func(ctx context.Context) (any, error) {
		return a.s.updateUser.Run(ctx, a.c, []string{a.k.user(id)}, a.updateArgs(id, nil, set, del)...).Result()
	})
	return err
}

// claimForChange claims the index key k of a unique field's new value for
// the user id's change (see claimProvisional). Its own pointer, left by an
// earlier change cut short, is made provisional again, so that it is
// confirmed with the update or released (its claim's token is then 0).
func (a *Adapter) claimForChange(ctx context.Context, k, id, field, value string) (heldClaim, bool, error) {
	at, ok, err := a.claimProvisional(ctx, k, id, a.hasValue(field, value))
	if err != nil || ok {
		return heldClaim{k, at}, ok, err
	}
	holder, err := a.pointer(ctx, k)
	if err != nil || holder != id {
		return heldClaim{}, false, nil
	}
	ok, err = again(ctx, func(ctx context.Context) (bool, error) {
		n, err := a.s.commit.Run(ctx, a.c, []string{k}, shared.Escape(id), time.Now().Add(a.claimTTL).UnixMilli()).Int()
		return n == 1, err
	})
	return heldClaim{k, 0}, err == nil && ok, nil
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
	keys := append(a.userKeys(id), a.k.tombstone(id), a.k.factors(id))
	args := []any{a.k.p, a.mode(), shared.Escape(id), attempt, tombstoneTTL.Milliseconds()}
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
	// that call left (it returned the user; this one returns nil).
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

// hasValue returns a claim's holds function for the index key of the
// value v of the unique field f (e-mail, username): whether the holder
// still has that value.
func (a *Adapter) hasValue(f, v string) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, holder string) (bool, error) {
		cur, err := a.c.HGet(ctx, a.k.user(holder), f).Result()
		if shared.IsNil(err) {
			return false, nil
		}
		return cur == v, err
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
