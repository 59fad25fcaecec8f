package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// CreateSession is createSession: a find of the user, the insert, and a
// find of the user again (see [Adapter.DeleteUser] for why the second one
// makes a concurrent deleteUser leave no orphan). An unknown user, or one
// deleted concurrently, gives an error matching [core.ErrNotFound] and leaves
// no session; an existing token, once [Adapter.Migrate] has run, one
// matching [core.ErrAlreadyExists].
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	s := session.Normalize()
	uid, ok := a.userIDValue(s.UserID)
	if !ok {
		return nil, &core.InputError{Method: string(core.MethodCreateSession), Field: "userId", Reason: "is not an ObjectId in hexadecimal (WithObjectIDs)"}
	}
	exp, ok := date(s.Expires)
	if !ok {
		return nil, &core.InputError{Method: string(core.MethodCreateSession), Field: "expires", Reason: "is out of the range of BSON dates"}
	}
	doc := bson.D{
		{Key: fSessionToken, Value: s.SessionToken},
		{Key: fUserID, Value: uid},
		{Key: fExpires, Value: exp},
	}
	if err := a.insertOwned(ctx, a.sessions, uid, doc); err != nil {
		return nil, err
	}
	return &s, nil
}

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
		var sd sessionDoc
		if err := a.sessions.FindOne(ctx, match).Decode(&sd); err != nil {
			if errors.Is(err, mongo.ErrNoDocuments) {
				return nil, nil
			}
			return nil, wrapErr(ctx, err)
		}
		if sd.Expires <= a.nowDate() {
			return nil, a.removeExpiredSession(ctx, sessionToken)
		}
		s, err := sd.session()
		if err != nil {
			return nil, err
		}
		u, err := a.findUser(ctx, bson.D{{Key: fID, Value: sd.UserID}})
		if u == nil || err != nil {
			return nil, err
		}
		return &core.SessionAndUser{Session: *s, User: *u}, nil
	}
	pipeline := mongo.Pipeline{
		{{Key: "$match", Value: match}},
		{{Key: "$limit", Value: 1}},
		{{Key: "$lookup", Value: bson.D{
			{Key: "from", Value: a.names.Users},
			{Key: "localField", Value: fUserID},
			{Key: "foreignField", Value: fID},
			{Key: "as", Value: fJoinedUser},
		}}},
	}
	var docs []sessionUserDoc
	if err := aggregate(ctx, a.sessions, pipeline, &docs); err != nil {
		return nil, wrapErr(ctx, err)
	}
	if len(docs) == 0 {
		return nil, nil
	}
	if docs[0].Expires <= a.nowDate() {
		return nil, a.removeExpiredSession(ctx, sessionToken)
	}
	su, err := docs[0].sessionAndUser()
	if err != nil {
		return nil, err
	}
	return su, nil
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
		uid, ok := a.userIDValue(update.UserID.Value)
		if !ok {
			return nil, &core.InputError{Method: string(core.MethodUpdateSession), Field: "userId", Reason: "is not an ObjectId in hexadecimal (WithObjectIDs)"}
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
	filter := bson.D{{Key: fSessionToken, Value: update.SessionToken}}
	if len(set) == 0 {
		return decodeSession(ctx, a.sessions.FindOne(ctx, filter))
	}
	unlock, err := a.locks.lock(ctx, lockSession, update.SessionToken)
	if err != nil {
		return nil, wrapErr(ctx, err)
	}
	if !update.UserID.Set {
		res := a.sessions.FindOneAndUpdate(ctx, filter, bson.D{{Key: "$set", Value: set}},
			options.FindOneAndUpdate().SetReturnDocument(options.After))
		unlock()
		return decodeSession(ctx, res)
	}
	res := a.sessions.FindOneAndUpdate(ctx, filter, bson.D{{Key: "$set", Value: set}},
		options.FindOneAndUpdate().SetReturnDocument(options.Before))
	unlock()
	before, err := decodeSession(ctx, res)
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
	fromDate, ok := date(core.NormalizeTime(from))
	exp, ok2 := date(core.NormalizeTime(expires))
	if !ok || !ok2 {
		return nil, false, &core.InputError{Method: string(core.MethodExtendSession), Field: "expires", Reason: "must be within the range of BSON dates"}
	}
	unlock, err := a.locks.lock(ctx, lockSession, sessionToken)
	if err != nil {
		return nil, false, wrapErr(ctx, err)
	}
	res := a.sessions.FindOneAndUpdate(ctx,
		bson.D{{Key: fSessionToken, Value: sessionToken}, {Key: fExpires, Value: bson.D{{Key: "$lte", Value: fromDate}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: fExpires, Value: exp}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After))
	unlock()
	s, err := decodeSession(ctx, res)
	if err != nil || s != nil {
		return s, s != nil, err
	}
	s, err = decodeSession(ctx, a.sessions.FindOne(ctx, bson.D{{Key: fSessionToken, Value: sessionToken}}))
	return s, false, err
}

// confirmMove makes a session moved to the user with the stored id uid
// unable to outlive that user, as insertOwned does for new records: it reads
// the user again, and if a concurrent deleteUser removed it, puts the
// session back as it was (before) and returns an error matching
// [core.ErrNotFound]. Should the session's first user be gone too by then,
// the session goes with it, as that user's deleteUser would have taken it.
func (a *Adapter) confirmMove(ctx context.Context, before core.Session, uid any) error {
	ok, err := a.userExistsOnPrimary(ctx, uid)
	if err == nil && ok {
		return nil
	}
	cause := fmt.Errorf("user deleted concurrently: %w", core.ErrNotFound)
	if err != nil {
		cause = wrapErr(ctx, err)
	}
	oldUID, _ := a.userIDValue(before.UserID)
	oldExp, _ := date(before.Expires)
	uerr := undo(ctx, func(ctx context.Context) error {
		unlock, err := a.locks.lock(ctx, lockSession, before.SessionToken)
		if err != nil {
			return err
		}
		_, err = a.sessions.UpdateOne(ctx,
			bson.D{{Key: fSessionToken, Value: before.SessionToken}, {Key: fUserID, Value: uid}},
			bson.D{{Key: "$set", Value: bson.D{{Key: fUserID, Value: oldUID}, {Key: fExpires, Value: oldExp}}}})
		unlock()
		if err != nil {
			return fmt.Errorf("putting the session back: %w", err)
		}
		if ok, err := a.userExistsOnPrimary(ctx, oldUID); err == nil && !ok {
			_, err = a.sessions.DeleteOne(ctx, bson.D{{Key: fSessionToken, Value: before.SessionToken}, {Key: fUserID, Value: oldUID}})
			if err != nil {
				return fmt.Errorf("removing the session of a deleted user: %w", err)
			}
		}
		return nil
	})
	if uerr != nil {
		return errors.Join(cause, uerr)
	}
	return cause
}

// DeleteSession is deleteSession: one findOneAndDelete. It returns the
// deleted session, expired or not, or nil, nil when there was none.
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	return decodeSession(ctx, a.sessions.FindOneAndDelete(ctx, bson.D{{Key: fSessionToken, Value: sessionToken}}))
}

func decodeSession(ctx context.Context, res *mongo.SingleResult) (*core.Session, error) {
	var doc sessionDoc
	if err := res.Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		return nil, wrapErr(ctx, err)
	}
	s, err := doc.session()
	if err != nil {
		return nil, err
	}
	return s, nil
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
