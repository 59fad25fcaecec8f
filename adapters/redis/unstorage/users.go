package unstorage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// uniqueField is a user field whose values are unique, each with an index
// key naming its user: the e-mail address (Auth.js's user:email:<email>)
// and the username (authport's own key). A user without one ("") has no
// index key for it.
type uniqueField struct {
	name string
	get  func(*core.User) string
	key  func(ukeys, string) string
}

// uniqueFields returns the unique user fields.
func uniqueFields() [2]uniqueField {
	return [2]uniqueField{
		{"e-mail", func(u *core.User) string { return u.Email }, ukeys.email},
		{"username", func(u *core.User) string { return u.Username }, ukeys.username},
	}
}

// CreateUser implements [core.UserCreator]: one script writes the user
// document and the index keys of its e-mail and username (a user without
// one has no index key for it).
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	doc, err := checkedDoc(&user, encodeUUser, a.checkUser(core.MethodCreateUser, &user))
	if err != nil {
		return nil, err
	}
	keys := []string{a.k.user(user.ID)}
	args := []any{doc, user.ID}
	for _, f := range uniqueFields() {
		v := f.get(&user)
		if v == "" {
			continue
		}
		stale, err := a.staleIndex(ctx, f, v, user.ID)
		if err != nil {
			return nil, err
		}
		keys = append(keys, f.key(a.k, v))
		args = append(args, stale)
	}
	res, err := a.s.createUser.Run(ctx, a.c, keys, args...).Text()
	if err != nil {
		return nil, err
	}
	if res != "ok" {
		return nil, fmt.Errorf("user id %q, e-mail %q or username %q: %w", user.ID, user.Email, user.Username, core.ErrAlreadyExists)
	}
	return &user, nil
}

// staleIndex returns the value of the index key of the unique field f's
// value v when it names a user other than id that no longer has that
// value (or no longer exists): @auth/unstorage-adapter's updateUser leaves
// the old e-mail's key behind, and its deleteUser the username's. Such a
// key does not block the value. It returns "" otherwise.
func (a *Adapter) staleIndex(ctx context.Context, f uniqueField, v, id string) (string, error) {
	holder, ok, err := shared.Get(ctx, a.c, f.key(a.k, v))
	if err != nil || !ok || holder == id {
		return "", err
	}
	_, usr, err := a.readUser(ctx, holder)
	if err != nil {
		return "", err
	}
	if usr == nil || f.get(usr) != v {
		return holder, nil
	}
	return "", nil
}

func (a *Adapter) checkUser(m core.Method, nu *core.User) error {
	if err := checkKey(m, "id", uUser, uUser+nu.ID); err != nil {
		return err
	}
	if _, ok := nu.Data["username"]; ok {
		// Application fields are top-level fields of the document, where
		// "username" is the username's.
		return shared.Invalid(m, "data", `application field name "username" is the user document's username field; choose another name`)
	}
	if nu.Email != "" {
		if err := checkKey(m, "email", uEmail, uEmail+nu.Email); err != nil {
			return err
		}
	}
	if nu.Username != "" {
		if err := checkKey(m, "username", uOwnUsername, uOwnUsername+nu.Username); err != nil {
			return err
		}
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

// GetUserByEmail implements [core.UserByEmailGetter]. "" finds nobody: a
// user without an e-mail address has no index key.
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	return a.userByUnique(ctx, uniqueFields()[0], email)
}

// GetUserByUsername implements [core.UserByUsernameGetter] through the
// username's index key (authport:username:<name>).
func (a *Adapter) GetUserByUsername(ctx context.Context, username string) (*core.User, error) {
	return a.userByUnique(ctx, uniqueFields()[1], username)
}

// userByUnique returns the user whose unique field f is v, following its
// index key.
func (a *Adapter) userByUnique(ctx context.Context, f uniqueField, v string) (*core.User, error) {
	if v == "" {
		return nil, nil
	}
	id, ok, err := shared.Get(ctx, a.c, f.key(a.k, v))
	if err != nil || !ok {
		return nil, err
	}
	_, usr, err := a.readUser(ctx, id)
	if err != nil {
		return nil, err
	}
	// The index key is only a pointer: the user's own record decides.
	if usr == nil || f.get(usr) != v {
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
		unset := drop
		if next.Username == "" {
			unset = append(slices.Clip(drop), "username") // absent when none
		}
		s, err := mergeDoc(raw, newDoc, unset...)
		if err != nil {
			return nil, false, err
		}
		keys := []string{a.k.user(up.ID)}
		args := []any{raw, s, up.ID}
		for _, f := range uniqueFields() {
			old, v := f.get(cur), f.get(&next)
			if old == v {
				continue
			}
			hasOld, hasNew, stale := "0", "0", ""
			if old != "" {
				keys, hasOld = append(keys, f.key(a.k, old)), "1"
			}
			if v != "" {
				keys, hasNew = append(keys, f.key(a.k, v)), "1"
				if stale, err = a.staleIndex(ctx, f, v, up.ID); err != nil {
					return nil, false, err
				}
			}
			args = append(args, hasOld, hasNew, stale)
		}
		res, err := a.s.updateUser.Run(ctx, a.c, keys, args...).Text()
		if err != nil || res == "retry" {
			return nil, false, err
		}
		if err := replyErr(res, up.ID, fmt.Sprintf("e-mail %q or username %q", next.Email, next.Username)); err != nil {
			return nil, false, err
		}
		return &next, true, nil
	})
}

// DeleteUser implements [core.UserDeleter]: one script deletes the user,
// its e-mail and username keys and every account, session and authenticator it finds
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
		keys := []string{a.k.user(id), idx[0], idx[1], idx[2], a.k.ownAccounts(id), a.k.ownSessions(id), a.k.ownAuths(id), a.k.ownFactors(id)}
		for _, f := range uniqueFields() {
			if v := f.get(usr); v != "" {
				keys = append(keys, f.key(a.k, v))
			}
		}
		if usr.Email == "" {
			// Auth.js writes the e-mail key of a user without one as
			// ${emailKeyPrefix}${user.email}.
			keys = append(keys, a.k.email("null"), a.k.email("undefined"))
		}
		res, err := a.s.deleteUser.Run(ctx, a.c, keys, args...).Text()
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
