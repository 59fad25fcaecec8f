package redisadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
)

// CreateUser implements [core.UserCreator]. On a single node it is one
// script; on a cluster it claims the e-mail index key, writes the user in
// its slot and then confirms the claim (three round trips).
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	if a.u != nil {
		return a.u.createUser(ctx, user)
	}
	const m = core.MethodCreateUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := user.Validate(); err != nil {
		return nil, err
	}
	u := user.Normalize()
	if err := checkTime(m, "emailVerified", u.EmailVerified); err != nil {
		return nil, err
	}
	args := append([]any{a.k.p, a.mode(), escape(u.ID)}, userFields(&u)...)
	ek := a.k.email(u.Email)
	if !a.cluster {
		res, err := a.s.createUser.Run(ctx, a.c, []string{a.k.user(u.ID), ek}, args...).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		if res != "ok" {
			return nil, fmt.Errorf("%s: user id %q or e-mail %q: %w", m, u.ID, u.Email, core.ErrAlreadyExists)
		}
		return &u, nil
	}
	if ctx.Done() != nil {
		return withinDeadline(ctx, func(ctx context.Context) (*core.User, error) { return a.CreateUser(ctx, user) })
	}
	ok, err := a.claim(ctx, ek, u.ID, 0)
	if err != nil {
		return nil, wrap(m, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: e-mail %q: %w", m, u.Email, core.ErrAlreadyExists)
	}
	ctx = context.WithoutCancel(ctx) // finish what was started
	res, err := a.s.createUser.Run(ctx, a.c, []string{a.k.user(u.ID)}, args...).Text()
	if err != nil || res != "ok" {
		_ = a.release(ctx, ek, u.ID)
		if err != nil {
			return nil, wrap(m, err)
		}
		return nil, fmt.Errorf("%s: user id %q: %w", m, u.ID, core.ErrAlreadyExists)
	}
	if ok, err = a.commit(ctx, ek, u.ID); err != nil || !ok {
		_ = a.c.Del(context.WithoutCancel(ctx), a.k.user(u.ID)).Err()
		if err != nil {
			return nil, wrap(m, err)
		}
		return nil, fmt.Errorf("%s: e-mail %q claimed concurrently: %w", m, u.Email, core.ErrAlreadyExists)
	}
	return &u, nil
}

// GetUser implements [core.UserGetter] with one HGETALL.
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	if a.u != nil {
		return a.u.getUser(ctx, id)
	}
	const m = core.MethodGetUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if id == "" {
		return nil, nil
	}
	h, err := a.c.HGetAll(ctx, a.k.user(id)).Result()
	if err != nil {
		return nil, wrap(m, err)
	}
	u, err := decodeUserMap(h)
	if err != nil {
		return nil, wrap(m, err)
	}
	return u, nil
}

// GetUserByEmail implements [core.UserByEmailGetter]: one script on a
// single node, GET and HGETALL on a cluster.
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	if a.u != nil {
		return a.u.getUserByEmail(ctx, email)
	}
	const m = core.MethodGetUserByEmail
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if email == "" {
		return nil, nil
	}
	ek := a.k.email(email)
	var u *core.User
	if !a.cluster {
		v, err := a.s.userByEmail.Run(ctx, a.c, []string{ek}, a.k.p).Result()
		if isNil(err) {
			return nil, nil
		}
		if err != nil {
			return nil, wrap(m, err)
		}
		if u, err = decodeUserPairs(v); err != nil {
			return nil, wrap(m, err)
		}
	} else {
		uid, err := a.pointer(ctx, ek)
		if isNil(err) {
			return nil, nil
		}
		if err != nil {
			return nil, wrap(m, err)
		}
		h, err := a.c.HGetAll(ctx, a.k.user(uid)).Result()
		if err != nil {
			return nil, wrap(m, err)
		}
		if u, err = decodeUserMap(h); err != nil {
			return nil, wrap(m, err)
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
	if a.u != nil {
		return a.u.getUserByAccount(ctx, key)
	}
	const m = core.MethodGetUserByAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if key.Provider == "" || key.ProviderAccountID == "" {
		return nil, nil
	}
	field := accountField(key.Provider, key.ProviderAccountID)
	v, _, err := a.follow(ctx, a.s.userByAccount, a.k.account(field), field)
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(m, err)
	}
	u, err := decodeUserPairs(v)
	if err != nil {
		return nil, wrap(m, err)
	}
	return u, nil
}

