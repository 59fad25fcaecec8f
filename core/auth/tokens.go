package auth

import (
	"context"

	"github.com/authport/authport/core"
)

// The account reads and the token update the oauth module's refresh
// (oauth.Flow.AccessToken) stores through. They go through the adapter's
// checked layer, as every other call of this package.

// Account returns the account key names, or nil, nil when there is none.
// It needs the adapter's getAccount.
func (a *Auth) Account(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	return call(a, "reading an account's provider tokens", func(g core.AccountGetter) (*core.Account, error) {
		return g.GetAccount(ctx, key.ProviderAccountID, key.Provider)
	})
}

// Accounts returns every account linked to the user, ordered by provider
// then provider account id; an empty list for an unknown user. It needs
// the adapter's listAccountsByUserId extension ([core.AccountsByUserLister]).
func (a *Auth) Accounts(ctx context.Context, userID string) ([]core.Account, error) {
	return call(a, "listing a user's accounts", func(l core.AccountsByUserLister) ([]core.Account, error) {
		return l.ListAccountsByUserID(ctx, userID)
	})
}

// UpdateAccountTokens stores the token fields up sets on the account it
// names (after a refresh) and returns the account as stored, or nil, nil
// when there is no such account. It needs the adapter's updateAccount
// extension ([core.AccountUpdater]).
func (a *Auth) UpdateAccountTokens(ctx context.Context, up core.AccountUpdate) (*core.Account, error) {
	return call(a, "storing refreshed provider tokens", func(u core.AccountUpdater) (*core.Account, error) {
		return u.UpdateAccount(ctx, up)
	})
}
