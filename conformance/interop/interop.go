// Package interop is the Auth.js interop suite: authport's adapter and
// Auth.js's own adapter for the same store (an @auth/* npm package, run in
// a Node process through conformance/nodeproc) share one database, and
// [Run] checks that each side reads, field by field, what the other wrote;
// that a session made by one is updated and deleted by the other; that
// deleteUser on either side leaves nothing of the user and nothing else
// changed; how many callers of a verification token raced between the
// sides get it; and that users without an e-mail address, written on
// either side, read back without one on the other and coexist.
//
// A pairing is small: a Go side (a [Pairing] whose Setup builds authport's
// adapter on a fresh store, starts the Node side with [Start] and reads
// the store raw for [Fixture.Leftovers]) and a JS side, a script that
// constructs the @auth/* adapter and hands it to the one JSON-lines loop
// of conformance/nodeproc (serve-adapter.mjs, which [Start] writes out and
// names in nodeproc.ServeAdapterEnv):
//
//	const { serve } = await import(process.env.AUTHPORT_SERVE_ADAPTER)
//	serve(async ({ url }) => ({ adapter: SomeAdapter(url), close: ... }))
//
// The package uses the standard library, core and nodeproc only.
package interop

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/core"
)

// Pairing is one Auth.js adapter sharing a store with an authport adapter.
type Pairing struct {
	// Name names the pairing's subtest, e.g. "drizzle/mysql".
	Name string
	// Setup makes a fresh store, opens authport's adapter on it and starts
	// the Node side on the same store. It runs once per [Run]; the cases
	// share what it makes, each with names of its own.
	Setup func(t *testing.T) *Fixture
}

// Fixture is one pairing set up: both adapters on one store, and what the
// Auth.js adapter can do.
type Fixture struct {
	// Adapter is authport's adapter.
	Adapter core.Adapter
	// Node is the Auth.js adapter, started with [Start].
	Node *nodeproc.Proc
	// Leftovers reads the store without either adapter and describes what
	// it still holds of the records of u (such as "2 sessions" or a key
	// name); nil when nothing.
	Leftovers func(t testing.TB, u Trace) []string
	// NewUserID returns the id of a user authport creates; nil: a unique
	// string.
	NewUserID func(t testing.TB) string

	// GetAccount: the Auth.js adapter has getAccount.
	GetAccount bool
	// ReturnsDeleted: Auth.js's unlinkAccount and deleteSession return the
	// account and the session they deleted.
	ReturnsDeleted bool
	// NodeAuthenticators: the Auth.js adapter has the authenticator
	// methods.
	NodeAuthenticators bool
	// Authenticators: the store has authenticators for authport (false: its
	// authenticator methods fail with core.ErrMissingAdapterMethod).
	Authenticators bool
	// AtomicUse: Auth.js's useVerificationToken is one atomic step, so that
	// exactly one of many racing callers gets a token.
	AtomicUse bool
	// NodeDeleteLeaves: Auth.js's deleteUser leaves records of the user that
	// authport's adapter no longer finds (index keys); the pairing's own
	// test names them, and the suite checks through authport's adapter only.
	NodeDeleteLeaves bool
	// OneAccountPerUser: the Auth.js adapter indexes one account per user
	// (unstorage's account:by-user-id key), so that its deleteUser deletes
	// the last one linked only; the user it deletes has one account.
	OneAccountPerUser bool
	// UsersWithoutEmail: both sides store users without an e-mail address
	// (issue 39); the suite runs its UsersWithoutEmail case. Every SQL
	// preset and MongoDB set it.
	UsersWithoutEmail bool
	// NullEmailOnce: the store's unique index of e-mail addresses counts a
	// null address as a value, so that it keeps at most one user Auth.js
	// wrote with email null (users without the field are not indexed):
	// MongoDB's sparse index, where the server has no partial indexes
	// (FerretDB v1).
	NullEmailOnce bool
	// ExpiresPrecision is that of the stored session and verification token
	// expiry; zero means a millisecond.
	ExpiresPrecision time.Duration
	// Busy, when set, reports an error as the store's transient lock
	// failure (SQLite's SQLITE_BUSY), which the race tolerates and retries.
	Busy func(error) bool
}

// Trace names a user's records, for [Fixture.Leftovers].
type Trace struct {
	ID, Email   string
	Accounts    []core.AccountKey
	Sessions    []string
	Credentials []string
}

// Start starts a pairing's script (cfg, as for [nodeproc.Start]; the
// script calls serve of conformance/nodeproc/serve-adapter.mjs) and opens
// its adapter with config. What the script answers to the opening is
// decoded into info when info is not nil.
func Start(t *testing.T, cfg nodeproc.Config, config, info any) *nodeproc.Proc {
	t.Helper()
	p := nodeproc.Start(t, cfg)
	if err := p.Do(map[string]any{"method": "$open", "args": []any{config}}, info); err != nil {
		t.Fatalf("opening the Auth.js adapter of %s: %v", cfg.Script, err)
	}
	return p
}

