package mongoadapter

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// GetAuthenticator is getAuthenticator: one find.
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	return decodeAuthenticator(ctx, a.authenticators.FindOne(ctx, bson.D{{Key: fCredentialID, Value: credentialID}}))
}

// ListAuthenticatorsByUserID is listAuthenticatorsByUserId: one find,
// sorted by credentialID. An unknown user gives an empty, non-nil list.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	uid, ok := a.userIDValue(userID)
	if !ok {
		return []core.Authenticator{}, nil
	}
	return decodeAll(ctx, a.authenticators, bson.D{{Key: fUserID, Value: uid}}, bson.D{{Key: fCredentialID, Value: 1}},
		(*authenticatorDoc).authenticator,
		core.CompareAuthenticators)
}

// UpdateAuthenticatorCounter is updateAuthenticatorCounter: one
// findOneAndUpdate returning the updated document. An unknown credential id
// gives an error matching [core.ErrNotFound]. Where the server's updates are not atomic (see
// [Capabilities.AtomicFindAndModify]) the updates of one authenticator are
// serialised, within the process and across processes.
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	au, err := a.setCounter(ctx, bson.D{{Key: fCredentialID, Value: credentialID}}, credentialID, newCounter)
	if au == nil && err == nil {
		return nil, fmt.Errorf("no authenticator with this credential id: %w", core.ErrNotFound)
	}
	return au, err
}

// setCounter sets the counter of the authenticator with the credential id
// that filter matches (see updateRecord).
func (a *Adapter) setCounter(ctx context.Context, filter bson.D, credentialID string, counter int64) (*core.Authenticator, error) {
	return updateRecord(ctx, a, a.authenticators, lockAuthenticator, credentialID, filter,
		setFields(bson.D{{Key: fCounter, Value: counter}}), options.After, (*authenticatorDoc).authenticator)
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
		au, err := a.setCounter(ctx, append(byID, bson.E{Key: fCounter, Value: bson.D{{Key: "$lt", Value: newCounter}}}), credentialID, newCounter)
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
	return decodeOne(ctx, res, (*authenticatorDoc).authenticator)
}
