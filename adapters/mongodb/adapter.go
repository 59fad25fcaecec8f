package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// Adapter stores authport records in a MongoDB database. It implements every
// method of [core.Adapter], [core.ExpiredPurger], the session inventory
// ([core.SessionsByUserLister], [core.SessionsByUserDeleter]),
// [core.SessionMetadataKeeper], usernames ([core.UserByUsernameGetter])
// password hashes ([core.PasswordHashSwapper]) and second factors
// ([core.FactorCreator], [core.FactorsByUserLister], [core.FactorSwapper],
// [core.FactorDeleter]). It is safe for concurrent use. Create it with
// [New].
type Adapter struct {
	db             *mongo.Database
	users          *mongo.Collection
	usersPrimary   *mongo.Collection // users, read from the primary
	accounts       *mongo.Collection
	sessions       *mongo.Collection
	tokens         *mongo.Collection
	authenticators *mongo.Collection
	factors        *mongo.Collection
	names          Collections
	now            func() time.Time
	objectIDs      bool
	// ba: Better Auth's documents ([BetterAuth]); f names the fields that
	// differ.
	ba           bool
	f            fieldNames
	lookup       bool
	transactions bool
	atomicFAM    bool
	ttl          atomic.Bool
	partial      atomic.Bool
	// locks serialises the updates of each record, within the process and
	// across processes (a lock document), where the server's updates are
	// not atomic (atomicFAM false); nil otherwise.
	locks *recordLocks
	// flights tracks the inserts still waiting for the server's answer
	// (see settle).
	flights inflight
}

var _ core.Adapter = (*Adapter)(nil)
var _ core.ExpiredPurger = (*Adapter)(nil)
var _ core.AuthenticatorCounterAdvancer = (*Adapter)(nil)
var _ core.AccountsByUserLister = (*Adapter)(nil)
var _ core.AccountUpdater = (*Adapter)(nil)
var _ core.SessionExtender = (*Adapter)(nil)
var _ core.UserByUsernameGetter = (*Adapter)(nil)
var _ core.PasswordHashSwapper = (*Adapter)(nil)
var _ core.FactorCreator = (*Adapter)(nil)
var _ core.FactorsByUserLister = (*Adapter)(nil)
var _ core.FactorSwapper = (*Adapter)(nil)
var _ core.FactorDeleter = (*Adapter)(nil)

// Capabilities reports which server features an [Adapter] uses.
type Capabilities struct {
	// Lookup is true when getSessionAndUser and getUserByAccount run one
	// $lookup aggregation, false when they run two finds.
	Lookup bool
	// Transactions is true when deleteUser runs in a transaction (replica
	// sets and sharded clusters), false when it runs ordered deletes.
	Transactions bool
	// AtomicFindAndModify is true when the server's findAndModify deletes
	// or updates and returns a document atomically, so that
	// useVerificationToken is one findOneAndDelete and updateUser,
	// updateSession and updateAuthenticatorCounter are one
	// findOneAndUpdate each.
	//
	// It is false on FerretDB, whose findAndModify reads and then deletes,
	// so that two concurrent calls can both return the same document; there
	// useVerificationToken finds the token and then deletes it by _id, and
	// only the caller whose delete removed it gets it. FerretDB also applies
	// an update by rewriting the whole document, so that two concurrent
	// updates of different fields of one record can lose one; there the
	// adapter serialises the updates of each record, held for the one
	// findOneAndUpdate: within the process by a striped lock, and across
	// processes by a lock document in the Locks collection (see
	// [Collections]), inserted under the record's key (a unique _id) and
	// deleted after the update. A lock document left by a process that
	// stopped mid-update is taken over after 3 seconds; an update stalled
	// longer than that can then lose a concurrent one.
	AtomicFindAndModify bool
	// TTL is true when [Adapter.Migrate] created TTL indexes on the
	// expiry of sessions and verification tokens, so that the server
	// removes expired ones by itself. When false, call
	// [Adapter.PurgeExpired] periodically.
	TTL bool
	// PartialIndexes is true when [Adapter.Migrate] made the unique
	// indexes of e-mail addresses and usernames partial indexes over the
	// documents where the field is a string, so that any number of users
	// can be without one, whether the field is absent (as this adapter
	// stores "") or null (as Auth.js writes a user without an address).
	//
	// It is false where the server refuses partial indexes (FerretDB v1):
	// the indexes are then sparse unique indexes, which leave out the
	// documents without the field, so that any number of users this
	// adapter writes can be without an address, but index null: at most
	// one user may have the field null (a second user Auth.js writes
	// without an address is refused as a duplicate).
	PartialIndexes bool
}

