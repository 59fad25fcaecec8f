package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// CreateAuthenticator is createAuthenticator: a find of the user, the
// insert, and a find of the user again (see [Adapter.DeleteUser] for why the
// second one makes a concurrent deleteUser leave no orphan). An unknown
// user, or one deleted concurrently, gives an error matching
// [core.ErrNotFound] and leaves no authenticator; an existing credential id,
// once [Adapter.Migrate] has run, one matching [core.ErrAlreadyExists].
func (a *Adapter) CreateAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	au := authenticator.Clone()
	uid, ok := a.userIDValue(au.UserID)
	if !ok {
		return nil, &core.InputError{Method: string(core.MethodCreateAuthenticator), Field: "userId", Reason: "is not an ObjectId in hexadecimal (WithObjectIDs)"}
	}
	doc := bson.D{
		{Key: fCredentialID, Value: au.CredentialID},
		{Key: fUserID, Value: uid},
		{Key: fProviderAccountID, Value: au.ProviderAccountID},
		{Key: fCredentialPublicKey, Value: au.CredentialPublicKey},
		{Key: fCounter, Value: au.Counter},
		{Key: fCredentialBackedUp, Value: au.CredentialBackedUp},
		{Key: fCredentialDeviceType, Value: au.CredentialDeviceType},
		{Key: fTransports, Value: au.Transports},
	}
	if err := a.insertOwned(ctx, a.authenticators, uid, doc); err != nil {
		return nil, err
	}
	return &au, nil
}

// GetAuthenticator is getAuthenticator: one find.
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	return decodeAuthenticator(ctx, a.authenticators.FindOne(ctx, bson.D{{Key: fCredentialID, Value: credentialID}}))
}

// ListAuthenticatorsByUserID is listAuthenticatorsByUserId: one find,
// sorted by credentialID. An unknown user gives an empty, non-nil list.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	out := []core.Authenticator{}
	uid, ok := a.userIDValue(userID)
	if !ok {
		return out, nil
	}
	docs, err := findAll[authenticatorDoc](ctx, a.authenticators, bson.D{{Key: fUserID, Value: uid}}, bson.D{{Key: fCredentialID, Value: 1}})
	if err != nil {
		return nil, err
	}
	for i := range docs {
		au, err := docs[i].authenticator()
		if err != nil {
			return nil, err
		}
		out = append(out, *au)
	}
	// The server sorts by binary string comparison unless the collection
	// has a collation; make the order Go's byte order either way.
	cmp := func(x, y core.Authenticator) int { return strings.Compare(x.CredentialID, y.CredentialID) }
	if !slices.IsSortedFunc(out, cmp) {
		slices.SortFunc(out, cmp)
	}
	return out, nil
}

// UpdateAuthenticatorCounter is updateAuthenticatorCounter: one
// findOneAndUpdate returning the updated document. An unknown credential id
// gives an error matching [core.ErrNotFound]. Where the server's updates are not atomic (see
// [Capabilities.AtomicFindAndModify]) the updates of one authenticator are
// serialised, within the process and across processes.
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	unlock, err := a.locks.lock(ctx, lockAuthenticator, credentialID)
	if err != nil {
		return nil, wrapErr(ctx, err)
	}
	res := a.authenticators.FindOneAndUpdate(ctx, bson.D{{Key: fCredentialID, Value: credentialID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: fCounter, Value: newCounter}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After))
	unlock()
	au, err := decodeAuthenticator(ctx, res)
	if err != nil {
		return nil, err
	}
	if au == nil {
		return nil, fmt.Errorf("no authenticator with this credential id: %w", core.ErrNotFound)
	}
	return au, nil
}

// AdvanceAuthenticatorCounter implements
// [core.AuthenticatorCounterAdvancer]: one findOneAndUpdate whose filter
// holds the condition (counter below the new one), so the server applies
// the check and the update together; of concurrent calls with the same
// counter one matches and the others find nothing. When nothing matched, a
// find tells an unknown credential ([core.ErrNotFound]) from a counter that
// did not increase ([core.ErrCounterNotIncreased]). A new counter of 0 is
// only read: it passes when the stored counter is 0 too. Where the server's
// updates are not atomic (FerretDB, see [Capabilities.AtomicFindAndModify])
// the updates of one authenticator are serialised, across processes too.
func (a *Adapter) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	byID := bson.D{{Key: fCredentialID, Value: credentialID}}
	if newCounter > 0 {
		unlock, err := a.locks.lock(ctx, lockAuthenticator, credentialID)
		if err != nil {
			return nil, wrapErr(ctx, err)
		}
		res := a.authenticators.FindOneAndUpdate(ctx,
			bson.D{{Key: fCredentialID, Value: credentialID}, {Key: fCounter, Value: bson.D{{Key: "$lt", Value: newCounter}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: fCounter, Value: newCounter}}}},
			options.FindOneAndUpdate().SetReturnDocument(options.After))
		unlock()
		au, err := decodeAuthenticator(ctx, res)
		if err != nil || au != nil {
			return au, err
		}
	}
	au, err := decodeAuthenticator(ctx, a.authenticators.FindOne(ctx, byID))
	switch {
	case err != nil:
		return nil, err
	case au == nil:
		return nil, fmt.Errorf("credential id %q: %w", credentialID, core.ErrNotFound)
	case !core.CounterAdvances(au.Counter, newCounter) || newCounter != 0:
		// A positive counter that did not match the update's filter: the
		// stored one is not below it (the find may see a later value).
		return nil, fmt.Errorf("stored %d, reported %d: %w", au.Counter, newCounter, core.ErrCounterNotIncreased)
	}
	return au, nil
}

func decodeAuthenticator(ctx context.Context, res *mongo.SingleResult) (*core.Authenticator, error) {
	var doc authenticatorDoc
	if err := res.Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		return nil, wrapErr(ctx, err)
	}
	au, err := doc.authenticator()
	if err != nil {
		return nil, err
	}
	return au, nil
}
