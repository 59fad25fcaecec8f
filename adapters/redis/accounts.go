package redisadapter

import (
	"context"
	"fmt"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// LinkAccount implements [core.AccountLinker]: one script on a single
// node; claim, write, confirm on a cluster.
func (a *Adapter) LinkAccount(ctx context.Context, acc core.Account) (*core.Account, error) {
	field := accountField(acc.Provider, acc.ProviderAccountID)
	err := a.attach(ctx, acc.UserID, a.k.account(field), a.k.accounts, field, encodeAccount(&acc),
		fmt.Sprintf("account (%q, %q)", acc.Provider, acc.ProviderAccountID))
	if err != nil {
		return nil, err
	}
	return &acc, nil
}

// UnlinkAccount implements [core.AccountUnlinker].
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	field := accountField(key.Provider, key.ProviderAccountID)
	ptr := a.k.account(field)
	s, uid, err := a.followRecord(ctx, a.s.unlinkAccount, ptr, field)
	if err != nil || s == "" {
		return nil, err
	}
	if a.cluster {
		// The record is gone from the user's slot; now the pointer.
		if err := a.release(ctx, ptr, uid); err != nil {
			return nil, err
		}
	}
	return decodeAccount(s)
}

// GetAccount implements [core.AccountGetter].
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	field := accountField(provider, providerAccountID)
	s, _, err := a.followRecord(ctx, a.s.getAccount, a.k.account(field), field)
	if err != nil || s == "" {
		return nil, err
	}
	return decodeAccount(s)
}

// ListAccountsByUserID implements [core.AccountsByUserLister] with one
// HVALS of the user's accounts hash.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	return listHash(ctx, a, a.k.accounts(userID), decodeAccount, core.CompareAccounts)
}

// UpdateAccount implements [core.AccountUpdater]: it follows the account
// key to the user, reads the account from the user's accounts hash, and
// writes the updated account back only if it is still as read (a
// compare-and-set in the user's slot, repeated if another writer changed
// it meanwhile).
func (a *Adapter) UpdateAccount(ctx context.Context, up core.AccountUpdate) (*core.Account, error) {
	return a.changeAccount(ctx, up.Provider, up.ProviderAccountID, func(cur *core.Account) (*core.Account, error) {
		next := up.Apply(*cur)
		return &next, nil
	})
}

// SwapPasswordHash implements [core.PasswordHashSwapper]: the account's
// record (in the user's accounts hash, whose encoding carries the hash) is
// replaced by one script that writes only if the record is still the one
// read (compare-and-set in the user's slot, as UpdateAccount's), so the
// compare of the hash and the write are atomic.
func (a *Adapter) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	return a.changeAccount(ctx, key.Provider, key.ProviderAccountID, func(cur *core.Account) (*core.Account, error) {
		return shared.SwapHash(cur, oldHash, newHash)
	})
}

// changeAccount is the compare-and-set of an account's record: follow
// the account key to the user, read the record, compute the next one
// with change (an error stops it: nothing is written), write it only if
// the record is still as read, and repeat if another writer changed it
// meanwhile. No account gives nil, nil.
func (a *Adapter) changeAccount(ctx context.Context, provider, providerAccountID string, change func(*core.Account) (*core.Account, error)) (*core.Account, error) {
	field := accountField(provider, providerAccountID)
	ptr := a.k.account(field)
	return shared.CAS(ctx, func() (*core.Account, bool, error) {
		uid, err := a.pointer(ctx, ptr)
		if shared.IsNil(err) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		hk := a.k.accounts(uid)
		old, err := a.c.HGet(ctx, hk, field).Result()
		if shared.IsNil(err) {
			// A claim not yet confirmed on a cluster, or an unlink under
			// way: no account to update.
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		acc, err := decodeAccount(old)
		if err != nil {
			return nil, false, err
		}
		next, err := change(acc)
		if err != nil {
			return next, true, err
		}
		n, err := a.s.replaceField.Run(ctx, a.c, []string{hk}, field, old, encodeAccount(next)).Int()
		if err != nil {
			return nil, false, err
		}
		return next, n == 1, nil
	})
}
