package mongoadapter

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The reads every record type shares: one document found, several found,
// and a record joined to its user.

// findDoc decodes the document res found into a D, or returns nil, nil
// when it found none.
func findDoc[D any](ctx context.Context, res *mongo.SingleResult) (*D, error) {
	var doc D
	if err := res.Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		return nil, wrapErr(ctx, err)
	}
	return &doc, nil
}

// decodeOne converts the document res found, stored as a D, with conv, or
// returns nil, nil when it found none.
func decodeOne[D, R any](ctx context.Context, res *mongo.SingleResult, conv func(*D) (*R, error)) (*R, error) {
	doc, err := findDoc[D](ctx, res)
	if doc == nil || err != nil {
		return nil, err
	}
	return conv(doc)
}

// decodeAll finds the documents of coll that match filter, in the order of
// sort, converts each, stored as a D, with conv, and returns them in the
// order of cmp: the server sorts by binary string comparison unless the
// collection has a collation, so cmp makes the order Go's byte order
// either way. No match gives an empty, non-nil list.
func decodeAll[D, R any](ctx context.Context, coll *mongo.Collection, filter, sort bson.D, conv func(*D) (*R, error), cmp func(x, y R) int) ([]R, error) {
	cur, err := coll.Find(ctx, filter, options.Find().SetSort(sort))
	if err != nil {
		return nil, wrapErr(ctx, err)
	}
	var docs []D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrapErr(ctx, err)
	}
	out := make([]R, 0, len(docs))
	for i := range docs {
		r, err := conv(&docs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	if !slices.IsSortedFunc(out, cmp) {
		slices.SortFunc(out, cmp)
	}
	return out, nil
}

// lookupUser runs one aggregation on coll: the first document matching
// match, joined by its userId to its user (an array in fJoinedUser, empty
// when the user is gone), then the stages after, and decodes the result
// into out. It needs $lookup (see [Capabilities.Lookup]).
func (a *Adapter) lookupUser(ctx context.Context, coll *mongo.Collection, match bson.D, out any, after ...bson.D) error {
	pipeline := append(mongo.Pipeline{
		{{Key: "$match", Value: match}},
		{{Key: "$limit", Value: 1}},
		{{Key: "$lookup", Value: bson.D{
			{Key: "from", Value: a.names.Users},
			{Key: "localField", Value: fUserID},
			{Key: "foreignField", Value: fID},
			{Key: "as", Value: fJoinedUser},
		}}},
	}, after...)
	cur, err := coll.Aggregate(ctx, pipeline)
	if err != nil {
		return wrapErr(ctx, err)
	}
	if err := cur.All(ctx, out); err != nil {
		return wrapErr(ctx, err)
	}
	return nil
}

// idExists reports whether coll has a document with the _id v: one find
// that returns only the _id.
func idExists(ctx context.Context, coll *mongo.Collection, v any) (bool, error) {
	err := coll.FindOne(ctx, bson.D{{Key: fID, Value: v}},
		options.FindOne().SetProjection(bson.D{{Key: fID, Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

// storedUserID returns the stored form of a user id (see
// [Adapter.userIDValue]), or an [*core.InputError] of method m naming field
// when the id cannot be stored.
func (a *Adapter) storedUserID(m core.Method, field, id string) (any, error) {
	v, ok := a.userIDValue(id)
	if !ok {
		return nil, &core.InputError{Method: string(m), Field: field, Reason: "is not an ObjectId in hexadecimal (WithObjectIDs)"}
	}
	return v, nil
}

// storedDate returns the stored form of a time (see [date]), or an
// [*core.InputError] of method m naming field when BSON cannot hold it.
func storedDate(m core.Method, field string, t time.Time) (bson.DateTime, error) {
	d, ok := date(t)
	if !ok {
		return 0, &core.InputError{Method: string(m), Field: field, Reason: "is out of the range of BSON dates"}
	}
	return d, nil
}

// updateRecord applies update to the document of coll that filter matches,
// in one findOneAndUpdate, and converts the document, stored as a D, with
// conv: as it is after the update, or as it was before with ret
// options.Before; nil, nil when filter matched nothing. An empty update is
// one find. Where the server's updates are not atomic (see
// [Capabilities.AtomicFindAndModify]) it holds the lock of the record
// (kind, key) for the update (see [recordLocks]).
func updateRecord[D, R any](ctx context.Context, a *Adapter, coll *mongo.Collection, kind byte, key string,
	filter, update bson.D, ret options.ReturnDocument, conv func(*D) (*R, error)) (*R, error) {
	if len(update) == 0 {
		return decodeOne(ctx, coll.FindOne(ctx, filter), conv)
	}
	unlock, err := a.locks.lock(ctx, kind, key)
	if err != nil {
		return nil, wrapErr(ctx, err)
	}
	res := coll.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(ret))
	unlock()
	return decodeOne(ctx, res, conv)
}

// setFields is the update that sets ($set) the fields of set; an empty set
// gives an empty update.
func setFields(set bson.D) bson.D {
	if len(set) == 0 {
		return nil
	}
	return bson.D{{Key: "$set", Value: set}}
}
