package mongoadapter

import (
	"context"
	"crypto/subtle"
	"fmt"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Second factors ([core.Factor]) are documents of their own collection
// (authport_factors by default, see [Collections]), one per factor, with
// the factor id as the _id: the server's unique _id index makes an id
// stored twice, for any user, fail with [core.ErrAlreadyExists].

// CreateFactor implements [core.FactorCreator]: a find of the user, the
// insert, and a find of the user again (see [Adapter.DeleteUser] for why
// the second one makes a concurrent deleteUser leave no orphan). An unknown
// user, or one deleted concurrently, gives an error matching
// [core.ErrNotFound] and leaves no factor; an id already stored, for any
// user, one matching [core.ErrAlreadyExists].
func (a *Adapter) CreateFactor(ctx context.Context, factor core.Factor) (*core.Factor, error) {
	f := factor.Normalize()
	return createOwned(ctx, a, core.MethodCreateFactor, a.factors, f, f.UserID, func(uid any) (bson.D, error) {
		return factorDocument(core.MethodCreateFactor, f, uid)
	})
}

// ListFactorsByUserID implements [core.FactorsByUserLister]: one find by
// userId, sorted by _id (the factor id; in Go's byte order, whatever the
// collection's collation). An unknown user gives an empty, non-nil list.
func (a *Adapter) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	uid, ok := a.userIDValue(userID)
	if !ok {
		return []core.Factor{}, nil
	}
	return decodeAll(ctx, a.factors, bson.D{{Key: fUserID, Value: uid}}, bson.D{{Key: fID, Value: 1}},
		(*factorDoc).factor, core.CompareFactors)
}

// maxSwapAttempts bounds the compare-and-sets of one SwapFactor: a refused
// one is tried again only when the factor read after it holds old's secret
// and step again (changed and changed back in between).
const maxSwapAttempts = 3

// SwapFactor implements [core.FactorSwapper]: one findOneAndUpdate whose
// filter holds the factor's _id, its userId, and old's secret and step, so
// that the server compares and writes in one step; of concurrent swaps from
// the same old value one matches, the others find nothing. It sets name,
// secret, step and lastUsedAt (removing lastUsedAt when next's is zero) and
// returns the factor as stored after the update. When the update matched
// nothing, one find by _id and userId tells a changed factor (returned,
// with an error matching [core.ErrFactorChanged]) from none (nil, nil: no
// such factor, or another user's). Where the server's updates are not
// atomic (see [Capabilities.AtomicFindAndModify]) it holds the factor's
// lock, within the process and across processes, for the update.
func (a *Adapter) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	const m = core.MethodSwapFactor
	uid, ok := a.userIDValue(old.UserID)
	if !ok {
		return nil, nil
	}
	set := bson.D{
		{Key: fName, Value: next.Name},
		{Key: fSecret, Value: secretValue(next.Secret)},
		{Key: fStep, Value: next.Step},
	}
	update := bson.D{}
	if next.LastUsedAt.IsZero() {
		update = append(update, bson.E{Key: "$unset", Value: bson.D{{Key: fLastUsedAt, Value: ""}}})
	} else {
		used, err := storedDate(m, "lastUsedAt", core.NormalizeTime(next.LastUsedAt))
		if err != nil {
			return nil, err
		}
		set = append(set, bson.E{Key: fLastUsedAt, Value: used})
	}
	update = append(bson.D{{Key: "$set", Value: set}}, update...)
	byID := bson.D{{Key: fID, Value: old.ID}, {Key: fUserID, Value: uid}}
	filter := append(bson.D{}, byID...)
	filter = append(filter, bson.E{Key: fSecret, Value: secretValue(old.Secret)}, bson.E{Key: fStep, Value: old.Step})
	for attempt := 1; ; attempt++ {
		f, err := updateRecord(ctx, a, a.factors, lockFactor, old.ID, filter, update, options.After, (*factorDoc).factor)
		if f != nil || err != nil {
			return f, err
		}
		stored, err := decodeFactor(ctx, a.factors.FindOne(ctx, byID))
		if stored == nil || err != nil {
			return nil, err
		}
		if !sameFactorState(stored, old) || attempt == maxSwapAttempts {
			return stored, fmt.Errorf("mongoadapter: the stored factor's secret or step is not the one given: %w", core.ErrFactorChanged)
		}
	}
}

// sameFactorState reports whether a stored factor holds old's secret and
// step, comparing the secrets in constant time.
func sameFactorState(stored *core.Factor, old core.Factor) bool {
	return stored.Step == old.Step && len(stored.Secret) == len(old.Secret) &&
		subtle.ConstantTimeCompare(stored.Secret, old.Secret) == 1
}

// DeleteFactor implements [core.FactorDeleter]: one findOneAndDelete by _id
// and userId, returning the deleted factor, or nil, nil when the user has
// no factor with that id (another user's is left in place). Where
// findAndModify is not atomic (FerretDB; see
// [Capabilities.AtomicFindAndModify]) it is a find and a delete instead,
// and only the call whose delete removed the factor returns it.
func (a *Adapter) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	uid, ok := a.userIDValue(userID)
	if !ok {
		return nil, nil
	}
	filter := bson.D{{Key: fID, Value: id}, {Key: fUserID, Value: uid}}
	if a.atomicFAM {
		return decodeFactor(ctx, a.factors.FindOneAndDelete(ctx, filter))
	}
	f, err := decodeFactor(ctx, a.factors.FindOne(ctx, filter))
	if f == nil || err != nil {
		return nil, err
	}
	res, err := a.factors.DeleteOne(ctx, filter)
	if err != nil {
		return nil, wrapErr(ctx, err)
	}
	if res.DeletedCount != 1 {
		return nil, nil // another call deleted it first
	}
	return f, nil
}

func decodeFactor(ctx context.Context, res *mongo.SingleResult) (*core.Factor, error) {
	return decodeOne(ctx, res, (*factorDoc).factor)
}
