package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// raceTrials is how many times each deleteUser race is run. A race that
// leaves an orphan only sometimes shows up within this many on every
// backend where it was seen.
const raceTrials = 50

// childWrite is a write that creates a record belonging to a user, as the
// deleteUser race rules run it.
type childWrite struct {
	kind  string // "account", "session", "authenticator", "factor"
	needs []core.Method
	// extension, when set, is the optional extension the write needs.
	extension core.Extension
	// make returns a new record of the kind for the user, and the write.
	make func(e *env, userID string) (write func() error, key string)
	// owner reads, through the adapter, who owns the record with the key
	// now: "" when nobody does.
	owner func(t *testing.T, e *env, key string) string
	// stored returns the user ids of the stored records of the kind with
	// the key, from the raw view.
	stored func(s state, key string) []string
	// factorRaw marks a kind the raw view shows only when it is a
	// [FactorRaw]: without one, stored and owner see nothing, and the
	// stored owners are not checked (listFactorsByUserId is, instead).
	factorRaw bool
	// reuse writes a record with the same key for another user.
	reuse func(e *env, key, userID string) error
}

// keyedKind is a kind of record that is stored under a key another record
// can take: an OAuth account under its providerAccountId (provider github),
// a session under its token, an authenticator under its credential id.
type keyedKind[T any] struct {
	fresh func(e *env, userID string) T // a new record of the user, under a fresh key
	key   func(rec *T) *string          // the record's key
	write func(e *env, rec T) error     // stores the record through the adapter
}

// ready makes a new record of the user and returns the write that stores
// it, and its key.
func (k keyedKind[T]) ready(e *env, userID string) (write func() error, key string) {
	rec := k.fresh(e, userID)
	return func() error { return k.write(e, rec) }, *k.key(&rec)
}

// insert stores a new record of the user.
func (k keyedKind[T]) insert(e *env, userID string) error { return k.write(e, k.fresh(e, userID)) }

// under stores a new record of the user under the key.
func (k keyedKind[T]) under(e *env, key, userID string) error {
	rec := k.fresh(e, userID)
	*k.key(&rec) = key
	return k.write(e, rec)
}

var (
	accountKind = keyedKind[core.Account]{
		fresh: (*env).newAccount,
		key:   func(a *core.Account) *string { return &a.ProviderAccountID },
		write: func(e *env, a core.Account) error { return errOf(e.a.LinkAccount(e.ctx, a)) },
	}
	sessionKind = keyedKind[core.Session]{
		fresh: (*env).newSession,
		key:   func(s *core.Session) *string { return &s.SessionToken },
		write: func(e *env, s core.Session) error { return errOf(e.a.CreateSession(e.ctx, s)) },
	}
	authenticatorKind = keyedKind[core.Authenticator]{
		fresh: func(e *env, userID string) core.Authenticator { return e.newAuthenticator(userID, e.id("pk")) },
		key:   func(au *core.Authenticator) *string { return &au.CredentialID },
		write: func(e *env, au core.Authenticator) error { return errOf(e.a.CreateAuthenticator(e.ctx, au)) },
	}
)

// sessionOwner is the owner of a childWrite of a session: the user of the
// session with the token, through the adapter.
func sessionOwner(t *testing.T, e *env, key string) string {
	if su := e.getSessionAndUser(t, key); su != nil {
		return su.User.ID
	}
	return ""
}

// storedSessionOwners is the stored of a childWrite of a session: the user
// ids of the stored sessions with the token.
func storedSessionOwners(s state, key string) []string {
	var ids []string
	for _, se := range s.Sessions {
		if se.SessionToken == key {
			ids = append(ids, se.UserID)
		}
	}
	return ids
}