// New returns an adapter that keeps its records in db. It asks the server,
// once, what it supports (a hello command for transactions, a buildInfo
// command to recognise FerretDB, and a $lookup aggregation on the users
// collection that matches nothing), and returns an error when the server
// cannot be reached.
//
// Invalid collection names (see [WithCollections]) give an error matching
// [core.ErrInvalidInput] before any command is sent.
//
// New creates no index: call [Adapter.Migrate] before serving.
func New(ctx context.Context, db *mongo.Database, opts ...Option) (*Adapter, error) {
	if db == nil {
		return nil, fmt.Errorf("mongoadapter: nil *mongo.Database: %w", core.ErrInvalidInput)
	}
	cfg := config{names: DefaultCollections(), now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := cfg.names.validate(); err != nil {
		return nil, fmt.Errorf("mongoadapter: %w", err)
	}
	if cfg.now == nil {
		return nil, fmt.Errorf("mongoadapter: clock must not be nil: %w", core.ErrInvalidInput)
	}
	a := &Adapter{
		db:             db,
		users:          db.Collection(cfg.names.Users),
		usersPrimary:   db.Collection(cfg.names.Users, options.Collection().SetReadPreference(readpref.Primary())),
		accounts:       db.Collection(cfg.names.Accounts),
		sessions:       db.Collection(cfg.names.Sessions),
		tokens:         db.Collection(cfg.names.VerificationTokens),
		authenticators: db.Collection(cfg.names.Authenticators),
		factors:        db.Collection(cfg.names.Factors),
		names:          cfg.names,
		now:            cfg.now,
		objectIDs:      cfg.objectIDs,
		ba:             cfg.betterAuth,
		f:              authJSFields(),
	}
	if a.ba {
		a.f = betterAuthFields()
	}
	if !cfg.noTransactions {
		tx, err := a.detectTransactions(ctx)
		if err != nil {
			return nil, startupError(err)
		}
		a.transactions = tx
	}
	fam, err := a.detectAtomicFindAndModify(ctx)
	if err != nil {
		return nil, startupError(err)
	}
	a.atomicFAM = fam
	if !fam {
		a.locks = newRecordLocks(db.Collection(cfg.names.Locks))
	}
	if !cfg.noLookup {
		lk, err := a.detectLookup(ctx)
		if err != nil {
			return nil, startupError(err)
		}
		a.lookup = lk
	}
	return a, nil
}

// startupError wraps an error of New's first commands. When no server could
// be selected, the driver's message lists the whole topology on one long
// line; the message here names each server with its last error and what
// to check instead, and still wraps the driver's error.
func startupError(err error) error {
	var sse topology.ServerSelectionError
	if !errors.As(err, &sse) {
		return fmt.Errorf("mongoadapter: %w", err)
	}
	var servers []string
	for _, s := range sse.Desc.Servers {
		d := s.Addr.String()
		if s.LastError != nil {
			d += ": " + s.LastError.Error()
		}
		servers = append(servers, d)
	}
	if len(servers) == 0 {
		servers = append(servers, "no server known")
	}
	return &selectionError{err: err, msg: "mongoadapter: no MongoDB server could be selected (" + strings.Join(servers, "; ") +
		"): check the connection string and that the server runs; the client's server selection timeout (serverSelectionTimeoutMS, 30 s unless set) or New's context bounds the wait"}
}

// selectionError is a server selection failure with a short message.
type selectionError struct {
	err error
	msg string
}

func (e *selectionError) Error() string { return e.msg }
func (e *selectionError) Unwrap() error { return e.err }

// Capabilities reports the server features the adapter uses.
func (a *Adapter) Capabilities() Capabilities {
	return Capabilities{
		Lookup:              a.lookup,
		Transactions:        a.transactions,
		AtomicFindAndModify: a.atomicFAM,
		TTL:                 a.ttl.Load(),
		PartialIndexes:      a.partial.Load(),
	}
}

// Collections returns the names of the collections the adapter uses.
func (a *Adapter) Collections() Collections { return a.names }

// detectTransactions reports whether the server is a replica set member or
// a mongos, where multi-document transactions exist.
func (a *Adapter) detectTransactions(ctx context.Context) (bool, error) {
	var hello struct {
		SetName string `bson:"setName"`
		Msg     string `bson:"msg"`
	}
	err := a.db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello)
	if err != nil {
		// A server that does not know hello has no transactions.
		return probeFailed(err, false, "hello")
	}
	return hello.SetName != "" || hello.Msg == "isdbgrid", nil
}

// detectAtomicFindAndModify reports false for FerretDB (its buildInfo has a
// ferretdbVersion), whose findAndModify is not atomic, and true otherwise.
func (a *Adapter) detectAtomicFindAndModify(ctx context.Context) (bool, error) {
	raw, err := a.db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		return probeFailed(err, true, "buildInfo")
	}
	_, err = raw.LookupErr("ferretdbVersion")
	return err != nil, nil
}

// lookupProbeID is the _id the $lookup probe matches; should a user have
// that id, the probe only reads it.
const lookupProbeID = "authport:$lookup-probe"

// detectLookup runs a $lookup aggregation that matches nothing. A server
// that rejects it has no $lookup.
func (a *Adapter) detectLookup(ctx context.Context) (bool, error) {
	pipeline := mongo.Pipeline{
		// An _id no user has: the probe is one index lookup however many
		// users there are.
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: lookupProbeID}}}},
		{{Key: "$limit", Value: 1}},
		{{Key: "$lookup", Value: bson.D{
			{Key: "from", Value: a.names.Users},
			{Key: "localField", Value: "_id"},
			{Key: "foreignField", Value: "_id"},
			{Key: "as", Value: "u"},
		}}},
	}
	cur, err := a.users.Aggregate(ctx, pipeline)
	if err != nil {
		return probeFailed(err, false, "probing $lookup")
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return probeFailed(err, false, "probing $lookup")
	}
	return true, nil
}

// probeFailed is the answer of a capability probe whose command failed
// with err: refused, what the probe reports on a server that refused the
// command (a server error), or, for any other error, err wrapped with
// what.
func probeFailed(err error, refused bool, what string) (bool, error) {
	var se mongo.ServerError
	if errors.As(err, &se) {
		return refused, nil
	}
	return false, fmt.Errorf("%s: %w", what, err)
}