// UpdateUser implements [core.UserUpdater]. On a single node it is one
// script that also moves the e-mail index; on a cluster an e-mail change
// takes the user's e-mail-change lock, claims the new index key first and
// releases the old one last (see updateEmailCluster).
func (a *Adapter) UpdateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	if a.u != nil {
		return a.u.updateUser(ctx, up)
	}
	const m = core.MethodUpdateUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := up.Validate(); err != nil {
		return nil, err
	}
	var set []any
	var del []any
	newEmail := ""
	if up.Email.Set {
		newEmail = up.Email.Value
		set = append(set, fEmail, newEmail)
	}
	if up.EmailVerified.Set {
		if t := core.NormalizeTimePtr(up.EmailVerified.Value); t != nil {
			if err := checkTime(m, "emailVerified", t); err != nil {
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
	args := append([]any{a.k.p, a.mode(), escape(up.ID), newEmail, len(set) / 2}, set...)
	args = append(args, del...)

	if a.cluster && newEmail != "" {
		return a.updateEmailCluster(ctx, up.ID, newEmail, args)
	}
	v, err := a.s.updateUser.Run(ctx, a.c, []string{a.k.user(up.ID)}, args...).Result()
	if err != nil {
		return nil, wrap(m, err)
	}
	return updateUserReply(up, v)
}

// updateUserReply decodes the update script's reply.
func updateUserReply(up core.UserUpdate, v any) (*core.User, error) {
	const m = core.MethodUpdateUser
	switch v {
	case "notfound":
		return nil, fmt.Errorf("%s: user %q: %w", m, up.ID, core.ErrNotFound)
	case "exists":
		return nil, fmt.Errorf("%s: e-mail %q: %w", m, up.Email.Value, core.ErrAlreadyExists)
	}
	res, ok := v.([]any)
	if !ok || len(res) != 2 {
		return nil, wrap(m, errCorrupt)
	}
	u, err := decodeUserPairs(res[1])
	if err != nil || u == nil {
		return nil, wrap(m, errCorrupt)
	}
	return u, nil
}

// updateEmailCluster is updateUser with an e-mail on a cluster. E-mail
// changes of one user are serialized by a lease lock in the user's hash
// (field lockField), taken first and given back last, so that two of them
// cannot interleave their claims and releases of index keys. Then: claim
// the new e-mail's index key, update the user, confirm the claim, release
// the old e-mail's index key.
func (a *Adapter) updateEmailCluster(ctx context.Context, id, newEmail string, args []any) (*core.User, error) {
	const m = core.MethodUpdateUser
	up := core.UserUpdate{ID: id, Email: core.Set(newEmail)}
	uk := a.k.user(id)
	var nb [12]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return nil, wrap(m, err)
	}
	nonce := hex.EncodeToString(nb[:])
	var old string
	for backoff := time.Millisecond; ; backoff = min(2*backoff, 50*time.Millisecond) {
		v, err := a.s.lock.Run(ctx, a.c, []string{uk}, nonce, a.claimTTL.Milliseconds()).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		if v == "notfound" {
			return nil, fmt.Errorf("%s: user %q: %w", m, id, core.ErrNotFound)
		}
		if v != "busy" {
			old = v[1:] // "=" + the current e-mail
			break
		}
		select {
		case <-ctx.Done():
			return nil, wrap(m, ctx.Err())
		case <-time.After(backoff):
		}
	}
	ctx = context.WithoutCancel(ctx) // from here on, finish what was started
	defer func() { _ = a.s.unlock.Run(ctx, a.c, []string{uk}, nonce).Err() }()

	update := func() (*core.User, error) {
		v, err := a.s.updateUser.Run(ctx, a.c, []string{uk}, args...).Result()
		if err != nil {
			return nil, wrap(m, err)
		}
		return updateUserReply(up, v)
	}
	if old == newEmail {
		return update()
	}
	ek := a.k.email(newEmail)
	claimed, err := a.claim(ctx, ek, id, 0)
	if err != nil {
		return nil, wrap(m, err)
	}
	if !claimed {
		if holder, err := a.pointer(ctx, ek); err != nil || holder != id {
			return nil, fmt.Errorf("%s: e-mail %q: %w", m, newEmail, core.ErrAlreadyExists)
		}
	}
	u, err := update()
	if err != nil {
		if claimed {
			_ = a.release(ctx, ek, id)
		}
		return nil, err
	}
	if claimed {
		if ok, err := a.commit(ctx, ek, id); err != nil || !ok {
			// The user was deleted (which released the claim) or the claim
			// outlived its TTL and was taken: undo.
			if n, _ := a.c.Exists(ctx, uk).Result(); n == 0 {
				_ = a.release(ctx, a.k.email(old), id)
				return nil, fmt.Errorf("%s: user %q deleted meanwhile: %w", m, id, core.ErrNotFound)
			}
			_ = a.s.updateUser.Run(ctx, a.c, []string{uk}, a.k.p, "C", escape(id), "", 1, fEmail, old).Err()
			return nil, fmt.Errorf("%s: e-mail %q claimed concurrently: %w", m, newEmail, core.ErrAlreadyExists)
		}
	}
	if err := a.release(ctx, a.k.email(old), id); err != nil {
		return nil, wrap(m, err)
	}
	return u, nil
}

// DeleteUser implements [core.UserDeleter]. One script deletes the user
// and everything in its slot; on a single node the same script deletes the
// index keys, on a cluster one pipeline releases them afterwards.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	if a.u != nil {
		return a.u.deleteUser(ctx, id)
	}
	const m = core.MethodDeleteUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if id == "" {
		return nil, nil
	}
	v, err := a.s.deleteUser.Run(ctx, a.c, a.userKeys(id), a.k.p, a.mode()).Result()
	if isNil(err) {
		return nil, nil
	}
	// ErrReplicaAck (WithReplicaAck): the master deleted the user (v is
	// its answer) but too few replicas confirmed it in time. Finish the
	// cascade, so that no index key is left pointing at the deleted user,
	// then report it.
	ackErr := replicaAckErr(&err)
	if err != nil {
		return nil, wrap(m, err)
	}
	res, ok := v.([]any)
	if !ok || len(res) != 5 {
		return nil, wrap(m, errCorrupt)
	}
	u, err := decodeUserPairs(res[0])
	if err != nil || u == nil {
		return nil, wrap(m, errCorrupt)
	}
	if a.cluster {
		var ptrs []string
		if email, _ := res[1].(string); email != "" {
			ptrs = append(ptrs, a.k.email(email))
		}
		for i, kind := range []string{"account", "session", "authenticator"} {
			list, _ := res[2+i].([]any)
			for _, f := range list {
				if s, ok := f.(string); ok {
					ptrs = append(ptrs, a.k.p+kind+":{"+s+"}")
				}
			}
		}
		if len(ptrs) > 0 {
			if err := a.releaseAll(context.WithoutCancel(ctx), ptrs, escape(id)); err != nil {
				return nil, wrap(m, err)
			}
		}
	}
	if ackErr != nil {
		return nil, wrap(m, ackErr)
	}
	return u, nil
}

// releaseAll releases every pointer in ptrs that still holds uid, in one
// pipeline of EVALSHA (the script's text is sent only to a node that
// answers NOSCRIPT, in a second pipeline of EVAL for its pointers).
func (a *Adapter) releaseAll(ctx context.Context, ptrs []string, uid string) error {
	cmds, err := a.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range ptrs {
			a.s.release.EvalSha(ctx, p, []string{k}, uid)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	var retry []string
	for i, c := range cmds {
		if e := c.Err(); e != nil {
			if !redis.HasErrorPrefix(e, "NOSCRIPT") {
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
