package mongoadapter

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// CreateUser is createUser: one insert. A user with the same id, or with the
// same e-mail address or username once [Adapter.Migrate] has run, gives an
// error matching [core.ErrAlreadyExists] and stores nothing. A user without
// an address or username has no such field.
//
// The insert waits for the server's answer even when ctx ends first (the
// call returns then, and the insert goes on in the background for at most
// 10 s), and a deleteUser of the same id waits for it, so that an insert
// cut short cannot land after the deleteUser retried behind it.
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	u := user.Normalize()
	doc, err := a.userDocument(u)
	if err != nil {
		return nil, err
	}
	if err := a.settle(ctx, userFlight(u.ID), func(ctx context.Context) error {
		_, err := a.users.InsertOne(ctx, doc)
		return err
	}); err != nil {
		return nil, wrapErr(ctx, err)
	}
	return &u, nil
}

// GetUser is getUser: one find by _id.
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	v, ok := a.userIDValue(id)
	if !ok {
		return nil, nil
	}
	return a.findUser(ctx, bson.D{{Key: fID, Value: v}})
}

// GetUserByEmail is getUserByEmail: one find by email. "" finds nobody
// (and sends nothing).
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	return a.findUserBy(ctx, fEmail, email)
}

// GetUserByUsername implements [core.UserByUsernameGetter]: one find by
// username, compared exactly. "" finds nobody (and sends nothing).
func (a *Adapter) GetUserByUsername(ctx context.Context, username string) (*core.User, error) {
	return a.findUserBy(ctx, fUsername, username)
}

// findUserBy finds the user whose optional unique field key is v; nil, nil
// for "". The filter repeats the indexes' partial filter ($type string), so
// that the planner may use the partial index on every server version.
func (a *Adapter) findUserBy(ctx context.Context, key, v string) (*core.User, error) {
	if v == "" {
		return nil, nil
	}
	return a.findUser(ctx, bson.D{{Key: key, Value: bson.D{{Key: "$eq", Value: v}, {Key: "$type", Value: "string"}}}})
}

func (a *Adapter) findUser(ctx context.Context, filter bson.D) (*core.User, error) {
	return decodeOne(ctx, a.users.FindOne(ctx, filter), a.toUser)
}

// GetUserByAccount is getUserByAccount: one aggregation joining the account
// to its user with $lookup where the server supports it, otherwise a find of
// the account and a find of its user.
func (a *Adapter) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	match := a.accountFilter(key)
	if !a.lookup {
		acc, err := findDoc[accountDoc](ctx, a.accounts.FindOne(ctx, match, options.FindOne().SetProjection(bson.D{{Key: fUserID, Value: 1}})))
		if acc == nil || err != nil || isNull(acc.UserID) {
			return nil, err
		}
		return a.findUser(ctx, bson.D{{Key: fID, Value: acc.UserID}})
	}
	var docs []accountUserDoc
	if err := a.lookupUser(ctx, a.accounts, match, &docs,
		bson.D{{Key: "$project", Value: bson.D{{Key: fID, Value: 0}, {Key: fJoinedUser, Value: 1}}}}); err != nil {
		return nil, err
	}
	if len(docs) == 0 || len(docs[0].User) == 0 {
		return nil, nil
	}
	return a.toUser(&docs[0].User[0])
}

// UpdateUser is updateUser: one findOneAndUpdate returning the updated
// document (one find when the update sets nothing). An unknown id gives an
// error matching [core.ErrNotFound]; an e-mail address or username taken by
// another user one matching [core.ErrAlreadyExists], with nothing changed.
// An address or username set to "" is removed ($unset), which frees it.
// Application fields are set ($set) and
// removed ($unset) one by one, so fields not named stay as stored, also
// when another application wrote them. Where the server's updates are not atomic
// (see [Capabilities.AtomicFindAndModify]) the updates of one user are
// serialised, within the process and across processes (a lock document).
func (a *Adapter) UpdateUser(ctx context.Context, update core.UserUpdate) (*core.User, error) {
	id, ok := a.userIDValue(update.ID)
	if !ok {
		return nil, fmt.Errorf("no user with this id: %w", core.ErrNotFound)
	}
	var set, unset bson.D
	if a.ba && update.Email.Set && update.Email.Value == "" {
		return nil, &core.InputError{Method: string(core.MethodUpdateUser), Field: "email", Reason: noEmailReason}
	}
	for _, f := range []struct {
		key string
		v   core.Field[string]
	}{{fEmail, update.Email}, {fUsername, update.Username}} {
		switch {
		case !f.v.Set:
		case f.v.Value == "":
			unset = append(unset, bson.E{Key: f.key, Value: ""})
		default:
			set = append(set, bson.E{Key: f.key, Value: f.v.Value})
		}
	}
	if update.EmailVerified.Set {
		var v any
		if t := update.EmailVerified.Value; t != nil {
			d, err := storedDate(core.MethodUpdateUser, "emailVerified", core.NormalizeTime(*t))
			if err != nil {
				return nil, err
			}
			v = d
		}
		switch {
		case !a.ba:
			set = append(set, bson.E{Key: fEmailVerified, Value: v})
		case v == nil:
			set = append(set, bson.E{Key: fEmailVerified, Value: false})
			unset = append(unset, bson.E{Key: baEmailVerifiedAt, Value: ""})
		default:
			set = append(set, bson.E{Key: fEmailVerified, Value: true}, bson.E{Key: baEmailVerifiedAt, Value: v})
		}
	}
	if update.Name.Set {
		var name any = update.Name.Value
		if a.ba && update.Name.Value == nil {
			name = "" // Better Auth requires a name
		}
		set = append(set, bson.E{Key: fName, Value: name})
	}
	if update.Image.Set {
		set = append(set, bson.E{Key: fImage, Value: update.Image.Value})
	}
	dset, dunset, err := a.dataUpdate(update.Data)
	if err != nil {
		return nil, err
	}
	set, unset = append(set, dset...), append(unset, dunset...)
	if a.ba && len(set)+len(unset) > 0 {
		set = append(set, bson.E{Key: fUpdatedAt, Value: a.nowDate()})
	}
	var change bson.D
	if len(set) > 0 {
		change = append(change, bson.E{Key: "$set", Value: set})
	}
	if len(unset) > 0 {
		change = append(change, bson.E{Key: "$unset", Value: unset})
	}
	u, err := updateRecord(ctx, a, a.users, lockUser, update.ID, bson.D{{Key: fID, Value: id}}, change, options.After, a.toUser)
	if u == nil && err == nil {
		return nil, fmt.Errorf("no user with this id: %w", core.ErrNotFound)
	}
	return u, err
}