func childWrites() []childWrite {
	return []childWrite{
		{
			kind:  "account",
			needs: []core.Method{linkAccount, getUserByAccount},
			make:  accountKind.ready,
			owner: func(t *testing.T, e *env, key string) string {
				u, err := e.a.GetUserByAccount(e.ctx, core.AccountKey{Provider: "github", ProviderAccountID: key})
				if err != nil {
					t.Fatalf("getUserByAccount: %v", err)
				}
				if u == nil {
					return ""
				}
				return u.ID
			},
			stored: func(s state, key string) []string {
				var ids []string
				for _, a := range s.Accounts {
					if a.Provider == "github" && a.ProviderAccountID == key {
						ids = append(ids, a.UserID)
					}
				}
				return ids
			},
			reuse: accountKind.under,
		},
		{
			kind:   "session",
			needs:  []core.Method{createSession, getSessionAndUser},
			make:   sessionKind.ready,
			owner:  sessionOwner,
			stored: storedSessionOwners,
			reuse:  sessionKind.under,
		},
		{
			// Moving an existing session (of another user) to the user.
			kind:  "session_move",
			needs: []core.Method{createSession, updateSession, getSessionAndUser},
			make: func(e *env, userID string) (func() error, string) {
				holder := e.newUser()
				if _, err := e.a.CreateUser(e.ctx, holder); err != nil {
					return func() error { return fmt.Errorf("setting up the session's first user: %w", err) }, ""
				}
				s := e.newSession(holder.ID)
				if _, err := e.a.CreateSession(e.ctx, s); err != nil {
					return func() error { return fmt.Errorf("setting up the session: %w", err) }, ""
				}
				return func() error {
					_, err := e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: s.SessionToken, UserID: core.Set(userID)})
					return err
				}, s.SessionToken
			},
			owner:  sessionOwner,
			stored: storedSessionOwners,
			reuse: func(e *env, key, userID string) error {
				// The session stayed with its first user, or went with the
				// deleted one: either way another user can have it.
				got, err := e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: key, UserID: core.Set(userID)})
				if err != nil || got != nil {
					return err
				}
				return sessionKind.under(e, key, userID)
			},
		},
		{
			kind:  "authenticator",
			needs: []core.Method{createAuth, getAuth, listAuth},
			make:  authenticatorKind.ready,
			owner: func(t *testing.T, e *env, key string) string {
				if au := e.getAuthenticator(t, key); au != nil {
					return au.UserID
				}
				return ""
			},
			stored: func(s state, key string) []string {
				var ids []string
				for _, au := range s.Authenticators {
					if au.CredentialID == key {
						ids = append(ids, au.UserID)
					}
				}
				return ids
			},
			reuse: authenticatorKind.under,
		},
		{
			kind:      "factor",
			extension: core.ExtensionCreateFactor,
			make:      factorKind.ready,
			owner: func(t *testing.T, e *env, key string) string {
				if ids := storedFactorOwners(e.state(t), key); len(ids) > 0 {
					return ids[0]
				}
				return ""
			},
			stored:    storedFactorOwners,
			factorRaw: true,
			reuse:     factorKind.under,
		},
	}
}

// factorKind is a second factor, stored under its id.
var factorKind = keyedKind[core.Factor]{
	fresh: (*env).newFactor,
	key:   func(f *core.Factor) *string { return &f.ID },
	write: func(e *env, f core.Factor) error { return errOf(e.a.CreateFactor(e.ctx, f)) },
}

// storedFactorOwners is the stored of a childWrite of a factor: the user
// ids of the stored factors with the id, as a [FactorRaw] view shows them.
func storedFactorOwners(s state, key string) []string {
	var ids []string
	for _, f := range s.Factors {
		if f.ID == key {
			ids = append(ids, f.UserID)
		}
	}
	return ids
}

// raceRules run deleteUser concurrently with each write that creates a
// record of the user. Whichever wins, once both have returned and the user
// is gone, nothing of the user may remain: no record, no index entry, nothing
// a user created again with the same id would inherit, and nothing that
// blocks the record's key (an OAuth account's (provider, providerAccountId))
// from being used by another user.
func raceRules() []rule {
	var rs []rule
	for _, w := range childWrites() {
		rs = append(rs, rule{
			group:     "deleteUserRace",
			name:      "with_" + w.kind + "_leaves_no_orphan",
			needs:     append([]core.Method{createUser, deleteUser, getUser}, w.needs...),
			extension: w.extension,
			run: func(t *testing.T, e *env) {
				if w.extension == core.ExtensionCreateFactor {
					for _, m := range core.FactorMethods()[1:] {
						e.skipWithout(t, core.Extension(m))
					}
				}
				runDeleteRace(t, e, w)
			},
		})
	}
	return rs
}

