package bboltadapter

import (
	"context"
	"crypto/subtle"
	"fmt"
	"slices"

	"github.com/authport/authport/core"
)

// LinkAccount implements linkAccount: the account and its user index entry
// are written in one transaction, after checking that the user exists.
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	acc := account.Normalize()
	return createOwned(ctx, a, acc.Clone(), acc.UserID, accountKey(acc.Provider, acc.ProviderAccountID), encodeAccount(&acc),
		bucketAccounts, bucketUserAccounts, "account (provider, providerAccountId) already linked")
}

// UnlinkAccount implements unlinkAccount.
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	k := accountKey(key.Provider, key.ProviderAccountID)
	acc, err := writeFound(ctx, a, func(b *buckets) (*core.Account, error) { return getRecord(b.accounts, k, decodeAccount) },
		func(b *buckets, acc *core.Account) (*core.Account, error) {
			if err := b.userAccounts.Delete(ownerKey(acc.UserID, k)); err != nil {
				return nil, err
			}
			if err := b.accounts.Delete(k); err != nil {
				return nil, err
			}
			return acc, nil
		})
	return normalizeRead(acc), err
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
	acc, err := getOne(ctx, a, bucketAccounts, accountKey(provider, providerAccountID), decodeAccount)
	return normalizeRead(acc), err
}

// ListAccountsByUserID implements [core.AccountsByUserLister]: one prefix
// scan of the user's index entries in a read transaction, ordered by
// provider, then providerAccountId. An unknown user gives an empty, non-nil
// list.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	out, err := listOwned(ctx, a, bucketUserAccounts, bucketAccounts, userID, decodeAccount, nil)
	if err != nil {
		return nil, err
	}
	for i := range out {
		normalizeRead(&out[i])
	}
	// Index keys are length-prefixed, so they are not in provider order.
	slices.SortFunc(out, core.CompareAccounts)
	return out, nil
}

// UpdateAccount implements [core.AccountUpdater]: it reads, changes the set
// fields of, and writes the account in one write transaction. It returns
// nil, nil when there is no such account.
func (a *Adapter) UpdateAccount(ctx context.Context, update core.AccountUpdate) (*core.Account, error) {
	k := accountKey(update.Provider, update.ProviderAccountID)
	return writeFound(ctx, a, func(b *buckets) (*core.Account, error) { return getRecord(b.accounts, k, decodeAccount) },
		func(b *buckets, old *core.Account) (*core.Account, error) {
			acc := update.Apply(*old)
			if err := b.accounts.Put(k, encodeAccount(&acc)); err != nil {
				return nil, err
			}
			return &acc, nil
		})
}

// SwapPasswordHash implements [core.PasswordHashSwapper]: in one write
// transaction it reads the account, compares its stored hash ("" for none)
// with oldHash in constant time and, when they are equal, stores newHash.
// When they differ it writes nothing and returns the stored account and an
// error matching [core.ErrPasswordHashChanged]; with no such account it
// returns nil, nil. bbolt runs one write transaction at a time, so of
// several swaps from one hash exactly one succeeds.
func (a *Adapter) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	type swapped struct {
		acc     *core.Account
		changed bool // the stored hash was not oldHash: nothing written
	}
	k := accountKey(key.Provider, key.ProviderAccountID)
	// A mismatch is a result, not an error of the transaction, so that the
	// stored account comes back (and a group commit does not rerun it).
	out, err := writeFound(ctx, a, func(b *buckets) (*core.Account, error) { return getRecord(b.accounts, k, decodeAccount) },
		func(b *buckets, acc *core.Account) (swapped, error) {
			stored := ""
			if acc.PasswordHash != nil {
				stored = *acc.PasswordHash
			}
			if subtle.ConstantTimeCompare([]byte(stored), []byte(oldHash)) != 1 {
				return swapped{acc, true}, nil
			}
			acc.PasswordHash = &newHash
			if err := b.accounts.Put(k, encodeAccount(acc)); err != nil {
				return swapped{}, err
			}
			return swapped{acc, false}, nil
		})
	if err != nil {
		return nil, err
	}
	if out.changed {
		return normalizeRead(out.acc), fmt.Errorf("the stored hash is not the one expected: read the account again: %w", core.ErrPasswordHashChanged)
	}
	return normalizeRead(out.acc), nil
}
