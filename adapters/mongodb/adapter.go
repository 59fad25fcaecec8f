package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// Adapter stores authport records in a MongoDB database. It implements every
// method of [core.Adapter] and [core.ExpiredPurger]. It is safe for
// concurrent use. Create it with [New].
type Adapter struct {
	db             *mongo.Database
	users          *mongo.Collection
	usersPrimary   *mongo.Collection // users, read from the primary
	accounts       *mongo.Collection
	sessions       *mongo.Collection
	tokens         *mongo.Collection
	authenticators *mongo.Collection
	names          Collections
	now            func() time.Time
	objectIDs      bool
	lookup         bool
	transactions   bool
	atomicFAM      bool
	ttl            atomic.Bool
	// locks serialises the updates of each record, within the process and
	// across processes (a lock document), where the server's updates are
	// not atomic (atomicFAM false); nil otherwise.
	locks *recordLocks
}

var (
	_ core.Adapter                      = (*Adapter)(nil)
	_ core.ExpiredPurger                = (*Adapter)(nil)
	_ core.AuthenticatorCounterAdvancer = (*Adapter)(nil)
	_ core.AccountsByUserLister         = (*Adapter)(nil)
	_ core.AccountUpdater               = (*Adapter)(nil)
)

// Collections names the collections the adapter uses. An empty name keeps
// the default of [DefaultCollections].
type Collections struct {
	Users              string
	Accounts           string
	Sessions           string
	VerificationTokens string
	Authenticators     string
	// Locks holds short-lived lock documents, used only on servers whose
	// updates are not atomic (see [Capabilities.AtomicFindAndModify]).
	Locks string
}

// DefaultCollections returns the default collection names: users,
// accounts, sessions and verification_tokens, as Auth.js's MongoDB adapter
// names them, authenticators (which that adapter does not store), and
// authport_locks (used only on servers whose updates are not atomic).
func DefaultCollections() Collections {
	return Collections{
		Users:              "users",
		Accounts:           "accounts",
		Sessions:           "sessions",
		VerificationTokens: "verification_tokens",
		Authenticators:     "authenticators",
		Locks:              "authport_locks",
	}
}

// validate checks that every name is a valid collection name of its own.
func (c Collections) validate() error {
	kinds := []struct{ field, name string }{
		{"Users", c.Users},
		{"Accounts", c.Accounts},
		{"Sessions", c.Sessions},
		{"VerificationTokens", c.VerificationTokens},
		{"Authenticators", c.Authenticators},
		{"Locks", c.Locks},
	}
	for i, k := range kinds {
		if reason := invalidCollectionName(k.name); reason != "" {
			return fmt.Errorf("collection name %s %q %s: %w", k.field, k.name, reason, core.ErrInvalidInput)
		}
		for _, o := range kinds[:i] {
			if o.name == k.name {
				return fmt.Errorf("collections %s and %s are both %q; each kind of record needs a collection of its own: %w",
					o.field, k.field, k.name, core.ErrInvalidInput)
			}
		}
	}
	return nil
}

// invalidCollectionName says what is wrong with a collection name, or
// returns "" for a valid one.
func invalidCollectionName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case strings.ContainsRune(name, '$'):
		return "contains '$'"
	case strings.ContainsRune(name, 0):
		return "contains a NUL character"
	case strings.HasPrefix(name, "."):
		return "starts with '.'"
	case strings.HasPrefix(name, "system."):
		return `starts with "system." (reserved by the server)`
	}
	return ""
}

// Option configures an [Adapter]; pass options to [New].
type Option func(*config)

type config struct {
	now            func() time.Time
	names          Collections
	objectIDs      bool
	noLookup       bool
	noTransactions bool
}

