package mongoadapter

import (
	"context"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// GetSessionAndUser is getSessionAndUser: one aggregation joining the
// session to its user with $lookup where the server supports it, otherwise
// a find of the session and a find of its user. Both check expires
// against now, so an expired session is never returned, whatever the TTL
// monitor's lag; an expired session found is deleted then (SPEC §3:
// removed when accessed), by a delete that matches it only while it is
// still expired, so that a concurrent extension wins. A session whose user
// is gone is not returned either.
func (a *Adapter) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	match := bson.D{{Key: fSessionToken, Value: sessionToken}}
	if !a.lookup {
		sd, err := findDoc[sessionDoc](ctx, a.sessions.FindOne(ctx, match))
		if sd == nil || err != nil {
			return nil, err
		}
		if sd.Expires <= a.nowDate() {
			return nil, a.removeExpiredSession(ctx, sessionToken)
		}
		u, err := findDoc[userDoc](ctx, a.users.FindOne(ctx, bson.D{{Key: fID, Value: sd.UserID}}))
		if u == nil || err != nil {
			return nil, err
		}
		d := sessionUserDoc{Session: *sd, User: []userDoc{*u}}
		return d.sessionAndUser()
	}
	var docs []sessionUserDoc
	if err := a.lookupUser(ctx, a.sessions, match, &docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, nil
	}
	if docs[0].Session.Expires <= a.nowDate() {
		return nil, a.removeExpiredSession(ctx, sessionToken)
	}
	return docs[0].sessionAndUser()
}

// UpdateSession is updateSession: one findOneAndUpdate returning the
// updated document (one find when the update sets nothing). Setting the
// user id adds a find of that user before and another after (confirmMove,
// so that a concurrent deleteUser of that user leaves no orphan); an
// unknown user, or one deleted concurrently, gives an error matching
// [core.ErrNotFound] and changes nothing. Where the server's updates
// are not atomic (see [Capabilities.AtomicFindAndModify]) the updates of one
// session are serialised, within the process and across processes.
func (a *Adapter) UpdateSession(ctx context.Context, update core.SessionUpdate) (*core.Session, error) {
	var set bson.D
	if update.UserID.Set {
		uid, err := a.storedUserID(core.MethodUpdateSession, "userId", update.UserID.Value)
		if err != nil {
			return nil, err
		}
		if err := a.requireUser(ctx, uid); err != nil {
			return nil, err
		}
		set = append(set, bson.E{Key: fUserID, Value: uid})
	}
	if update.Expires.Set {
		exp, ok := date(core.NormalizeTime(update.Expires.Value))
		if !ok || update.Expires.Value.IsZero() {
			return nil, &core.InputError{Method: string(core.MethodUpdateSession), Field: "expires", Reason: "must be set, within the range of BSON dates"}
		}
		set = append(set, bson.E{Key: fExpires, Value: exp})
	}
	if !update.UserID.Set {
		return a.setSession(ctx, update.SessionToken, nil, set, options.After)
	}
	before, err := a.setSession(ctx, update.SessionToken, nil, set, options.Before)
	if err != nil || before == nil {
		return nil, err
	}
	if err := a.confirmMove(ctx, *before, set[0].Value); err != nil {
		return nil, err
	}
	after := *before
	after.UserID = update.UserID.Value
	if update.Expires.Set {
		after.Expires = core.NormalizeTime(update.Expires.Value)
	}
	return &after, nil
}

// ExtendSession implements [core.SessionExtender]: one findOneAndUpdate
// whose filter holds the condition (the stored expiry not after from), so
// the server applies the check and the update together; of concurrent
// calls with the same from one matches and the others find nothing. When
// nothing matched, a find returns the session as stored (nil when there is
// none). Where the server's updates are not atomic (see
// [Capabilities.AtomicFindAndModify]) the updates of one session are
// serialised, within the process and across processes, as updateSession's
// are.
func (a *Adapter) ExtendSession(ctx context.Context, sessionToken string, from, expires time.Time) (*core.Session, bool, error) {
	fromDate, err := storedDate(core.MethodExtendSession, "from", core.NormalizeTime(from))
	if err != nil {
		return nil, false, err
	}
	exp, err := storedDate(core.MethodExtendSession, "expires", core.NormalizeTime(expires))
	if err != nil {
		return nil, false, err
	}
	s, err := a.setSession(ctx, sessionToken, bson.D{{Key: fExpires, Value: bson.D{{Key: "$lte", Value: fromDate}}}},
		bson.D{{Key: fExpires, Value: exp}}, options.After)
	if err != nil || s != nil {
		return s, s != nil, err
	}
	s, err = decodeSession(ctx, a.sessions.FindOne(ctx, bson.D{{Key: fSessionToken, Value: sessionToken}}))
	return s, false, err
}

// setSession sets the fields of set on the session with the token when it
// also matches the conditions in where, and returns it as updateRecord
// does (one find when set is empty).
func (a *Adapter) setSession(ctx context.Context, sessionToken string, where, set bson.D, ret options.ReturnDocument) (*core.Session, error) {
	filter := append(bson.D{{Key: fSessionToken, Value: sessionToken}}, where...)
	return updateRecord(ctx, a, a.sessions, lockSession, sessionToken, filter, setFields(set), ret, (*sessionDoc).session)
}

// DeleteSession is deleteSession: one findOneAndDelete. It returns the
// deleted session, expired or not, or nil, nil when there was none.
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	return decodeSession(ctx, a.sessions.FindOneAndDelete(ctx, bson.D{{Key: fSessionToken, Value: sessionToken}}))
}

func decodeSession(ctx context.Context, res *mongo.SingleResult) (*core.Session, error) {
	return decodeOne(ctx, res, (*sessionDoc).session)
}

// removeExpiredSession deletes the session with the token if it has
// expired.
func (a *Adapter) removeExpiredSession(ctx context.Context, sessionToken string) error {
	_, err := a.sessions.DeleteOne(ctx, bson.D{
		{Key: fSessionToken, Value: sessionToken},
		{Key: fExpires, Value: bson.D{{Key: "$lte", Value: a.nowDate()}}},
	})
	if err != nil {
		return wrapErr(ctx, err)
	}
	return nil
}
