package mongoadapter

import (
	"context"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// PurgeExpired deletes every session and verification token whose expiry is
// not after now, and reports how many it deleted. Where the server has TTL
// indexes (see [Adapter.Migrate]) it expires them by itself and this is
// only needed to remove them sooner; either way the adapter never returns an
// expired session or token.
func (a *Adapter) PurgeExpired(ctx context.Context) (core.PurgeResult, error) {
	var res core.PurgeResult
	filter := bson.D{{Key: a.f.expires, Value: bson.D{{Key: "$lte", Value: a.nowDate()}}}}
	r, err := a.sessions.DeleteMany(ctx, filter)
	if err != nil {
		return res, wrapErr(ctx, err)
	}
	res.Sessions = int(r.DeletedCount)
	r, err = a.tokens.DeleteMany(ctx, filter)
	if err != nil {
		return res, wrapErr(ctx, err)
	}
	res.VerificationTokens = int(r.DeletedCount)
	return res, nil
}

// nowDate returns the adapter's current time ([WithClock]) as a BSON date.
func (a *Adapter) nowDate() bson.DateTime { return bson.DateTime(a.now().UnixMilli()) }

// notExpired is the filter condition every read of a session or token
// carries, so that an expired one is never returned whatever the TTL
// monitor's lag.
func (a *Adapter) notExpired() bson.E {
	return bson.E{Key: a.f.expires, Value: bson.D{{Key: "$gt", Value: a.nowDate()}}}
}
