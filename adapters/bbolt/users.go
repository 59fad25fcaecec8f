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

// CreateUser implements createUser: it stores the user and its e-mail index
// entry in one transaction.
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
		if b.usersByEmail.Get([]byte(u.Email)) != nil {
			return fmt.Errorf("e-mail already taken: %w", core.ErrAlreadyExists)
		}
		if err := b.users.Put(id, val); err != nil {
			return err
		}
		return b.usersByEmail.Put([]byte(u.Email), id)
	})
	if err != nil {
		return nil, storeErr(err)
	}
	out := u.Clone()
	return &out, nil
}

// getUser reads and decodes the user with the id, or returns nil.
func getUser(users *bolt.Bucket, id []byte) (*core.User, error) {
	return getRecord(users, id, decodeUser)
}

// GetUser implements getUser.
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	return getOne(ctx, a, bucketUsers, []byte(id), decodeUser)
}

// GetUserByEmail implements getUserByEmail: e-mails are compared exactly.
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	return read(ctx, a, func(tx *bolt.Tx) (*core.User, error) {
		byEmail, users, err := bucket2(tx, a.root, bucketUsersByEmail, bucketUsers)
		if err != nil || email == "" {
			return nil, err
		}
		return getUser(users, byEmail.Get([]byte(email)))
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

// UpdateUser implements updateUser. A changed e-mail moves the e-mail index
// entry in the same transaction.
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
		if u.Email != old.Email {
			if b.usersByEmail.Get([]byte(u.Email)) != nil {
				return nil, fmt.Errorf("e-mail already taken: %w", core.ErrAlreadyExists)
			}
			if err := b.usersByEmail.Delete([]byte(old.Email)); err != nil {
				return nil, err
			}
			if err := b.usersByEmail.Put([]byte(u.Email), id); err != nil {
				return nil, err
			}
		}
		if err := b.users.Put(id, encodeUser(&u)); err != nil {
			return nil, err
		}
		return &u, nil
	})
}

// DeleteUser implements deleteUser: the user, its e-mail index entry, its
// accounts, sessions and authenticators and all their index entries go in
// one transaction.
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
			if err := b.usersByEmail.Delete([]byte(u.Email)); err != nil {
				return nil, err
			}
			if err := b.users.Delete([]byte(id)); err != nil {
				return nil, err
			}
			return u, nil
		})
}
