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
	match := bson.D{{Key: a.f.sessionToken, Value: sessionToken}}
	if !a.lookup {
		sd, err := findDoc[sessionDoc](ctx, a.sessions.FindOne(ctx, match))
		if sd == nil || err != nil {
			return nil, err
		}
		if sd.expiry() <= a.nowDate() {
			return nil, a.removeExpiredSession(ctx, sessionToken)
		}
		ud, err := findDoc[userDoc](ctx, a.users.FindOne(ctx, bson.D{{Key: fID, Value: sd.UserID}}))
		if ud == nil || err != nil {
			return nil, err
		}
		d := sessionUserDoc{Session: *sd, User: []userDoc{*ud}}
		return d.sessionAndUser(a.toUser)
	}
	var docs []sessionUserDoc
	if err := a.lookupUser(ctx, a.sessions, match, &docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, nil
	}
	if docs[0].Session.expiry() <= a.nowDate() {
		return nil, a.removeExpiredSession(ctx, sessionToken)
	}
	return docs[0].sessionAndUser(a.toUser)
}

// UpdateSession is updateSession: one findOneAndUpdate returning the
// updated document (one find when the update sets nothing). Setting the
// user id adds a find of that user before and another after (confirmMove,
// so that a concurrent deleteUser of that user leaves no orphan); an
// unknown user, or one deleted concurrently, gives an error matching
// [core.ErrNotFound] and changes nothing. UpdatedAt, when set, is set in the
// same write (removed when set to the zero time). Where the server's updates
// are not atomic (see [Capabilities.AtomicFindAndModify]) the updates of one
// session are serialised, within the process and across processes. The
// session returned has no metadata.
func (a *Adapter) UpdateSession(ctx context.Context, update core.SessionUpdate) (*core.Session, error) {
	const m = core.MethodUpdateSession
	var set, unset bson.D
	if update.UserID.Set {
		uid, err := a.storedUserID(m, "userId", update.UserID.Value)
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
			return nil, &core.InputError{Method: string(m), Field: "expires", Reason: "must be set, within the range of BSON dates"}
		}
		set = append(set, bson.E{Key: a.f.expires, Value: exp})
	}
	if update.UpdatedAt.Set {
		if update.UpdatedAt.Value.IsZero() {
			unset = append(unset, bson.E{Key: fUpdatedAt, Value: ""})
		} else {
			seen, err := storedDate(m, "updatedAt", core.NormalizeTime(update.UpdatedAt.Value))
			if err != nil {
				return nil, err
			}
			set = append(set, bson.E{Key: fUpdatedAt, Value: seen})
		}
	}
	upd := setFields(set)
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	byToken := bson.D{{Key: a.f.sessionToken, Value: update.SessionToken}}
	if !update.UserID.Set {
		return updateRecord(ctx, a, a.sessions, lockSession, update.SessionToken, byToken, upd, options.After, (*sessionDoc).session)
	}
	before, err := updateRecord(ctx, a, a.sessions, lockSession, update.SessionToken, byToken, upd, options.Before, (*sessionMetaDoc).session)
	if err != nil || before == nil {
		return nil, err
	}
	if err := a.confirmMove(ctx, *before, set[0].Value, update.UpdatedAt.Set); err != nil {
		return nil, err
	}
	after := update.Apply(before.WithoutMetadata())
	after.UpdatedAt = time.Time{}
	return &after, nil
}

// ExtendSession implements [core.SessionExtender]: one findOneAndUpdate
// whose filter holds the condition (the stored expiry not after from), so
// the server applies the check and the update together; of concurrent
// calls with the same from one matches and the others find nothing. It sets
// updatedAt to seen in the same write. When nothing matched, a find returns
// the session as stored (nil when there is none). It never upserts: an
// extension racing a deletion of the session (deleteSession,
// deleteSessionsByUserId, deleteUser) matches nothing once the session is
// gone and never stores it again. Where the server's updates are not atomic
// (see [Capabilities.AtomicFindAndModify]) the updates of one session are
// serialised, within the process and across processes, as updateSession's
// are. The session returned has no metadata.
func (a *Adapter) ExtendSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*core.Session, bool, error) {
	const m = core.MethodExtendSession
	fromDate, err := storedDate(m, "from", core.NormalizeTime(from))
	if err != nil {
		return nil, false, err
	}
	exp, err := storedDate(m, "expires", core.NormalizeTime(expires))
	if err != nil {
		return nil, false, err
	}
	seenDate, err := storedDate(m, "seen", core.NormalizeTime(seen))
	if err != nil {
		return nil, false, err
	}
	byToken := bson.D{{Key: a.f.sessionToken, Value: sessionToken}}
	s, err := updateRecord(ctx, a, a.sessions, lockSession, sessionToken,
		append(byToken, bson.E{Key: a.f.expires, Value: bson.D{{Key: "$lte", Value: fromDate}}}),
		setFields(bson.D{{Key: a.f.expires, Value: exp}, {Key: fUpdatedAt, Value: seenDate}}), options.After, (*sessionDoc).session)
	if err != nil || s != nil {
		return s, s != nil, err
	}
	s, err = decodeSession(ctx, a.sessions.FindOne(ctx, byToken))
	return s, false, err
}

// DeleteSession is deleteSession: one findOneAndDelete. It returns the
// deleted session, expired or not, or nil, nil when there was none.
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	return decodeSession(ctx, a.sessions.FindOneAndDelete(ctx, bson.D{{Key: a.f.sessionToken, Value: sessionToken}}))
}

func decodeSession(ctx context.Context, res *mongo.SingleResult) (*core.Session, error) {
	return decodeOne(ctx, res, (*sessionDoc).session)
}

// removeExpiredSession deletes the session with the token if it has
// expired.
func (a *Adapter) removeExpiredSession(ctx context.Context, sessionToken string) error {
	_, err := a.sessions.DeleteOne(ctx, bson.D{
		{Key: a.f.sessionToken, Value: sessionToken},
		{Key: a.f.expires, Value: bson.D{{Key: "$lte", Value: a.nowDate()}}},
	})
	if err != nil {
		return wrapErr(ctx, err)
	}
	return nil
}
