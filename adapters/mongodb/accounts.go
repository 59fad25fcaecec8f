package mongoadapter

import (
	"context"
	"strconv"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// UnlinkAccount is unlinkAccount: one findOneAndDelete. It returns the
// deleted account, or nil, nil when there was none.
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	filter := bson.D{{Key: fProvider, Value: key.Provider}, {Key: fProviderAccountID, Value: key.ProviderAccountID}}
	return decodeAccount(ctx, a.accounts.FindOneAndDelete(ctx, filter))
}

// GetAccount is getAccount: one find.
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	filter := bson.D{{Key: fProvider, Value: provider}, {Key: fProviderAccountID, Value: providerAccountID}}
	return decodeAccount(ctx, a.accounts.FindOne(ctx, filter))
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
		bson.D{{Key: fProvider, Value: 1}, {Key: fProviderAccountID, Value: 1}}, (*accountDoc).account,
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
	add(fAccessToken, update.AccessToken.Set, update.AccessToken.Value)
	add(fAuthorizationDetails, update.AuthorizationDetails.Set, detailsValue(update.AuthorizationDetails.Value))
	add(fExpiresAt, update.ExpiresAt.Set, update.ExpiresAt.Value)
	add(fExpiresIn, update.ExpiresIn.Set, update.ExpiresIn.Value)
	add(fIDToken, update.IDToken.Set, update.IDToken.Value)
	add(fRefreshToken, update.RefreshToken.Set, update.RefreshToken.Value)
	add(fScope, update.Scope.Set, update.Scope.Value)
	add(fTokenType, update.TokenType.Set, core.NormalizeTokenType(update.TokenType.Value))
	add(fSessionState, update.SessionState.Set, update.SessionState.Value)
	filter := bson.D{{Key: fProvider, Value: update.Provider}, {Key: fProviderAccountID, Value: update.ProviderAccountID}}
	key := strconv.Itoa(len(update.Provider)) + ":" + update.Provider + update.ProviderAccountID
	return updateRecord(ctx, a, a.accounts, lockAccount, key, filter, setFields(set), options.After, (*accountDoc).account)
}