// WithCollections sets the names of the collections. Fields left empty keep
// their defaults (see [DefaultCollections]). [New] rejects, with an error
// matching [core.ErrInvalidInput], names that are not valid collection names
// (one containing '$' or NUL, starting with '.' or "system.", or not UTF-8)
// and two kinds of record sharing one collection. The server checks the
// length of the name, when the adapter first writes to the collection.
func WithCollections(c Collections) Option {
	return func(cfg *config) {
		set := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		set(&cfg.names.Users, c.Users)
		set(&cfg.names.Accounts, c.Accounts)
		set(&cfg.names.Sessions, c.Sessions)
		set(&cfg.names.VerificationTokens, c.VerificationTokens)
		set(&cfg.names.Authenticators, c.Authenticators)
		set(&cfg.names.Locks, c.Locks)
	}
}

// WithClock sets the clock that decides whether sessions and verification
// tokens have expired (default time.Now). Tests use it to move time. The
// server's TTL indexes, where it has them, expire records by its own clock.
func WithClock(now func() time.Time) Option {
	return func(cfg *config) { cfg.now = now }
}

// WithObjectIDs stores user ids as ObjectIds: the users' _id and the userId
// of accounts, sessions and authenticators, as Auth.js's MongoDB adapter
// writes them. User ids are then the 24-character lowercase hexadecimal form
// of an ObjectId ([bson.ObjectID.Hex]). An id not of that form is never
// replaced by another: creating a record with it gives an error matching
// [core.ErrInvalidInput], and looking one up finds nothing.
//
// Without this option user ids are stored as strings, as given.
func WithObjectIDs() Option {
	return func(cfg *config) { cfg.objectIDs = true }
}

// WithoutLookup makes getSessionAndUser and getUserByAccount use two finds
// even where the server supports $lookup.
func WithoutLookup() Option {
	return func(cfg *config) { cfg.noLookup = true }
}

// WithoutTransactions makes deleteUser use ordered deletes even where the
// server supports transactions.
func WithoutTransactions() Option {
	return func(cfg *config) { cfg.noTransactions = true }
}

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
		names:          cfg.names,
		now:            cfg.now,
		objectIDs:      cfg.objectIDs,
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
		var se mongo.ServerError
		if errors.As(err, &se) {
			// A server that does not know hello has no transactions.
			return false, nil
		}
		return false, fmt.Errorf("hello: %w", err)
	}
	return hello.SetName != "" || hello.Msg == "isdbgrid", nil
}

// detectAtomicFindAndModify reports false for FerretDB (its buildInfo has a
// ferretdbVersion), whose findAndModify is not atomic, and true otherwise.
func (a *Adapter) detectAtomicFindAndModify(ctx context.Context) (bool, error) {
	raw, err := a.db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		var se mongo.ServerError
		if errors.As(err, &se) {
			return true, nil
		}
		return false, fmt.Errorf("buildInfo: %w", err)
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
		var se mongo.ServerError
		if errors.As(err, &se) {
			return false, nil
		}
		return false, fmt.Errorf("probing $lookup: %w", err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		var se mongo.ServerError
		if errors.As(err, &se) {
			return false, nil
		}
		return false, fmt.Errorf("probing $lookup: %w", err)
	}
	return true, nil
}

