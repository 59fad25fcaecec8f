package mongoadapter

import (
	"context"
	"errors"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// CreateVerificationToken is createVerificationToken: one insert. An
// existing (identifier, token), once [Adapter.Migrate] has run, gives
// an error matching [core.ErrAlreadyExists].
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	v := token.Normalize()
	exp, ok := date(v.Expires)
	if !ok {
		return nil, &core.InputError{Method: string(core.MethodCreateVerificationToken), Field: "expires", Reason: "is out of the range of BSON dates"}
	}
	doc := bson.D{
		{Key: fIdentifier, Value: v.Identifier},
		{Key: fToken, Value: v.Token},
		{Key: fExpires, Value: exp},
	}
	if _, err := a.tokens.InsertOne(ctx, doc); err != nil {
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
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	filter := bson.D{{Key: fIdentifier, Value: key.Identifier}, {Key: fToken, Value: key.Token}, a.notExpired()}
	if !a.atomicFAM {
		return a.useTokenFindDelete(ctx, filter)
	}
	var doc tokenDoc
	if err := a.tokens.FindOneAndDelete(ctx, filter).Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		return nil, wrapErr(ctx, err)
	}
	return doc.token(), nil
}

// useTokenFindDelete is useVerificationToken as a find and a delete by _id,
// for servers whose findAndModify is not atomic. The delete's count says
// which of concurrent callers removed the token.
func (a *Adapter) useTokenFindDelete(ctx context.Context, filter bson.D) (*core.VerificationToken, error) {
	var doc tokenIDDoc
	if err := a.tokens.FindOne(ctx, filter).Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		return nil, wrapErr(ctx, err)
	}
	res, err := a.tokens.DeleteOne(ctx, bson.D{{Key: fID, Value: doc.ID}})
	if err != nil {
		return nil, wrapErr(ctx, err)
	}
	if res.DeletedCount != 1 {
		return nil, nil // another call used it first
	}
	t := tokenDoc{Identifier: doc.Identifier, Token: doc.Token, Expires: doc.Expires}
	return t.token(), nil
}
