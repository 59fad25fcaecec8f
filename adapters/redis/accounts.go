package redisadapter

import (
	"cmp"
	"context"
	"fmt"
	"github.com/authport/authport/adapters/redis/internal/shared"
	"slices"
	"strings"

	"github.com/authport/authport/core"
)

// LinkAccount implements [core.AccountLinker]: one script on a single
// node; claim, write, confirm on a cluster.
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	const m = core.MethodLinkAccount
	acc := account.Normalize()
	field := accountField(acc.Provider, acc.ProviderAccountID)
	ptr := a.k.account(field)
	value := encodeAccount(&acc)
	var res string
	var err error
	if !a.cluster {
		res, err = a.s.attach.Run(ctx, a.c, []string{a.k.user(acc.UserID), a.k.accounts(acc.UserID), ptr},
			a.k.p, "S", shared.Escape(acc.UserID), field, value).Text()
	} else {
		res, err = a.attachCluster(ctx, ptr, acc.UserID, a.k.accounts(acc.UserID), field, value)
	}
	switch {
	case err != nil:
		return nil, err
	case res == "notfound":
		return nil, fmt.Errorf("user %q: %w", acc.UserID, core.ErrNotFound)
	case res != "ok":
		return nil, fmt.Errorf("account (%q, %q): %w", acc.Provider, acc.ProviderAccountID, core.ErrAlreadyExists)
	}
	return &acc, nil
}

// UnlinkAccount implements [core.AccountUnlinker].
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	const m = core.MethodUnlinkAccount
	field := accountField(key.Provider, key.ProviderAccountID)
	ptr := a.k.account(field)
	v, uid, err := a.follow(ctx, a.s.unlinkAccount, ptr, field)
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, shared.ErrCorrupt
	}
	if a.cluster {
		// The record is gone from the user's slot; now the pointer.
		if err := a.release(ctx, ptr, uid); err != nil {
			return nil, err
		}
	}
	acc, err := decodeAccount(s)
	if err != nil {
		return nil, err
	}
	return normalizeRead(acc), nil
}

// GetAccount implements [core.AccountGetter].
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	const m = core.MethodGetAccount
	if provider == "" || providerAccountID == "" {
		return nil, nil
	}
	field := accountField(provider, providerAccountID)
	v, _, err := a.follow(ctx, a.s.getAccount, a.k.account(field), field)
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, shared.ErrCorrupt
	}
	acc, err := decodeAccount(s)
	if err != nil {
		return nil, err
	}
	return normalizeRead(acc), nil
}

// normalizeRead lowercases the token_type of an account read from Redis:
// this adapter stores it lowercased, but another program writing the same
// keys may not have.
func normalizeRead(acc *core.Account) *core.Account {
	acc.TokenType = core.NormalizeTokenType(acc.TokenType)
	return acc
}

// ListAccountsByUserID implements [core.AccountsByUserLister] with one
// HVALS of the user's accounts hash.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	vals, err := a.c.HVals(ctx, a.k.accounts(userID)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]core.Account, 0, len(vals))
	for _, v := range vals {
		acc, err := decodeAccount(v)
		if err != nil {
			return nil, err
		}
		out = append(out, *acc)
	}
	slices.SortFunc(out, func(x, y core.Account) int {
		return cmp.Or(strings.Compare(x.Provider, y.Provider), strings.Compare(x.ProviderAccountID, y.ProviderAccountID))
	})
	return out, nil
}

// UpdateAccount implements [core.AccountUpdater]: it follows the account
// key to the user, reads the account from the user's accounts hash, and
// writes the updated account back only if it is still as read (a
// compare-and-set in the user's slot, repeated if another writer changed
// it meanwhile).
func (a *Adapter) UpdateAccount(ctx context.Context, up core.AccountUpdate) (*core.Account, error) {
	field := accountField(up.Provider, up.ProviderAccountID)
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
		next := up.Apply(*acc)
		n, err := a.s.replaceField.Run(ctx, a.c, []string{hk}, field, old, encodeAccount(&next)).Int()
		if err != nil {
			return nil, false, err
		}
		return &next, n == 1, nil
	})
}
