package bboltadapter

import (
	"context"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

func invalidTime(method core.Method, field string) error {
	return &core.InputError{Method: string(method), Field: field, Reason: "is outside the range of Unix milliseconds"}
}

func checkTime(method core.Method, field string, t *time.Time) error {
	if t != nil && !timeOK(*t) {
		return invalidTime(method, field)
	}
	return nil
}

// CreateUser implements createUser: it stores the user and its e-mail and
// username index entries (for the ones it has) in one transaction.
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	const m = core.MethodCreateUser
	u := user.Normalize()
	if err := checkTime(m, "emailVerified", u.EmailVerified); err != nil {
		return nil, err
	}
	val := encodeUser(&u)
	err := a.update(ctx, func(tx *bolt.Tx) error {
		b, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		id := []byte(u.ID)
		if b.users.Get(id) != nil {
			return fmt.Errorf("user id already taken: %w", core.ErrAlreadyExists)
		}
		if err := b.moveUserKeys(id, nil, &u); err != nil {
			return err
		}
		return b.users.Put(id, val)
	})
	if err != nil {
		return nil, storeErr(err)
	}
	out := u.Clone()
	return &out, nil
}

// userKey is a user field that is unique among the users that have one
// ("" is none), with its index bucket (value → user id).
type userKey struct {
	what  string // for errors
	index *bolt.Bucket
	of    func(*core.User) string
}

// userKeys returns the unique user fields: the e-mail address and the
// username.
func (b *buckets) userKeys() [2]userKey {
	return [2]userKey{
		{"e-mail", b.usersByEmail, func(u *core.User) string { return u.Email }},
		{"username", b.usersByName, func(u *core.User) string { return u.Username }},
	}
}

// moveUserKeys moves the index entries of the user id from what old has to
// what u has, inside a write transaction: old is nil for a new user, u nil
// for a deleted one. A field that is "" has no entry. It first checks that
// no other user has one of u's new values (else core.ErrAlreadyExists,
// with nothing written), then deletes the entries of the values u dropped
// and puts those of the values it gained, so that a value freed here is
// free at once.
func (b *buckets) moveUserKeys(id []byte, old, u *core.User) error {
	keys := b.userKeys()
	value := func(k userKey, x *core.User) string {
		if x == nil {
			return ""
		}
		return k.of(x)
	}
	for _, k := range keys {
		if n := value(k, u); n != "" && n != value(k, old) && k.index.Get([]byte(n)) != nil {
			return fmt.Errorf("%s already taken: %w", k.what, core.ErrAlreadyExists)
		}
	}
	for _, k := range keys {
		o, n := value(k, old), value(k, u)
		if o == n {
			continue
		}
		if o != "" {
			if err := k.index.Delete([]byte(o)); err != nil {
				return err
			}
		}
		if n != "" {
			if err := k.index.Put([]byte(n), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// getUser reads and decodes the user with the id, or returns nil.
func getUser(users *bolt.Bucket, id []byte) (*core.User, error) {
	return getRecord(users, id, decodeUser)
}

// GetUser implements getUser.
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	return getOne(ctx, a, bucketUsers, []byte(id), decodeUser)
}

// GetUserByEmail implements getUserByEmail: e-mails are compared exactly,
// and "" finds nothing.
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	return a.getUserBy(ctx, bucketUsersByEmail, email)
}

// GetUserByUsername implements [core.UserByUsernameGetter]: usernames are
// compared exactly (the library normalises them), and "" finds nothing.
func (a *Adapter) GetUserByUsername(ctx context.Context, username string) (*core.User, error) {
	return a.getUserBy(ctx, bucketUsersByName, username)
}

// getUserBy reads the user that the index idx maps key to, in one read
// transaction; nil for "", for a key not in the index, and when the index
// is a later bucket the file does not have yet (laterBucket).
func (a *Adapter) getUserBy(ctx context.Context, idx []byte, key string) (*core.User, error) {
	return read(ctx, a, func(tx *bolt.Tx) (*core.User, error) {
		index, users, err := bucket2(tx, a.root, idx, bucketUsers)
		if err != nil || index == nil || key == "" {
			return nil, err
		}
		return getUser(users, index.Get([]byte(key)))
	})
}

// GetUserByAccount implements getUserByAccount in one read transaction,
// without a closure and without copying the key, like GetSessionAndUser.
func (a *Adapter) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	u, err := a.readUserByAccount(ctx, key)
	if err != nil {
		return nil, storeErr(err)
	}
	return u, nil
}

func (a *Adapter) readUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	tx, err := a.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	accounts, users, err := bucket2(tx, a.root, bucketAccounts, bucketUsers)
	if err != nil {
		return nil, err
	}
	v := accounts.Get(accountKey(key.Provider, key.ProviderAccountID))
	if v == nil {
		return nil, nil
	}
	uid, err := userIDRefOfAccount(v)
	if err != nil {
		return nil, err
	}
	return getUser(users, uid)
}

// UpdateUser implements updateUser. A changed e-mail or username moves its
// index entry in the same transaction; one set to "" loses it (the value is
// free for another user at once).
func (a *Adapter) UpdateUser(ctx context.Context, update core.UserUpdate) (*core.User, error) {
	const m = core.MethodUpdateUser
	if update.EmailVerified.Set {
		if err := checkTime(m, "emailVerified", core.NormalizeTimePtr(update.EmailVerified.Value)); err != nil {
			return nil, err
		}
	}
	return write(ctx, a, func(b *buckets) (*core.User, error) {
		id := []byte(update.ID)
		old, err := getUser(b.users, id)
		if err != nil {
			return nil, err
		}
		if old == nil {
			return nil, fmt.Errorf("no user with this id: %w", core.ErrNotFound)
		}
		u := update.Apply(*old)
		if err := b.moveUserKeys(id, old, &u); err != nil {
			return nil, err
		}
		if err := b.users.Put(id, encodeUser(&u)); err != nil {
			return nil, err
		}
		return &u, nil
	})
}

// DeleteUser implements deleteUser: the user, its e-mail and username index
// entries, its accounts, sessions, authenticators and factors and all their
// index entries go in one transaction.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	return writeFound(ctx, a, func(b *buckets) (*core.User, error) { return getUser(b.users, []byte(id)) },
		func(b *buckets, u *core.User) (*core.User, error) {
			prefix := ownerPrefix(id)
			// Each owner index, and how to delete a record it points to.
			for _, owned := range []struct {
				idx *bolt.Bucket
				del func(key []byte) error
			}{
				{b.userAccounts, b.accounts.Delete},
				{b.userSessions, func(token []byte) error { return deleteSession(b, token) }},
				{b.userAuthent, b.authenticators.Delete},
				{b.userFactors, b.factors.Delete},
			} {
				keys, err := deletePrefix(owned.idx, prefix)
				if err != nil {
					return nil, err
				}
				for _, k := range keys {
					if err := owned.del(k); err != nil {
						return nil, err
					}
				}
			}
			if err := b.moveUserKeys([]byte(id), u, nil); err != nil {
				return nil, err
			}
			if err := b.users.Delete([]byte(id)); err != nil {
				return nil, err
			}
			return u, nil
		})
}
