package mongoadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// LinkAccount is linkAccount: a find of the user, then an insert. An unknown
// user gives an error matching [core.ErrNotFound]; an existing (provider,
// providerAccountId), once [Adapter.EnsureIndexes] has run, one matching
// [core.ErrAlreadyExists].
//
// The check and the insert are two commands: a user deleted between them
// leaves an account that lets nobody in (getUserByAccount joins it to its
// user) and that the next deleteUser of that id removes.
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	const m = "linkAccount"
	if err := started(ctx, m); err != nil {
		return nil, err
	}
	if err := account.Validate(); err != nil {
		return nil, err
	}
	acc := account.Normalize()
	uid, ok := a.userIDValue(acc.UserID)
	if !ok {
		return nil, &core.InputError{Method: m, Field: "userId", Reason: "is not an ObjectId in hexadecimal (WithObjectIDs)"}
	}
	doc, err := a.accountDocument(acc, uid)
	if err != nil {
		return nil, err
	}
	if err := a.requireUser(ctx, m, uid); err != nil {
		return nil, err
	}
	if _, err := a.accounts.InsertOne(ctx, doc); err != nil {
		return nil, wrapErr(ctx, m, err)
	}
	return &acc, nil
}

// requireUser returns an error matching [core.ErrNotFound] when the user
// with the stored id v does not exist.
func (a *Adapter) requireUser(ctx context.Context, m string, v any) error {
	ok, err := a.userExists(ctx, v)
	if err != nil {
		return wrapErr(ctx, m, err)
	}
	if !ok {
		return fmt.Errorf("%s: user: %w", m, core.ErrNotFound)
	}
	return nil
}

// UnlinkAccount is unlinkAccount: one findOneAndDelete. It returns the
// deleted account, or nil, nil when there was none.
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	const m = "unlinkAccount"
	if err := started(ctx, m); err != nil {
		return nil, err
	}
	if !validKey(key.Provider, key.ProviderAccountID) {
		return nil, nil
	}
	filter := bson.D{{Key: fProvider, Value: key.Provider}, {Key: fProviderAccountID, Value: key.ProviderAccountID}}
	return decodeAccount(ctx, m, a.accounts.FindOneAndDelete(ctx, filter))
}

// GetAccount is getAccount: one find.
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	const m = "getAccount"
	if err := started(ctx, m); err != nil {
		return nil, err
	}
	if !validKey(provider, providerAccountID) {
		return nil, nil
	}
	filter := bson.D{{Key: fProvider, Value: provider}, {Key: fProviderAccountID, Value: providerAccountID}}
	return decodeAccount(ctx, m, a.accounts.FindOne(ctx, filter))
}

func decodeAccount(ctx context.Context, m string, res *mongo.SingleResult) (*core.Account, error) {
	var doc accountDoc
	if err := res.Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		return nil, wrapErr(ctx, m, err)
	}
	acc, err := doc.account()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m, err)
	}
	return acc, nil
}
