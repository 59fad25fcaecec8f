package mongoadapter

import (
	"context"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// CreateVerificationToken is createVerificationToken: one insert. An
// existing (identifier, token), once [Adapter.Migrate] has run, gives
// an error matching [core.ErrAlreadyExists]. As createUser's, the insert
// waits for the server's answer even when ctx ends first, and a
// useVerificationToken of the same token waits for it.
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	v := token.Normalize()
	exp, err := storedDate(core.MethodCreateVerificationToken, "expires", v.Expires)
	if err != nil {
		return nil, err
	}
	var doc bson.D
	if a.ba {
		now := a.nowDate()
		doc = bson.D{
			{Key: fID, Value: bson.NewObjectID()},
			{Key: fIdentifier, Value: v.Identifier},
			{Key: baValue, Value: v.Token},
			{Key: baExpiresAt, Value: exp},
			{Key: fCreatedAt, Value: now},
			{Key: fUpdatedAt, Value: now},
		}
	} else {
		doc = bson.D{
			{Key: fIdentifier, Value: v.Identifier},
			{Key: fToken, Value: v.Token},
			{Key: fExpires, Value: exp},
		}
	}
	if err := a.settle(ctx, tokenFlight(v.Identifier, v.Token), func(ctx context.Context) error {
		_, err := a.tokens.InsertOne(ctx, doc)
		return err
	}); err != nil {
		return nil, wrapErr(ctx, err)
	}
	return &v, nil
}

// UseVerificationToken is useVerificationToken: one findOneAndDelete of the
// token with the identifier and token that has not expired. The server
// deletes and returns one document atomically, so of concurrent calls at
// most one gets it. An expired token is not returned, whatever the TTL
// monitor's lag, and is left for the TTL index or [Adapter.PurgeExpired].
//
// Where findAndModify is not atomic (FerretDB; see
// [Capabilities.AtomicFindAndModify]) it is a find and a delete by _id
// instead, and only the call whose delete removed the token returns it.
//
// A createVerificationToken of the same token still waiting for the
// server's answer (its caller's context ended first) is waited for first.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	if err := a.flights.wait(ctx, tokenFlight(key.Identifier, key.Token)); err != nil {
		return nil, err
	}
	filter := bson.D{{Key: fIdentifier, Value: key.Identifier}, {Key: a.f.token, Value: key.Token}, a.notExpired()}
	if !a.atomicFAM {
		return a.useTokenFindDelete(ctx, filter)
	}
	return decodeOne(ctx, a.tokens.FindOneAndDelete(ctx, filter), (*tokenDoc).token)
}

// useTokenFindDelete is useVerificationToken as a find and a delete by _id,
// for servers whose findAndModify is not atomic. The delete's count says
// which of concurrent callers removed the token.
func (a *Adapter) useTokenFindDelete(ctx context.Context, filter bson.D) (*core.VerificationToken, error) {
	doc, err := findDoc[tokenIDDoc](ctx, a.tokens.FindOne(ctx, filter))
	if doc == nil || err != nil {
		return nil, err
	}
	res, err := a.tokens.DeleteOne(ctx, bson.D{{Key: fID, Value: doc.ID}})
	if err != nil {
		return nil, wrapErr(ctx, err)
	}
	if res.DeletedCount != 1 {
		return nil, nil // another call used it first
	}
	return doc.Token.token()
}