// DeleteUser is deleteUser. It removes the user first and then sweeps the
// user's sessions, accounts, authenticators and second factors. On a replica set or sharded
// cluster the removal of the user and of its records is one transaction,
// and the sweep runs again after it commits.
//
// The order is what keeps a concurrent linkAccount, createSession,
// createAuthenticator or createFactor for the user from leaving an orphan, with or without
// transactions: those insert their record and then read the user again
// (insertOwned). If that read still finds the user, the insert finished
// before the user's removal, so the sweep, which starts after the removal,
// finds the record. If it does not, the writer deletes its record itself.
// (A transaction alone would not do: its deletes see the records of its
// snapshot, not one inserted while it runs, and an insert does not conflict
// with them.)
//
// A createUser of the same id whose insert this adapter has sent and not yet
// seen answered (its caller's context ended first) is waited for first, so
// that it cannot land after the deletion.
//
// A failure part-way may leave records of a removed user, which let nobody
// in (every read of a session or account joins it to its user); DeleteUser
// of the same id sweeps them even when the user is already gone, so a retry
// finishes the job.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	v, ok := a.userIDValue(id)
	if !ok {
		return nil, nil
	}
	// A createUser of this id cut short may still be on its way to the
	// server: the deletion comes after it (see CreateUser).
	if err := a.flights.wait(ctx, userFlight(id)); err != nil {
		return nil, err
	}
	var u *core.User
	if !a.transactions {
		var err error
		if u, err = a.deleteUserDoc(ctx, v); err != nil {
			return nil, wrapErr(ctx, err)
		}
	} else {
		sess, err := a.db.Client().StartSession()
		if err != nil {
			return nil, wrapErr(ctx, err)
		}
		defer sess.EndSession(context.WithoutCancel(ctx))
		res, err := sess.WithTransaction(ctx, func(tctx context.Context) (any, error) {
			u, err := a.deleteUserDoc(tctx, v)
			if err != nil {
				return nil, err
			}
			return u, a.sweepUserRecords(tctx, v)
		})
		if err != nil {
			return nil, wrapErr(ctx, err)
		}
		u, _ = res.(*core.User)
	}
	if err := a.sweepUserRecords(ctx, v); err != nil {
		return nil, wrapErr(ctx, err)
	}
	return u, nil
}

// deleteUserDoc removes the user document with the stored id and returns
// the user, or nil when there was none.
func (a *Adapter) deleteUserDoc(ctx context.Context, id any) (*core.User, error) {
	return decodeOne(ctx, a.users.FindOneAndDelete(ctx, bson.D{{Key: fID, Value: id}}), a.toUser)
}

// sweepUserRecords deletes every session, account, authenticator and
// second factor of the user with the stored id.
func (a *Adapter) sweepUserRecords(ctx context.Context, id any) error {
	filter := bson.D{{Key: fUserID, Value: id}}
	for _, coll := range []*mongo.Collection{a.sessions, a.accounts, a.authenticators, a.factors} {
		if _, err := coll.DeleteMany(ctx, filter); err != nil {
			return err
		}
	}
	return nil
}

// userExists reports whether the user with the stored id v exists: one find
// that returns only the _id.
func (a *Adapter) userExists(ctx context.Context, v any) (bool, error) {
	return idExists(ctx, a.users, v)
}

// userExistsOnPrimary is userExists read from the primary, whatever the
// database's read preference, so that it sees a deleteUser that has
// returned.
func (a *Adapter) userExistsOnPrimary(ctx context.Context, v any) (bool, error) {
	return idExists(ctx, a.usersPrimary, v)
}

// NewUserID returns an id for a new user, for authport's
// auth.Config.GenerateUserID:
//
//	GenerateUserID: func() (string, error) { return store.NewUserID(context.Background()) }
//
// With [BetterAuth] or [WithObjectIDs] it is the hexadecimal form of a new
// ObjectId, stored as that ObjectId, as Better Auth's and Auth.js's MongoDB
// adapters make user ids; otherwise a random UUID (version 4), authport's
// default. It sends nothing to the server.
func (a *Adapter) NewUserID(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if a.ba || a.objectIDs {
		return bson.NewObjectID().Hex(), nil
	}
	return core.NewUUID(), nil
}
