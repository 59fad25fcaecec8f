package redisadapter

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
)

// LinkAccount implements [core.AccountLinker]: one script on a single
// node; claim, write, confirm on a cluster.
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	if a.u != nil {
		return a.u.linkAccount(ctx, account)
	}
	const m = core.MethodLinkAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := account.Validate(); err != nil {
		return nil, err
	}
	acc := account.Normalize()
	field := accountField(acc.Provider, acc.ProviderAccountID)
	ptr := a.k.account(field)
	value := encodeAccount(&acc)
	var res string
	var err error
	if !a.cluster {
		res, err = a.s.attach.Run(ctx, a.c, []string{a.k.user(acc.UserID), a.k.accounts(acc.UserID), ptr},
			a.k.p, "S", escape(acc.UserID), field, value).Text()
	} else {
		res, err = a.attachCluster(ctx, ptr, acc.UserID, a.k.accounts(acc.UserID), field, value)
	}
	switch {
	case err != nil:
		return nil, wrap(m, err)
	case res == "notfound":
		return nil, fmt.Errorf("%s: user %q: %w", m, acc.UserID, core.ErrNotFound)
	case res != "ok":
		return nil, fmt.Errorf("%s: account (%q, %q): %w", m, acc.Provider, acc.ProviderAccountID, core.ErrAlreadyExists)
	}
	return &acc, nil
}

// UnlinkAccount implements [core.AccountUnlinker].
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	if a.u != nil {
		return a.u.unlinkAccount(ctx, key)
	}
	const m = core.MethodUnlinkAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if key.Provider == "" || key.ProviderAccountID == "" {
		return nil, nil
	}
	field := accountField(key.Provider, key.ProviderAccountID)
	ptr := a.k.account(field)
	v, uid, err := a.follow(ctx, a.s.unlinkAccount, ptr, field)
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(m, err)
	}
	s, ok := v.(string)
	if !ok {
		return nil, wrap(m, errCorrupt)
	}
	if a.cluster {
		// The record is gone from the user's slot; now the pointer.
		if err := a.release(ctx, ptr, uid); err != nil {
			return nil, wrap(m, err)
		}
	}
	acc, err := decodeAccount(s)
	if err != nil {
		return nil, wrap(m, err)
	}
	return normalizeRead(acc), nil
}

// GetAccount implements [core.AccountGetter].
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	if a.u != nil {
		return a.u.getAccount(ctx, providerAccountID, provider)
	}
	const m = core.MethodGetAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if provider == "" || providerAccountID == "" {
		return nil, nil
	}
	field := accountField(provider, providerAccountID)
	v, _, err := a.follow(ctx, a.s.getAccount, a.k.account(field), field)
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(m, err)
	}
	s, ok := v.(string)
	if !ok {
		return nil, wrap(m, errCorrupt)
	}
	acc, err := decodeAccount(s)
	if err != nil {
		return nil, wrap(m, err)
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