// raceTally counts what went wrong over the trials of one race rule.
type raceTally struct {
	writeWon, deleteWon      int // how the race went
	orphans, mentions        int // records or index entries of the deleted user left
	inherited, keyBlocked    int // a user with the same id got the record; the key cannot be reused
	firstFailures            []string
	unexpectedErr, userAlive int
	badTrials                int // trials with any of the above
}

func (r *raceTally) fail(format string, args ...any) {
	if len(r.firstFailures) < 5 {
		r.firstFailures = append(r.firstFailures, fmt.Sprintf(format, args...))
	}
}

func runDeleteRace(t *testing.T, e *env, w childWrite) {
	var tally raceTally
	mentioner, _ := e.raw.(Mentioner)
	for trial := range raceTrials {
		before := tally.orphans + tally.mentions + tally.inherited + tally.keyBlocked + tally.unexpectedErr + tally.userAlive
		runDeleteRaceTrial(t, e, w, trial, &tally, mentioner)
		if tally.orphans+tally.mentions+tally.inherited+tally.keyBlocked+tally.unexpectedErr+tally.userAlive > before {
			tally.badTrials++
		}
	}
	t.Logf("deleteUser vs %s, %d trials: write first %d, delete first %d; orphaned %d, index entries left %d, inherited %d, key blocked %d, user alive %d, unexpected errors %d",
		w.kind, raceTrials, tally.writeWon, tally.deleteWon, tally.orphans, tally.mentions, tally.inherited, tally.keyBlocked, tally.userAlive, tally.unexpectedErr)
	if tally.badTrials > 0 {
		t.Errorf("deleteUser racing the %s write: %d of %d trials went wrong (orphaned %d, index entries left %d, inherited by a re-created user %d, key blocked %d, user alive %d, unexpected errors %d); first failures:\n  %s",
			w.kind, tally.badTrials, raceTrials, tally.orphans, tally.mentions, tally.inherited, tally.keyBlocked, tally.userAlive, tally.unexpectedErr, joinLines(tally.firstFailures))
	}
}

