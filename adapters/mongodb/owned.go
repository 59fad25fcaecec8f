package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// The records a user owns (accounts, sessions, authenticators, factors) must never
// outlive the user, even when deleteUser runs at the same time as the write
// that creates or moves one: see [Adapter.DeleteUser] and the README's
// "deleteUser racing the writes that create a user's records".

// CreateSession is createSession: a find of the user, the insert, and a
// find of the user again (see [Adapter.DeleteUser] for why the second one
// makes a concurrent deleteUser leave no orphan). An unknown user, or one
// deleted concurrently, gives an error matching [core.ErrNotFound] and leaves
// no session; an existing token, once [Adapter.Migrate] has run, one
// matching [core.ErrAlreadyExists]. The session's metadata are fields of
// its document (createdAt, updatedAt, ipAddress, userAgent), each only
// where known.
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	s := session.Normalize()
	return createOwned(ctx, a, core.MethodCreateSession, a.sessions, s, s.UserID, func(uid any) (bson.D, error) {
		if a.ba {
			return sessionDocumentNamed(s, uid, a.f, bson.NewObjectID())
		}
		return sessionDocument(s, uid)
	})
}

// CreateAuthenticator is createAuthenticator: a find of the user, the
// insert, and a find of the user again (see [Adapter.DeleteUser] for why the
// second one makes a concurrent deleteUser leave no orphan). An unknown
// user, or one deleted concurrently, gives an error matching
// [core.ErrNotFound] and leaves no authenticator; an existing credential id,
// once [Adapter.Migrate] has run, one matching [core.ErrAlreadyExists].
func (a *Adapter) CreateAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	au := authenticator.Clone()
	return createOwned(ctx, a, core.MethodCreateAuthenticator, a.authenticators, au, au.UserID, func(uid any) (bson.D, error) {
		return bson.D{
			{Key: fCredentialID, Value: au.CredentialID},
			{Key: fUserID, Value: uid},
			{Key: fProviderAccountID, Value: au.ProviderAccountID},
			{Key: fCredentialPublicKey, Value: au.CredentialPublicKey},
			{Key: fCounter, Value: au.Counter},
			{Key: fCredentialBackedUp, Value: au.CredentialBackedUp},
			{Key: fCredentialDeviceType, Value: au.CredentialDeviceType},
			{Key: fTransports, Value: au.Transports},
		}, nil
	})
}

// LinkAccount is linkAccount: a find of the user, the insert, and a find of
// the user again (see [Adapter.DeleteUser] for why the second one makes a
// concurrent deleteUser leave no orphan). An unknown user, or one deleted
// concurrently, gives an error matching [core.ErrNotFound] and leaves no
// account; an existing (provider, providerAccountId), once
// [Adapter.Migrate] has run, one matching [core.ErrAlreadyExists].
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	acc := account.Normalize()
	return createOwned(ctx, a, core.MethodLinkAccount, a.accounts, acc, acc.UserID, func(uid any) (bson.D, error) {
		if a.ba {
			return accountDocumentBA(acc, uid, a.nowDate())
		}
		return accountDocument(acc, uid), nil
	})
}

// createOwned stores r, a record of the user with the id userID, into coll
// as the document that doc builds from the stored user id, so that it never
// outlives the user (see [Adapter.insertOwned]), and returns r. A user id
// that cannot be stored, or a document doc refuses, is an error of method
// m.
func createOwned[R any](ctx context.Context, a *Adapter, m core.Method, coll *mongo.Collection, r R, userID string, doc func(uid any) (bson.D, error)) (*R, error) {
	uid, err := a.storedUserID(m, "userId", userID)
	if err != nil {
		return nil, err
	}
	d, err := doc(uid)
	if err != nil {
		return nil, err
	}
	if err := a.insertOwned(ctx, coll, uid, d); err != nil {
		return nil, err
	}
	return &r, nil
}

// insertOwned inserts doc, a record of the user with the stored id uid,
// into coll so that it never outlives the user: it checks that the user
// exists, inserts, and then reads the user again (from the primary). If the
// user is gone by then, a deleteUser ran concurrently and may have swept
// the user's records before the insert landed: insertOwned deletes the
// record it inserted and returns an error matching [core.ErrNotFound]. If
// the user is still there, the insert was complete before the user's
// deletion, so the sweep that deleteUser runs after removing the user will
// find it. A failure after the insert also deletes the record again, so
// that a failed write changes nothing.
//
// The insert, the second read and the undo run to their end even when ctx
// ends first (the call returns then; they go on in the background for at
// most settleTimeout): an insert whose answer the driver stopped waiting
// for could otherwise land after the deleteUser that the second read is
// there to catch (see [settle]).
func (a *Adapter) insertOwned(ctx context.Context, coll *mongo.Collection, uid any, doc bson.D) error {
	if err := a.requireUser(ctx, uid); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return outlive(ctx, settleTimeout, func(ctx context.Context) error {
		return a.insertConfirmed(ctx, coll, uid, doc)
	})
}

