package unstorage

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateUser implements [core.UserCreator]: one script writes the user
// document and its e-mail key.
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	doc, err := checkedDoc(&user, encodeUUser, a.checkUser(core.MethodCreateUser, &user))
	if err != nil {
		return nil, err
	}
	stale, err := a.staleEmail(ctx, user.Email, user.ID)
	if err != nil {
		return nil, err
	}
	res, err := a.s.createUser.Run(ctx, a.c, []string{a.k.user(user.ID), a.k.email(user.Email)}, doc, user.ID, stale).Text()
	if err != nil {
		return nil, err
	}
	if res != "ok" {
		return nil, fmt.Errorf("user id %q or e-mail %q: %w", user.ID, user.Email, core.ErrAlreadyExists)
	}
	return &user, nil
}

// staleEmail returns the value of email's index key when it names a user
// other than id that no longer has that e-mail (or no longer exists):
// @auth/unstorage-adapter's updateUser leaves the old e-mail's key behind.
// Such a key does not block the e-mail. It returns "" otherwise.
func (a *Adapter) staleEmail(ctx context.Context, email, id string) (string, error) {
	holder, ok, err := shared.Get(ctx, a.c, a.k.email(email))
	if err != nil || !ok || holder == id {
		return "", err
	}
	_, usr, err := a.readUser(ctx, holder)
	if err != nil {
		return "", err
	}
	if usr == nil || usr.Email != email {
		return holder, nil
	}
	return "", nil
}

func (a *Adapter) checkUser(m core.Method, nu *core.User) error {
	if err := checkKey(m, "id", uUser, uUser+nu.ID); err != nil {
		return err
	}
	if err := checkKey(m, "email", uEmail, uEmail+nu.Email); err != nil {
		return err
	}
	return checkISOTime(m, "emailVerified", nu.EmailVerified)
}

// readUser reads the user document of id: its raw value (for
// compare-and-set) and the decoded user, nil when there is none.
func (a *Adapter) readUser(ctx context.Context, id string) (string, *core.User, error) {
	return readDoc(ctx, a, a.k.user(id), func(raw string) (*core.User, error) { return decodeUUser(raw, id) })
}

// readDoc reads the document at key: its raw value (for compare-and-set)
// and what decode makes of it, nil when there is none.
func readDoc[T any](ctx context.Context, a *Adapter, key string, decode func(raw string) (*T, error)) (string, *T, error) {
	raw, ok, err := shared.Get(ctx, a.c, key)
	if err != nil || !ok {
		return "", nil, err
	}
	v, err := decode(raw)
	return raw, v, err
}

// GetUser implements [core.UserGetter].
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	_, usr, err := a.readUser(ctx, id)
	return usr, err
}

// GetUserByEmail implements [core.UserByEmailGetter].
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	id, ok, err := shared.Get(ctx, a.c, a.k.email(email))
	if err != nil || !ok {
		return nil, err
	}
	_, usr, err := a.readUser(ctx, id)
	if err != nil {
		return nil, err
	}
	// The index key is only a pointer: the user's own record decides.
	if usr == nil || usr.Email != email {
		return nil, nil
	}
	return usr, nil
}

// GetUserByAccount implements [core.UserByAccountGetter].
func (a *Adapter) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	_, acc, err := a.readAccount(ctx, key.Provider, key.ProviderAccountID)
	if err != nil || acc == nil {
		return nil, err
	}
	_, usr, err := a.readUser(ctx, acc.UserID)
	return usr, err
}

// UpdateUser implements [core.UserUpdater] as a compare-and-set of the
// user document: fields the update does not name, and fields authport does
// not know, are left as stored.
func (a *Adapter) UpdateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	const m = core.MethodUpdateUser
	drop := make([]string, 0, len(up.Data))
	for name := range up.Data {
		drop = append(drop, name)
	}
	return shared.CAS(ctx, func() (*core.User, bool, error) {
		raw, cur, err := a.readUser(ctx, up.ID)
		if err != nil {
			return nil, false, err
		}
		if cur == nil {
			return nil, false, fmt.Errorf("user %q: %w", up.ID, core.ErrNotFound)
		}
		next := up.Apply(*cur)
		newDoc, err := checkedDoc(&next, encodeUUser, a.checkUser(m, &next))
		if err != nil {
			return nil, false, err
		}
		s, err := mergeDoc(raw, newDoc, drop...)
		if err != nil {
			return nil, false, err
		}
		move, stale := "0", ""
		if next.Email != cur.Email {
			move = "1"
			if stale, err = a.staleEmail(ctx, next.Email, up.ID); err != nil {
				return nil, false, err
			}
		}
		res, err := a.s.updateUser.Run(ctx, a.c, []string{a.k.user(up.ID), a.k.email(cur.Email), a.k.email(next.Email)},
			raw, s, up.ID, move, stale).Text()
		if err != nil || res == "retry" {
			return nil, false, err
		}
		if err := replyErr(res, up.ID, fmt.Sprintf("e-mail %q", next.Email)); err != nil {
			return nil, false, err
		}
		return &next, true, nil
	})
}

// DeleteUser implements [core.UserDeleter]: one script deletes the user,
// its e-mail key and every account, session and authenticator it finds
// through unstorage's by-user keys and authport's own sets.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	return shared.CAS(ctx, func() (*core.User, bool, error) {
		raw, usr, err := a.readUser(ctx, id)
		if err != nil || usr == nil {
			return nil, true, err
		}
		idx := []string{a.k.accountByUser(id), a.k.sessionByUser(id), a.k.authByUser(id)}
		vals, err := a.c.MGet(ctx, idx...).Result()
		if err != nil {
			return nil, false, err
		}
		args := []any{raw, id}
		var targets []any
		for i, v := range vals {
			s, ok := v.(string)
			args = append(args, shared.Enc(s, ok))
			if !ok {
				continue
			}
			if i < 2 { // a logical key
				targets = append(targets, a.k.redis(s))
				continue
			}
			for _, cred := range credList(s) {
				targets = append(targets, a.k.auth(cred))
			}
		}
		args = append(append(args, len(targets)), targets...)
		res, err := a.s.deleteUser.Run(ctx, a.c, []string{a.k.user(id), a.k.email(usr.Email), idx[0], idx[1], idx[2],
			a.k.ownAccounts(id), a.k.ownSessions(id), a.k.ownAuths(id)}, args...).Text()
		if err != nil || res != "ok" {
			return nil, false, err
		}
		return usr, true, nil
	})
}

// credList decodes the JSON list of credential ids unstorage keeps per
// user; anything else reads as empty.
func credList(s string) []string {
	var l []string
	if json.Unmarshal([]byte(s), &l) != nil {
		return nil
	}
	return l
}
