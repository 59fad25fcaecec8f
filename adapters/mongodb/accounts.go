package mongoadapter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// LinkAccount is linkAccount: a find of the user, the insert, and a find of
// the user again (see [Adapter.DeleteUser] for why the second one makes a
// concurrent deleteUser leave no orphan). An unknown user, or one deleted
// concurrently, gives an error matching [core.ErrNotFound] and leaves no
// account; an existing (provider, providerAccountId), once
// [Adapter.Migrate] has run, one matching [core.ErrAlreadyExists].
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	acc := account.Normalize()
	return createOwned(ctx, a, core.MethodLinkAccount, a.accounts, acc, acc.UserID, func(uid any) (bson.D, error) {
		return accountDocument(acc, uid), nil
	})
}

// createOwned stores r, a record of the user with the id userID, into coll
// as the document that doc builds from the stored user id, so that it never
// outlives the user (see [Adapter.insertOwned]), and returns r. A user id
// that cannot be stored, or a document doc refuses, is an error of method
// m.
func createOwned[R any](ctx context.Context, a *Adapter, m core.Method, coll *mongo.Collection, r R, userID string, doc func(uid any) (bson.D, error)) (*R, error) {
	uid, err := a.storedUserID(m, "userId", userID)
	if err != nil {
		return nil, err
	}
	d, err := doc(uid)
	if err != nil {
		return nil, err
	}
	if err := a.insertOwned(ctx, coll, uid, d); err != nil {
		return nil, err
	}
	return &r, nil
}

// insertOwned inserts doc, a record of the user with the stored id uid,
// into coll so that it never outlives the user: it checks that the user
// exists, inserts, and then reads the user again (from the primary). If the
// user is gone by then, a deleteUser ran concurrently and may have swept
// the user's records before the insert landed: insertOwned deletes the
// record it inserted and returns an error matching [core.ErrNotFound]. If
// the user is still there, the insert was complete before the user's
// deletion, so the sweep that deleteUser runs after removing the user will
// find it. A failure after the insert also deletes the record again, so
// that a failed write changes nothing.
func (a *Adapter) insertOwned(ctx context.Context, coll *mongo.Collection, uid any, doc bson.D) error {
	if err := a.requireUser(ctx, uid); err != nil {
		return err
	}
	res, err := coll.InsertOne(ctx, doc)
	if err != nil {
		return wrapErr(ctx, err)
	}
	ok, err := a.userExistsOnPrimary(ctx, uid)
	if err == nil && ok {
		return nil
	}
	var cause error
	if err != nil {
		cause = wrapErr(ctx, err)
	} else {
		cause = fmt.Errorf("user deleted concurrently: %w", core.ErrNotFound)
	}
	// Undo the insert even when ctx has ended, bounded by its own timeout.
	derr := undo(ctx, func(ctx context.Context) error {
		_, err := coll.DeleteOne(ctx, bson.D{{Key: fID, Value: res.InsertedID}})
		return err
	})
	if derr != nil {
		return errors.Join(cause, fmt.Errorf("removing the record just inserted: %w", derr))
	}
	return cause
}

// undoTimeout bounds the removal of a record insertOwned must take back.
const undoTimeout = 10 * time.Second

// undo runs f, which takes back a write, with a context that the end of
// ctx does not cancel, bounded by undoTimeout, and waits for it until it is
// done or ctx ends, whichever comes first: the call never outlives its
// context (tools/faults found calls returning up to 1.5 s after their
// deadline while an undo waited for a reset server), and an undo cut short
// by it goes on in the background.
func undo(ctx context.Context, f func(context.Context) error) error {
	done := make(chan error, 1)
	go func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		done <- f(uctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("still running when the call's context ended (it goes on for at most %v): %w", undoTimeout, ctx.Err())
	}
}

// requireUser returns an error matching [core.ErrNotFound] when the user
// with the stored id v does not exist.
func (a *Adapter) requireUser(ctx context.Context, v any) error {
	ok, err := a.userExists(ctx, v)
	if err != nil {
		return wrapErr(ctx, err)
	}
	if !ok {
		return fmt.Errorf("user: %w", core.ErrNotFound)
	}
	return nil
}

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
		func(x, y core.Account) int {
			return cmp.Or(strings.Compare(x.Provider, y.Provider), strings.Compare(x.ProviderAccountID, y.ProviderAccountID))
		})
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