// insertConfirmed is insertOwned after its first read: the insert, the
// second read of the user, and the undo when the user is gone.
func (a *Adapter) insertConfirmed(ctx context.Context, coll *mongo.Collection, uid any, doc bson.D) error {
	res, err := coll.InsertOne(ctx, doc)
	if err != nil {
		return wrapErr(ctx, err)
	}
	ok, err := a.userExistsOnPrimary(ctx, uid)
	if err == nil && ok {
		return nil
	}
	var cause error
	if err != nil {
		cause = wrapErr(ctx, err)
	} else {
		cause = fmt.Errorf("user deleted concurrently: %w", core.ErrNotFound)
	}
	// Undo the insert even when ctx has ended, bounded by its own timeout.
	derr := undo(ctx, func(ctx context.Context) error {
		_, err := coll.DeleteOne(ctx, bson.D{{Key: fID, Value: res.InsertedID}})
		return err
	})
	if derr != nil {
		return errors.Join(cause, fmt.Errorf("removing the record just inserted: %w", derr))
	}
	return cause
}

// undoTimeout bounds the removal of a record insertOwned must take back.
const undoTimeout = 10 * time.Second

// undo runs f, which takes back a write, as outlive does, bounded by
// undoTimeout.
func undo(ctx context.Context, f func(context.Context) error) error {
	return outlive(ctx, undoTimeout, f)
}

// outlive runs f, a write that must happen even when ctx ends first (an
// undo, a lock's release), with a context that the end of ctx does not
// cancel, bounded by limit, and waits for it until it is done or ctx ends,
// whichever comes first: the call never outlives its context (tests/faults
// found calls returning up to 1.5 s after their deadline while an undo
// waited for a reset server, and 1.2 s after while a lock's release did),
// and a write cut short by it goes on in the background.
func outlive(ctx context.Context, limit time.Duration, f func(context.Context) error) error {
	done := make(chan error, 1)
	go func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		defer cancel()
		done <- f(uctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("still running when the call's context ended (it goes on for at most %v): %w", limit, ctx.Err())
	}
}

// requireUser returns an error matching [core.ErrNotFound] when the user
// with the stored id v does not exist.
func (a *Adapter) requireUser(ctx context.Context, v any) error {
	ok, err := a.userExists(ctx, v)
	if err != nil {
		return wrapErr(ctx, err)
	}
	if !ok {
		return fmt.Errorf("user: %w", core.ErrNotFound)
	}
	return nil
}

// confirmMove makes a session moved to the user with the stored id uid
// unable to outlive that user, as insertOwned does for new records: it reads
// the user again, and if a concurrent deleteUser removed it, puts the
// session back as it was (before: its user, expiry and, when the move also
// set it, updatedAt) and returns an error matching [core.ErrNotFound].
// Should the session's first user be gone too by then, the session goes
// with it, as that user's deleteUser would have taken it. The put-back is
// an update without upsert: a session deleted meanwhile stays deleted.
func (a *Adapter) confirmMove(ctx context.Context, before core.Session, uid any, updatedAt bool) error {
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
			bson.D{{Key: a.f.sessionToken, Value: before.SessionToken}, {Key: fUserID, Value: uid}},
			a.restoreSession(oldUID, oldExp, before.UpdatedAt, updatedAt))
		unlock()
		if err != nil {
			return fmt.Errorf("putting the session back: %w", err)
		}
		if ok, err := a.userExistsOnPrimary(ctx, oldUID); err == nil && !ok {
			_, err = a.sessions.DeleteOne(ctx, bson.D{{Key: a.f.sessionToken, Value: before.SessionToken}, {Key: fUserID, Value: oldUID}})
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

// restoreSession is the update that puts a moved session back: its stored
// user id and expiry and, when restoreUpdatedAt, its updatedAt as it was
// (removed when it had none).
func (a *Adapter) restoreSession(uid any, expires bson.DateTime, updatedAt time.Time, restoreUpdatedAt bool) bson.D {
	set := bson.D{{Key: fUserID, Value: uid}, {Key: a.f.expires, Value: expires}}
	if !restoreUpdatedAt {
		return bson.D{{Key: "$set", Value: set}}
	}
	if updatedAt.IsZero() {
		return bson.D{{Key: "$set", Value: set}, {Key: "$unset", Value: bson.D{{Key: fUpdatedAt, Value: ""}}}}
	}
	seen, _ := date(updatedAt)
	return bson.D{{Key: "$set", Value: append(set, bson.E{Key: fUpdatedAt, Value: seen})}}
}