// Run runs the suite on each pairing, as a subtest named after it.
func Run(t *testing.T, pairings ...Pairing) {
	for _, p := range pairings {
		t.Run(p.Name, func(t *testing.T) {
			f := p.Setup(t)
			if f.ExpiresPrecision == 0 {
				f.ExpiresPrecision = time.Millisecond
			}
			t.Run("NodeWritesAuthportReads", f.nodeWritesAuthportReads)
			t.Run("AuthportWritesNodeReads", f.authportWritesNodeReads)
			t.Run("SessionAcrossSides", f.sessionAcrossSides)
			t.Run("DeleteUser", f.deleteUser)
			t.Run("VerificationTokenRace", f.verificationTokenRace)
			if f.UsersWithoutEmail {
				t.Run("UsersWithoutEmail", f.usersWithoutEmail)
			}
		})
	}
}

// The records as the Auth.js adapters return them. Ids and numbers come
// back as JSON numbers or strings (node-postgres returns BIGINT as a
// string), dates as nodeproc's {"$date": ...}.

// ID is an id or other string that may come back as a JSON number.
type ID string

// UnmarshalJSON accepts a JSON string or number.
func (j *ID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(j))
	}
	var n json.Number
	err := json.Unmarshal(b, &n)
	*j = ID(n)
	return err
}

// Int is an integer that may come back as a JSON string.
type Int int64

// UnmarshalJSON accepts a JSON number or a string holding one.
func (j *Int) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*j = Int(v)
	return err
}

// Time is a JavaScript Date.
type Time struct{ time.Time }

// UnmarshalJSON reads {"$date": "<ISO 8601>"} as a UTC time.
func (j *Time) UnmarshalJSON(b []byte) error {
	var d nodeproc.Date
	if err := json.Unmarshal(b, &d); err != nil || d.Date == "" {
		return fmt.Errorf("not a Date: %s", b)
	}
	v, err := time.Parse(time.RFC3339Nano, d.Date)
	j.Time = v.UTC()
	return err
}

// User is a user as the Auth.js adapter returns it.
type User struct {
	ID            ID      `json:"id"`
	Email         *string `json:"email"`
	EmailVerified *Time   `json:"emailVerified"`
	Name          *string `json:"name"`
	Image         *string `json:"image"`
}

// Session is a session as the Auth.js adapter returns it.
type Session struct {
	SessionToken string `json:"sessionToken"`
	UserID       ID     `json:"userId"`
	Expires      Time   `json:"expires"`
}

// SessionAndUser is the result of Auth.js's getSessionAndUser.
type SessionAndUser struct {
	Session Session `json:"session"`
	User    User    `json:"user"`
}

// VerificationToken is a verification token as the Auth.js adapter
// returns it.
type VerificationToken struct {
	Identifier string `json:"identifier"`
	Token      string `json:"token"`
	Expires    Time   `json:"expires"`
}

// Authenticator is an authenticator as the Auth.js adapter returns it.
type Authenticator struct {
	CredentialID         string  `json:"credentialID"`
	UserID               ID      `json:"userId"`
	ProviderAccountID    string  `json:"providerAccountId"`
	CredentialPublicKey  string  `json:"credentialPublicKey"`
	Counter              Int     `json:"counter"`
	CredentialDeviceType string  `json:"credentialDeviceType"`
	CredentialBackedUp   bool    `json:"credentialBackedUp"`
	Transports           *string `json:"transports"`
}

var seq atomic.Int64

// Unique returns prefix with a suffix unique within the test run.
func Unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e9, seq.Add(1))
}

// At returns the time d from now with sub-millisecond digits, in a zone
// other than UTC, as callers pass times: both sides store it in UTC to the
// millisecond.
func At(d time.Duration) time.Time {
	return time.Now().Add(d).Truncate(time.Millisecond).Add(456 * time.Microsecond).In(time.FixedZone("X", 3600))
}

// Date is t as the Auth.js side gets it.
func Date(t time.Time) nodeproc.Date { return nodeproc.DateOf(t) }

func ptr[T any](v T) *T { return &v }

// sameTime fails t unless got is want, as stored (core.NormalizeTime),
// within precision, and in UTC.
func sameTime(t *testing.T, what string, got, want time.Time, precision time.Duration) {
	t.Helper()
	if d := got.Sub(core.NormalizeTime(want)).Abs(); d >= precision || got.Location() != time.UTC {
		t.Errorf("%s: got %v, want %v in UTC (precision %v)", what, got, core.NormalizeTime(want), precision)
	}
}

// sameStr fails t unless got and want are both nil or the same string.
func sameStr(t *testing.T, what string, got, want *string) {
	t.Helper()
	if (got == nil) != (want == nil) || (got != nil && *got != *want) {
		t.Errorf("%s: got %s, want %s", what, show(got), show(want))
	}
}

func show[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%q", fmt.Sprint(*p))
}