// runDeleteRaceTrial runs one trial of the race and counts what went wrong.
func runDeleteRaceTrial(t *testing.T, e *env, w childWrite, trial int, tally *raceTally, mentioner Mentioner) {
	u := e.storedUser(t)
	write, key := w.make(e, u.ID)

	// Both start together; in most trials one of them is held back a
	// little (alternately, by up to 1.4 ms), so that the other's steps
	// on a networked store meet it at different points.
	// Caller 0 writes, caller 1 deletes; the one held back is the write
	// in odd trials, the delete in even ones.
	var writeErr, deleteErr error
	lag := time.Duration(trial%15) * 100 * time.Microsecond
	coretest.Concurrently(2, func(i int) {
		if i != trial%2 {
			time.Sleep(lag)
		}
		if i == 0 {
			writeErr = write()
		} else {
			_, deleteErr = e.a.DeleteUser(e.ctx, u.ID)
		}
	})

	if deleteErr != nil {
		tally.unexpectedErr++
		tally.fail("trial %d: deleteUser: %v", trial, deleteErr)
		return
	}
	switch {
	case writeErr == nil:
		tally.writeWon++
	case errors.Is(writeErr, core.ErrNotFound):
		tally.deleteWon++
	default:
		tally.unexpectedErr++
		tally.fail("trial %d: the %s write racing deleteUser: %v, want success or an error matching ErrNotFound", trial, w.kind, writeErr)
	}
	if got := e.getUser(t, u.ID); got != nil {
		tally.userAlive++
		tally.fail("trial %d: getUser after deleteUser returned = %s", trial, show(got))
		return
	}

	s := e.state(t)
	if left := orphansOf(s, u.ID); len(left) > 0 {
		tally.orphans++
		tally.fail("trial %d (%s write %s): records of the deleted user left: %v", trial, w.kind, outcome(writeErr), left)
	}
	if mentioner != nil {
		found, err := mentioner.Mentions(e.ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) > 0 {
			tally.mentions++
			tally.fail("trial %d: stored entries still mention the deleted user %q: %v", trial, u.ID, found)
		}
	}

	// The same id again: it must start with nothing.
	again := e.newUser()
	again.ID = u.ID
	e.createUser(t, again)
	if owner := w.owner(t, e, key); owner == u.ID {
		tally.inherited++
		tally.fail("trial %d: a user created again with the deleted user's id owns its %s %q", trial, w.kind, key)
	}
	if e.a.Capabilities().Has(core.MethodListAuthenticatorsByUserID) {
		list, err := e.a.ListAuthenticatorsByUserID(e.ctx, u.ID)
		if err != nil {
			t.Fatalf("listAuthenticatorsByUserId: %v", err)
		}
		if len(list) > 0 {
			tally.inherited++
			tally.fail("trial %d: a user created again with the deleted user's id lists authenticators %s", trial, show(list))
		}
	}
	if e.a.Capabilities().HasExtension(core.ExtensionListFactorsByUserID) {
		list, err := e.a.ListFactorsByUserID(e.ctx, u.ID)
		if err != nil {
			t.Fatalf("listFactorsByUserId: %v", err)
		}
		if len(list) > 0 {
			tally.inherited++
			tally.fail("trial %d: a user created again with the deleted user's id lists factors %v", trial, factorIDs(list))
		}
	}

	// The key is free for another user.
	other := e.newUser()
	e.createUser(t, other)
	// A kind the raw view does not show is checked by the reuse's success
	// alone.
	_, factorsShown := e.raw.(FactorRaw)
	shown := !w.factorRaw || factorsShown
	if err := w.reuse(e, key, other.ID); err != nil {
		tally.keyBlocked++
		tally.fail("trial %d: another user cannot take the %s key %q of the deleted user: %v", trial, w.kind, key, err)
	} else if ids := w.stored(e.state(t), key); shown && (len(ids) != 1 || ids[0] != other.ID) {
		tally.keyBlocked++
		tally.fail("trial %d: after another user took the %s key %q, stored owners are %v, want [%s]", trial, w.kind, key, ids, other.ID)
	}
}

func outcome(err error) string {
	if err == nil {
		return "succeeded"
	}
	return "failed"
}

func joinLines(ss []string) string { return strings.Join(ss, "\n  ") }

// expectOneWon fails the test unless exactly one of errs, the errors of
// concurrent calls, is nil and every other matches target: loser names a
// losing call, and calls says what the calls were and what the one that
// won did ("concurrent createUser calls with one e-mail succeeded").
func expectOneWon(t *testing.T, errs []error, target error, loser, calls string) {
	t.Helper()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			expectErr(t, loser, err, target)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d %s, want exactly 1", won, len(errs), calls)
	}
}

// orphansOf describes every stored account, session, authenticator and
// factor (where the raw view shows factors) of the user.
func orphansOf(s state, userID string) []string {
	var left []string
	for _, a := range s.Accounts {
		if a.UserID == userID {
			left = append(left, "account "+a.Provider+"/"+a.ProviderAccountID)
		}
	}
	for _, se := range s.Sessions {
		if se.UserID == userID {
			left = append(left, "session "+se.SessionToken)
		}
	}
	for _, au := range s.Authenticators {
		if au.UserID == userID {
			left = append(left, "authenticator "+au.CredentialID)
		}
	}
	for _, f := range s.Factors {
		if f.UserID == userID {
			left = append(left, "factor "+f.ID)
		}
	}
	return left
}

// advanceCounter is the core.AuthenticatorCounterAdvancer extension's group.
const advanceCounter = "advanceAuthenticatorCounter"

// throughBoth applies the updates at once, alternately through the
// adapter and its second instance on the same store (e.peer), with call
// (one of the *core.Store update methods), and fails the test on an error.
func throughBoth[U, R any](t *testing.T, e *env, updates []U, call func(s *core.Store, ctx context.Context, u U) (R, error)) {
	t.Helper()
	instances := [2]*core.Store{e.a, e.peer}
	errs := make([]error, len(updates))
	coretest.Concurrently(len(updates), func(i int) {
		_, errs[i] = call(instances[i%2], e.ctx, updates[i])
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
