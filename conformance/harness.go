package conformance

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/authport/authport/core"
)

// Harness describes one backend to the suite.
type Harness struct {
	// Name is the backend's name and the first level of subtests under the
	// caller's test: TestConformance/<Name>/<specMethod>/<rule>. The
	// backends of this repository are the rows of its table of backends
	// (conformance/backendtable).
	Name string

	// New returns a fresh, empty adapter for one test, with a raw view of
	// the same storage. It isolates the test from every other (its own
	// database, schema, key prefix or file), registers the teardown with
	// t.Cleanup, and calls t.Skip or t.Fatal when the backend is not there
	// (package provision does this).
	New func(t testing.TB) Fixture

	// Parallel runs this backend's suite in parallel with the other
	// parallel tests of the package (t.Parallel on TestConformance/<Name>),
	// e.g. the other backends of the same adapter. Set it only when New
	// isolates every test in its own database, schema or prefix and shares
	// nothing unsynchronised between backends.
	Parallel bool

	// Groups, when not empty, runs only the rule groups named (the second
	// level of subtests, e.g. "userData"): for a variant of a backend that
	// differs from the full run in one concern only. Empty runs them all.
	Groups []string

	// Skip names rules that cannot hold on this backend's storage, each
	// with the reason, which the skipped subtest reports: a key is a
	// group ("optionalEmail") or a group and a rule ("getUser/<rule>").
	// For a variant whose schema has no room for what a rule stores (a
	// table whose e-mail column is NOT NULL keeps no user without one);
	// every rule not named must pass.
	Skip map[string]string
}

// Fixture is one test's adapter and a raw view of its storage.
type Fixture struct {
	// Adapter is the adapter under test: any value, implementing the
	// core method interfaces it supports.
	Adapter any
	// Raw reads what is really stored, without the adapter's code paths,
	// so that the suite checks the database and not only what the adapter
	// says. It may also implement [Mentioner] and [ConsistencyChecker].
	Raw Raw
	// Peer, optional, returns a second adapter instance on the same
	// storage as Adapter, as a second process of the application would
	// open one: its own adapter value (and, where the backend has them, its
	// own client and in-process state), reading and writing the records
	// Adapter reads and writes. The rules that run two instances against
	// one store are skipped, with this field named, when Peer is nil. A
	// backend whose store is the adapter value itself (an in-process map)
	// may return Adapter.
	Peer func(t testing.TB) any

	// LossyPeer, optional, returns another adapter instance on the same
	// storage, like Peer, whose connection loses replies when told to,
	// and the [ReplyLoser] that tells it. The rules of lost replies
	// (group lostReply) run the calls under test on it and check the
	// outcome through Adapter; they are skipped, with this field named,
	// when it is nil. For backends reached over a network connection whose
	// client can run a command and fail as if the connection broke before
	// the reply came (a go-redis hook, say).
	LossyPeer func(t testing.TB) (adapter any, loser ReplyLoser)
}

// ReplyLoser makes a [Fixture.LossyPeer] instance lose replies: the
// server runs the command, and the client reports a broken connection, as
// when a connection resets after the command was sent (a killed node, a
// failover). A round trip is one command or one pipeline of commands.
type ReplyLoser interface {
	// LoseReplies lets the instance's next skip round trips through, then
	// runs the n after them and loses their replies; the ones after go
	// through again.
	LoseReplies(skip, n int)
	// Lost returns how many replies were lost since LoseReplies, and
	// disarms what is left of it.
	Lost() int
}

// PersistentMentioner is optionally implemented by a [Raw] whose storage
// expires entries by itself (a TTL): it tells what mentions a string and
// will not go away by itself. The lostReply rules check that calls whose
// replies were lost leave nothing of the kind once retried; with a
// [Mentioner] only, every mention counts as persistent.
type PersistentMentioner interface {
	// PersistentMentions returns a description of each stored entry
	// without an expiry whose key or value contains s.
	PersistentMentions(ctx context.Context, s string) ([]string, error)
}

// Raw reads every stored record of one kind straight from the backend's
// storage, in any order. Expired records that are still stored are
// included. A backend decodes its own storage format here, but must not go
// through the adapter's methods.
type Raw interface {
	Users(ctx context.Context) ([]core.User, error)
	Accounts(ctx context.Context) ([]core.Account, error)
	Sessions(ctx context.Context) ([]core.Session, error)
	VerificationTokens(ctx context.Context) ([]core.VerificationToken, error)
	Authenticators(ctx context.Context) ([]core.Authenticator, error)
}

// FactorRaw is optionally implemented by a [Raw] view of a backend whose
// adapter keeps second factors ([core.FactorCreator]): it reads every stored
// factor straight from the storage, as [Raw] reads the other records. The
// factors rules check through it what is really stored (the Secret bytes
// as written, nothing written by a refused swapFactor, nothing of a user
// left after deleteUser), and the suite compares factors wherever it
// compares what is stored before and after a call; without it they check
// through the adapter only, and the rules that are about the storage itself
// are skipped, naming this interface.
type FactorRaw interface {
	// Factors returns every stored factor, in any order, each field
	// decoded from the storage without the adapter's code paths.
	Factors(ctx context.Context) ([]core.Factor, error)
}

