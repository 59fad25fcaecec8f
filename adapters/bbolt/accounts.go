package bboltadapter

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// LinkAccount implements linkAccount: the account and its user index entry
// are written in one transaction, after checking that the user exists.
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	acc := account.Normalize()
	val := encodeAccount(&acc)
	key := accountKey(acc.Provider, acc.ProviderAccountID)
	err := a.update(ctx, func(tx *bolt.Tx) error {
		b, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		if b.users.Get([]byte(acc.UserID)) == nil {
			return fmt.Errorf("no user with this id: %w", core.ErrNotFound)
		}
		if b.accounts.Get(key) != nil {
			return fmt.Errorf("account (provider, providerAccountId) already linked: %w", core.ErrAlreadyExists)
		}
		if err := b.accounts.Put(key, val); err != nil {
			return err
		}
		return b.userAccounts.Put(ownerKey(acc.UserID, key), marker)
	})
	if err != nil {
		return nil, storeErr(err)
	}
	out := acc.Clone()
	return &out, nil
}

// UnlinkAccount implements unlinkAccount.
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	var out *core.Account
	k := accountKey(key.Provider, key.ProviderAccountID)
	err := a.update(ctx, func(tx *bolt.Tx) error {
		out = nil
		b, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		v := b.accounts.Get(k)
		if v == nil {
			return nil
		}
		acc, err := decodeAccount(v)
		if err != nil {
			return err
		}
		if err := b.userAccounts.Delete(ownerKey(acc.UserID, k)); err != nil {
			return err
		}
		if err := b.accounts.Delete(k); err != nil {
			return err
		}
		out = acc
		return nil
	})
	if err != nil {
		return nil, storeErr(err)
	}
	return normalizeRead(out), nil
}

// normalizeRead lowercases the token_type of an account read from the file:
// this adapter stores it lowercased, but another program writing the file
// may not have.
func normalizeRead(acc *core.Account) *core.Account {
	if acc != nil {
		acc.TokenType = core.NormalizeTokenType(acc.TokenType)
	}
	return acc
}

// GetAccount implements getAccount (note the spec's argument order).
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	var out *core.Account
	err := a.view(ctx, func(tx *bolt.Tx) error {
		accounts, err := bucket(tx, a.root, bucketAccounts)
		if err != nil {
			return err
		}
		v := accounts.Get(accountKey(provider, providerAccountID))
		if v == nil {
			return nil
		}
		out, err = decodeAccount(v)
		return err
	})
	if err != nil {
		return nil, storeErr(err)
	}
	return normalizeRead(out), nil
}

// ListAccountsByUserID implements [core.AccountsByUserLister]: one prefix
// scan of the user's index entries in a read transaction, ordered by
// provider, then providerAccountId. An unknown user gives an empty, non-nil
// list.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	out := []core.Account{}
	err := a.view(ctx, func(tx *bolt.Tx) error {
		index, accounts, err := bucket2(tx, a.root, bucketUserAccounts, bucketAccounts)
		if err != nil {
			return err
		}
		prefix := ownerPrefix(userID)
		c := index.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			v := accounts.Get(k[len(prefix):])
			if v == nil {
				return fmt.Errorf("%w: index entry for a missing account", ErrCorrupt)
			}
			acc, err := decodeAccount(v)
			if err != nil {
				return err
			}
			out = append(out, *normalizeRead(acc))
		}
		return nil
	})
	if err != nil {
		return nil, storeErr(err)
	}
	// Index keys are length-prefixed, so they are not in provider order.
	slices.SortFunc(out, func(x, y core.Account) int {
		return cmp.Or(strings.Compare(x.Provider, y.Provider), strings.Compare(x.ProviderAccountID, y.ProviderAccountID))
	})
	return out, nil
}

// UpdateAccount implements [core.AccountUpdater]: it reads, changes the set
// fields of, and writes the account in one write transaction. It returns
// nil, nil when there is no such account.
func (a *Adapter) UpdateAccount(ctx context.Context, update core.AccountUpdate) (*core.Account, error) {
	var out *core.Account
	k := accountKey(update.Provider, update.ProviderAccountID)
	err := a.update(ctx, func(tx *bolt.Tx) error {
		out = nil
		accounts, err := bucket(tx, a.root, bucketAccounts)
		if err != nil {
			return err
		}
		v := accounts.Get(k)
		if v == nil {
			return nil
		}
		old, err := decodeAccount(v)
		if err != nil {
			return err
		}
		acc := update.Apply(*old)
		if err := accounts.Put(k, encodeAccount(&acc)); err != nil {
			return err
		}
		out = &acc
		return nil
	})
	if err != nil {
		return nil, storeErr(err)
	}
	return out, nil
}
