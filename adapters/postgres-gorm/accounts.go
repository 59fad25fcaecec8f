package gormadapter

import (
	"context"
	"database/sql"
	"errors"

	"github.com/authport/authport/core"
)

// LinkAccount implements [core.AccountLinker] with one INSERT. An unknown
// user is reported by the foreign key, as [core.ErrNotFound] (with
// [WithoutForeignKeys]: checked first, in the INSERT's transaction).
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	const m = "linkAccount"
	if err := a.enter(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if err := account.Validate(); err != nil {
		return nil, err
	}
	acc := account.Normalize()
	if err := checkUTF8(m, "userId", acc.UserID, "provider", acc.Provider,
		"providerAccountId", acc.ProviderAccountID, "access_token", deref(acc.AccessToken),
		"id_token", deref(acc.IDToken), "refresh_token", deref(acc.RefreshToken),
		"scope", deref(acc.Scope), "token_type", deref(acc.TokenType),
		"session_state", deref(acc.SessionState)); err != nil {
		return nil, err
	}
	if !detailsUTF8(acc.AuthorizationDetails) {
		return nil, &core.InputError{Method: m, Field: "authorization_details", Reason: "is not valid UTF-8"}
	}
	details, err := encodeDetails(acc.AuthorizationDetails)
	if err != nil {
		return nil, &core.InputError{Method: m, Field: "authorization_details", Reason: "cannot be encoded as JSON: " + err.Error()}
	}
	optional := [9]any{nullStr(acc.AccessToken), details, nullInt(acc.ExpiresAt), nullInt(acc.ExpiresIn),
		nullStr(acc.IDToken), nullStr(acc.RefreshToken), nullStr(acc.Scope), nullStr(acc.TokenType),
		nullStr(acc.SessionState)}
	args := make([]any, 0, 13)
	args = append(args, acc.UserID, string(acc.Type), acc.Provider, acc.ProviderAccountID)
	for i, v := range optional {
		if a.q.accountCols[i] {
			args = append(args, v)
		}
	}
	args = append(args, a.stampArgs(TableAccounts, true)...)
	if err := a.insertForUser(ctx, m, acc.UserID, a.q.linkAccount, args...); err != nil {
		return nil, err
	}
	a.dropOmitted(&acc)
	return &acc, nil
}

// dropOmitted clears the fields whose columns are omitted (see [Omit]), so
// that what LinkAccount returns is what is stored.
func (a *Adapter) dropOmitted(acc *core.Account) {
	c := a.q.accountCols
	if !c[0] {
		acc.AccessToken = nil
	}
	if !c[1] {
		acc.AuthorizationDetails = nil
	}
	if !c[2] {
		acc.ExpiresAt = nil
	}
	if !c[3] {
		acc.ExpiresIn = nil
	}
	if !c[4] {
		acc.IDToken = nil
	}
	if !c[5] {
		acc.RefreshToken = nil
	}
	if !c[6] {
		acc.Scope = nil
	}
	if !c[7] {
		acc.TokenType = nil
	}
	if !c[8] {
		acc.SessionState = nil
	}
}

// GetAccount implements [core.AccountGetter] with one SELECT.
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	const m = "getAccount"
	if err := a.enter(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if !a.d.storable(provider) || !a.d.storable(providerAccountID) {
		return nil, none(ctx, m)
	}
	var r accountRow
	err := a.queryRow(ctx, nil, a.q.getAccount, provider, providerAccountID).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	acc, err := r.account()
	if err != nil {
		return nil, a.wrap(m, err)
	}
	return acc, nil
}

// UnlinkAccount implements [core.AccountUnlinker] with one DELETE …
// RETURNING (a transaction where the dialect lacks it).
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	const m = "unlinkAccount"
	if err := a.enter(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if !a.d.storable(key.Provider) || !a.d.storable(key.ProviderAccountID) {
		return nil, none(ctx, m)
	}
	var r accountRow
	found, err := a.deleteReturning(ctx, a.q.unlinkAccount, a.q.selectAccountForUpdate, a.q.unlinkAccountPlain,
		r.dest(), key.Provider, key.ProviderAccountID)
	if keyUnusable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	if !found {
		return nil, nil
	}
	acc, err := r.account()
	if err != nil {
		return nil, a.wrap(m, err)
	}
	return acc, nil
}

// detailsUTF8 reports whether every string in ds is valid UTF-8 (JSON
// encoding would otherwise replace bad bytes, and the value would not
// read back as written).
func detailsUTF8(ds []core.AuthorizationDetail) bool {
	for _, d := range ds {
		if !validUTF8(d.Type) || !validUTF8(d.Identifier) {
			return false
		}
		for _, l := range [][]string{d.Locations, d.Actions, d.Datatypes, d.Privileges} {
			for _, s := range l {
				if !validUTF8(s) {
					return false
				}
			}
		}
	}
	return true
}
