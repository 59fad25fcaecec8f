package mongoadapter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// UnlinkAccount is unlinkAccount: one findOneAndDelete. It returns the
// deleted account, or nil, nil when there was none.
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	return decodeAccount(ctx, a.accounts.FindOneAndDelete(ctx, a.accountFilter(key)))
}

// GetAccount is getAccount: one find.
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	return decodeAccount(ctx, a.accounts.FindOne(ctx, a.accountFilter(core.AccountKey{Provider: provider, ProviderAccountID: providerAccountID})))
}

func decodeAccount(ctx context.Context, res *mongo.SingleResult) (*core.Account, error) {
	return decodeOne(ctx, res, (*accountDoc).account)
}

// ListAccountsByUserID implements [core.AccountsByUserLister]: one find by
// userId, ordered by provider, then providerAccountId (in Go's byte order,
// whatever the collection's collation). An unknown user gives an empty,
// non-nil list.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	uid, ok := a.userIDValue(userID)
	if !ok {
		return []core.Account{}, nil
	}
	return decodeAll(ctx, a.accounts, bson.D{{Key: fUserID, Value: uid}},
		bson.D{{Key: a.f.provider, Value: 1}, {Key: a.f.providerAccountID, Value: 1}}, (*accountDoc).account,
		core.CompareAccounts)
}

// UpdateAccount implements [core.AccountUpdater]: one findOneAndUpdate that
// sets ($set) only the fields given, returning the updated document (one
// find when the update sets nothing). It returns nil, nil when there is no
// such account. Where the server's updates are not atomic (see
// [Capabilities.AtomicFindAndModify]) the updates of one account are
// serialised, within the process and across processes.
func (a *Adapter) UpdateAccount(ctx context.Context, update core.AccountUpdate) (*core.Account, error) {
	var set bson.D
	add := func(key string, given bool, v any) {
		if given {
			set = append(set, bson.E{Key: key, Value: v})
		}
	}
	if a.ba {
		return a.updateAccountBA(ctx, update)
	}
	add(fAccessToken, update.AccessToken.Set, update.AccessToken.Value)
	add(fAuthorizationDetails, update.AuthorizationDetails.Set, detailsValue(update.AuthorizationDetails.Value))
	add(fExpiresAt, update.ExpiresAt.Set, update.ExpiresAt.Value)
	add(fExpiresIn, update.ExpiresIn.Set, update.ExpiresIn.Value)
	add(fIDToken, update.IDToken.Set, update.IDToken.Value)
	add(fRefreshToken, update.RefreshToken.Set, update.RefreshToken.Value)
	add(fScope, update.Scope.Set, update.Scope.Value)
	add(fTokenType, update.TokenType.Set, core.NormalizeTokenType(update.TokenType.Value))
	add(fSessionState, update.SessionState.Set, update.SessionState.Value)
	key := core.AccountKey{Provider: update.Provider, ProviderAccountID: update.ProviderAccountID}
	return updateRecord(ctx, a, a.accounts, lockAccount, accountLockKey(key), a.accountFilter(key), setFields(set), options.After, (*accountDoc).account)
}

// updateAccountBA is UpdateAccount with [BetterAuth]: Better Auth's field
// names, the expiry as the date accessTokenExpiresAt, and updatedAt set
// with any change. authport's own fields (expiresIn, tokenType,
// sessionState, authorizationDetails) are removed when set to nil, as they
// are absent for none.
func (a *Adapter) updateAccountBA(ctx context.Context, update core.AccountUpdate) (*core.Account, error) {
	var set, unset bson.D
	add := func(key string, given bool, v any) {
		if given {
			set = append(set, bson.E{Key: key, Value: v})
		}
	}
	add(baAccessToken, update.AccessToken.Set, update.AccessToken.Value)
	if update.ExpiresAt.Set {
		exp, err := expiresAtDate(core.MethodUpdateAccount, update.ExpiresAt.Value)
		if err != nil {
			return nil, err
		}
		add(baAccessTokenExpiresAt, true, exp)
	}
	add(baIDToken, update.IDToken.Set, update.IDToken.Value)
	add(baRefreshToken, update.RefreshToken.Set, update.RefreshToken.Value)
	add(fScope, update.Scope.Set, update.Scope.Value)
	own := func(key string, given, none bool, v any) {
		switch {
		case !given:
		case none:
			unset = append(unset, bson.E{Key: key, Value: ""})
		default:
			set = append(set, bson.E{Key: key, Value: v})
		}
	}
	own(baExpiresIn, update.ExpiresIn.Set, update.ExpiresIn.Value == nil, update.ExpiresIn.Value)
	tt := core.NormalizeTokenType(update.TokenType.Value)
	own(baTokenType, update.TokenType.Set, tt == nil, tt)
	own(baSessionState, update.SessionState.Set, update.SessionState.Value == nil, update.SessionState.Value)
	own(baAuthorizationDetails, update.AuthorizationDetails.Set, update.AuthorizationDetails.Value == nil,
		detailsValue(update.AuthorizationDetails.Value))
	upd := setFields(set)
	if len(set)+len(unset) > 0 {
		upd = setFields(append(set, bson.E{Key: fUpdatedAt, Value: a.nowDate()}))
	}
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	key := core.AccountKey{Provider: update.Provider, ProviderAccountID: update.ProviderAccountID}
	return updateRecord(ctx, a, a.accounts, lockAccount, accountLockKey(key), a.accountFilter(key), upd, options.After, (*accountDoc).account)
}

// SwapPasswordHash implements [core.PasswordHashSwapper]: one
// findOneAndUpdate of the account whose password field is oldHash (absent
// or null for ""), setting it to newHash and returning the updated
// document. When it matches nothing, one find tells a changed hash (the
// stored account and an error matching [core.ErrPasswordHashChanged]) from
// no account (nil, nil). Where the server's updates are not atomic (see
// [Capabilities.AtomicFindAndModify]) it holds the account's lock, as
// UpdateAccount does, so that the comparison and the write are one step
// for every writer of the hash.
func (a *Adapter) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	var old any // null matches an absent field too
	if oldHash != "" {
		old = oldHash
	}
	filter := append(a.accountFilter(key), bson.E{Key: fPassword, Value: old})
	set := bson.D{{Key: fPassword, Value: newHash}}
	if a.ba {
		set = append(set, bson.E{Key: fUpdatedAt, Value: a.nowDate()})
	}
	update := setFields(set)
	acc, err := updateRecord(ctx, a, a.accounts, lockAccount, accountLockKey(key), filter, update, options.After, (*accountDoc).account)
	if acc != nil || err != nil {
		return acc, err
	}
	stored, err := decodeAccount(ctx, a.accounts.FindOne(ctx, a.accountFilter(key)))
	if stored == nil || err != nil {
		return nil, err
	}
	return stored, fmt.Errorf("mongoadapter: the stored password hash is not the one given: %w", core.ErrPasswordHashChanged)
}

// accountFilter matches the account named by key.
func (a *Adapter) accountFilter(key core.AccountKey) bson.D {
	return bson.D{{Key: a.f.provider, Value: key.Provider}, {Key: a.f.providerAccountID, Value: key.ProviderAccountID}}
}

// accountLockKey is the key of an account's lock (see [recordLocks]):
// unambiguous, the provider's length first.
func accountLockKey(key core.AccountKey) string {
	return strconv.Itoa(len(key.Provider)) + ":" + key.Provider + key.ProviderAccountID
}