// Mentioner is optionally implemented by a [Raw] whose storage keeps index
// entries besides the records (key-value stores). After deleteUser the suite
// asks it for everything that still mentions the user's id or e-mail, and
// fails if anything does.
type Mentioner interface {
	// Mentions returns a description (a key name, say) of each stored
	// entry whose key or value contains s.
	Mentions(ctx context.Context, s string) ([]string, error)
}

// RawWriter is optionally implemented by a [Raw] view that can store a
// record exactly as given, the way another application sharing the database
// would (Auth.js's own adapters, say), without the adapter's code paths and
// without [core.Account.Normalize]. It keeps the storage consistent (indexes
// included), so that the adapter can read the record back. The suite uses
// it to check that the adapter normalizes on read what others may have
// written un-normalized (a token_type of "Bearer"); the rules that need it
// are skipped, named, when the view does not offer it.
type RawWriter interface {
	// WriteAccount stores the account as given; its user exists.
	WriteAccount(ctx context.Context, account core.Account) error
}

// UserDataWriter is optionally implemented by a [Raw] view that can set
// application fields on a stored user the way another application sharing
// the database would: a column of the users table, a field of the user's
// document or JSON object. The rules that check that the adapter keeps what
// others wrote need it and are skipped, named, without it.
//
// The rules use the fields [UserDataFields] names; a SQL backend's test
// schema needs a column for each.
type UserDataWriter interface {
	// WriteUserData sets the fields of the user with the id to the JSON
	// values given, leaving its other fields as stored.
	WriteUserData(ctx context.Context, userID string, data map[string]json.RawMessage) error
}

// UserDataField is one application field the suite's rules store on users.
type UserDataField struct {
	// Name is the field's name, as in [core.User.Data].
	Name string
	// SQLType is a column type that holds it in PostgreSQL, MySQL and
	// SQLite, for backends that keep application fields as columns.
	SQLType string
}

// UserDataFields returns the application fields the rules use. Backends that
// keep application fields as columns of the users table (SQL) must add
// these columns to their test schema; the Raw view's Users must return the
// fields in [core.User.Data].
func UserDataFields() []UserDataField {
	return []UserDataField{
		{Name: "role", SQLType: "VARCHAR(255)"},
		{Name: "tenantId", SQLType: "VARCHAR(255)"},
		{Name: "level", SQLType: "BIGINT"},
		{Name: "beta", SQLType: "BOOLEAN"},
	}
}

// ConsistencyChecker is optionally implemented by a [Raw] whose storage
// keeps secondary indexes. The suite calls it at the end of every test and
// fails the test on an error: an index entry that points at nothing, or a
// record that no index reaches.
type ConsistencyChecker interface {
	CheckConsistency(ctx context.Context) error
}

// Records is everything a backend stores, as a [Raw] view returns it.
type Records struct {
	Users              []core.User
	Accounts           []core.Account
	Sessions           []core.Session
	VerificationTokens []core.VerificationToken
	Authenticators     []core.Authenticator
}

// RecordsReader is optionally implemented by a [Raw] view that reads every
// kind of record at once, as the views [RawSnapshot] makes do. Where the
// suite needs everything stored (the state it compares before and after a
// call, the orphans left by deleteUser), it then reads once rather than
// once per kind, each of which would read everything.
type RecordsReader interface {
	// Records returns every stored record, as the methods of [Raw] would
	// return them.
	Records(ctx context.Context) (Records, error)
}

// RawSnapshot makes a [Raw] view out of a function that reads everything
// stored at once, for backends where that is the natural read (in-process
// stores, small test databases). The view also implements [RecordsReader].
func RawSnapshot(read func(ctx context.Context) (Records, error)) Raw {
	return rawSnapshot(read)
}

type rawSnapshot func(ctx context.Context) (Records, error)

func (r rawSnapshot) Records(ctx context.Context) (Records, error) { return r(ctx) }

func (r rawSnapshot) Users(ctx context.Context) ([]core.User, error) {
	rs, err := r(ctx)
	return rs.Users, err
}

func (r rawSnapshot) Accounts(ctx context.Context) ([]core.Account, error) {
	rs, err := r(ctx)
	return rs.Accounts, err
}

func (r rawSnapshot) Sessions(ctx context.Context) ([]core.Session, error) {
	rs, err := r(ctx)
	return rs.Sessions, err
}

func (r rawSnapshot) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	rs, err := r(ctx)
	return rs.VerificationTokens, err
}

func (r rawSnapshot) Authenticators(ctx context.Context) ([]core.Authenticator, error) {
	rs, err := r(ctx)
	return rs.Authenticators, err
}