// Migrate creates the indexes the adapter relies on:
//
//   - users: unique email;
//   - accounts: unique (provider, providerAccountId); userId;
//   - sessions: unique sessionToken; userId; expires (TTL);
//   - verification_tokens: unique (identifier, token); expires (TTL);
//   - authenticators: unique credentialID; (userId, credentialID).
//
// It lists each collection's indexes first and creates only those missing
// (by their default names, e.g. "email_1"), so it is cheap and safe to call
// at every start-up; an existing index of the same name is kept as it is.
//
// The expires indexes are TTL indexes (expireAfterSeconds 0) where the
// server supports them; where it does not, they are plain indexes, serving
// [Adapter.PurgeExpired], and Migrate does not fail.
// [Adapter.Capabilities] reports which.
//
// Without the unique indexes, duplicates other than a duplicate user id are
// not detected.
func (a *Adapter) Migrate(ctx context.Context) error {
	type index struct {
		keys   []string
		unique bool
		ttl    bool
	}
	sets := []struct {
		coll    *mongo.Collection
		indexes []index
	}{
		{a.users, []index{{keys: []string{fEmail}, unique: true}}},
		{a.accounts, []index{{keys: []string{fProvider, fProviderAccountID}, unique: true}, {keys: []string{fUserID}}}},
		{a.sessions, []index{{keys: []string{fSessionToken}, unique: true}, {keys: []string{fUserID}}, {keys: []string{fExpires}, ttl: true}}},
		{a.tokens, []index{{keys: []string{fIdentifier, fToken}, unique: true}, {keys: []string{fExpires}, ttl: true}}},
		{a.authenticators, []index{{keys: []string{fCredentialID}, unique: true}, {keys: []string{fUserID, fCredentialID}}}},
	}
	ttl := true
	for _, s := range sets {
		existing, err := listIndexes(ctx, s.coll)
		if err != nil {
			return fmt.Errorf("mongoadapter: indexes of %s: %w", s.coll.Name(), err)
		}
		var models []mongo.IndexModel
		for _, ix := range s.indexes {
			keys := make(bson.D, len(ix.keys))
			name := ""
			for i, k := range ix.keys {
				keys[i] = bson.E{Key: k, Value: 1}
				if i > 0 {
					name += "_"
				}
				name += k + "_1"
			}
			if spec, ok := existing[name]; ok {
				if ix.ttl {
					ttl = ttl && spec.ExpireAfterSeconds != nil
				}
				continue
			}
			if ix.ttl {
				ok, err := ensureExpiryIndex(ctx, s.coll, keys, name)
				if err != nil {
					return fmt.Errorf("mongoadapter: indexes of %s: %w", s.coll.Name(), err)
				}
				ttl = ttl && ok
				continue
			}
			opts := options.Index().SetName(name)
			if ix.unique {
				opts.SetUnique(true)
			}
			models = append(models, mongo.IndexModel{Keys: keys, Options: opts})
		}
		if len(models) == 0 {
			continue
		}
		if _, err := s.coll.Indexes().CreateMany(ctx, models); err != nil {
			return fmt.Errorf("mongoadapter: indexes of %s: %w", s.coll.Name(), err)
		}
	}
	a.ttl.Store(ttl)
	return nil
}

// listIndexes returns a collection's indexes by name; none for a
// collection that does not exist yet.
func listIndexes(ctx context.Context, coll *mongo.Collection) (map[string]mongo.IndexSpecification, error) {
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		var se mongo.ServerError
		if errors.As(err, &se) && se.HasErrorCode(26) { // NamespaceNotFound
			return nil, nil
		}
		return nil, err
	}
	out := make(map[string]mongo.IndexSpecification, len(specs))
	for _, sp := range specs {
		out[sp.Name] = sp
	}
	return out, nil
}

// ensureExpiryIndex creates a TTL index on expires, or a plain one where the
// server refuses TTL indexes. It reports whether the index is a TTL index.
func ensureExpiryIndex(ctx context.Context, coll *mongo.Collection, keys bson.D, name string) (bool, error) {
	_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    keys,
		Options: options.Index().SetName(name).SetExpireAfterSeconds(0),
	})
	if err == nil {
		return true, nil
	}
	var se mongo.ServerError
	if !errors.As(err, &se) || ctx.Err() != nil {
		return false, err
	}
	// The server refused the TTL option: fall back to a plain index, which
	// serves PurgeExpired. Reads filter on expires either way.
	if _, err2 := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys, Options: options.Index().SetName(name)}); err2 != nil {
		return false, fmt.Errorf("%w (TTL index: %w)", err2, err)
	}
	return false, nil
}

// PurgeExpired deletes every session and verification token whose expiry is
// not after now, and reports how many it deleted. Where the server has TTL
// indexes (see [Adapter.Migrate]) it expires them by itself and this is
// only needed to remove them sooner; either way the adapter never returns an
// expired session or token.
func (a *Adapter) PurgeExpired(ctx context.Context) (core.PurgeResult, error) {
	var res core.PurgeResult
	filter := bson.D{{Key: fExpires, Value: bson.D{{Key: "$lte", Value: a.nowDate()}}}}
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
