package mongoadapter

import (
	"context"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// The session inventory: a user's sessions listed ("where am I signed
// in?") and ended ("sign out everywhere", "sign out my other devices").
// MongoDB needs no index of its own for it: the sessions collection is the
// index, through the compound index userId_1_sessionToken_1_expires_1
// (see [Adapter.Migrate]), so a listing can never disagree with the
// sessions themselves.

var (
	_ core.SessionsByUserLister  = (*Adapter)(nil)
	_ core.SessionsByUserDeleter = (*Adapter)(nil)
	_ core.SessionMetadataKeeper = (*Adapter)(nil)
)

// KeepsSessionMetadata implements [core.SessionMetadataKeeper]: always
// true, the metadata being fields of the session document (createdAt,
// updatedAt, ipAddress, userAgent; absent when unknown).
func (a *Adapter) KeepsSessionMetadata() bool { return true }

// ListSessionsByUserID implements [core.SessionsByUserLister]: one find,
//
//	find sessions {userId: <id>, expires: {$gt: <now>}} sort {sessionToken: 1}
//
// served by the index userId_1_sessionToken_1_expires_1 (equality, sort,
// range: the server walks the user's keys in token order, skips the expired
// ones in the index and sorts nothing), returning the sessions with their
// metadata. Now is the adapter's clock ([WithClock]), so an expired session
// is never listed, however late the TTL monitor (or [Adapter.PurgeExpired])
// removes it; it leaves no index entry of its own behind, its only entry
// being its document's, which goes with it. An unknown user, or an id
// [WithObjectIDs] cannot hold, gives an empty, non-nil list.
func (a *Adapter) ListSessionsByUserID(ctx context.Context, userID string) ([]core.Session, error) {
	uid, ok := a.userIDValue(userID)
	if !ok {
		return []core.Session{}, nil
	}
	return decodeAll(ctx, a.sessions, bson.D{{Key: fUserID, Value: uid}, a.notExpired()},
		bson.D{{Key: a.f.sessionToken, Value: 1}}, (*sessionMetaDoc).session, core.CompareSessions)
}

// DeleteSessionsByUserID implements [core.SessionsByUserDeleter]: two
// deleteMany on the index userId_1_sessionToken_1_expires_1, filtered on
// userId and, unless except is "", sessionToken $ne except:
//
//	delete sessions {userId, sessionToken: {$ne: except}, expires: {$lte: now}}
//	delete sessions {userId, sessionToken: {$ne: except}}
//
// The first removes the user's expired sessions, uncounted; the second is
// the revocation proper, and its deletedCount is the count returned: every
// session it deletes was unexpired at the start of the call (the expired
// ones are already gone) or was created while it ran, so the count is
// exact without a transaction, on every deployment (FerretDB and
// standalone servers have none), and however late the TTL monitor runs.
// A count taken before one deleteMany, even in a transaction, would also
// need the expired ones subtracted, and the TTL monitor may delete them
// between the two.
//
// Each document is deleted atomically, so a session created concurrently is
// either deleted or left whole (its listing is its document). A session it
// deleted never comes back: extendSession and updateSession are
// findOneAndUpdate without upsert, which match nothing once the document is
// gone. except naming another user's session keeps nothing of this user's
// and, the filter holding userId, touches nothing of the other user's. An
// unknown user, or an id [WithObjectIDs] cannot hold, gives 0.
func (a *Adapter) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	uid, ok := a.userIDValue(userID)
	if !ok {
		return 0, nil
	}
	filter := bson.D{{Key: fUserID, Value: uid}}
	if except != "" {
		filter = append(filter, bson.E{Key: a.f.sessionToken, Value: bson.D{{Key: "$ne", Value: except}}})
	}
	expired := append(filter[:len(filter):len(filter)], bson.E{Key: a.f.expires, Value: bson.D{{Key: "$lte", Value: a.nowDate()}}})
	if _, err := a.sessions.DeleteMany(ctx, expired); err != nil {
		return 0, wrapErr(ctx, err)
	}
	res, err := a.sessions.DeleteMany(ctx, filter)
	if err != nil {
		return 0, wrapErr(ctx, err)
	}
	return int(res.DeletedCount), nil
}
