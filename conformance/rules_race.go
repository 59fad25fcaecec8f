package conformance

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// raceTrials is how many times each deleteUser race is run. A race that
// leaves an orphan only sometimes shows up within this many on every
// backend where it was seen.
const raceTrials = 50

// childWrite is a write that creates a record belonging to a user, as the
// deleteUser race rules run it.
type childWrite struct {
	kind  string // "account", "session", "authenticator"
	needs []core.Method
	// make returns a new record of the kind for the user, and the write.
	make func(e *env, userID string) (write func() error, key string)
	// owner reads, through the adapter, who owns the record with the key
	// now: "" when nobody does.
	owner func(t *testing.T, e *env, key string) string
	// stored returns the user ids of the stored records of the kind with
	// the key, from the raw view.
	stored func(s state, key string) []string
	// reuse writes a record with the same key for another user.
	reuse func(e *env, key, userID string) error
}

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
			make: func(e *env, userID string) (func() error, string) {
				acc := e.newAccount(userID)
				return func() error {
					_, err := e.a.LinkAccount(e.ctx, acc)
					return err
				}, acc.ProviderAccountID
			},
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
			reuse: func(e *env, key, userID string) error {
				acc := e.newAccount(userID)
				acc.ProviderAccountID = key
				_, err := e.a.LinkAccount(e.ctx, acc)
				return err
			},
		},
		{
			kind:  "session",
			needs: []core.Method{createSession, getSessionAndUser},
			make: func(e *env, userID string) (func() error, string) {
				s := e.newSession(userID)
				return func() error {
					_, err := e.a.CreateSession(e.ctx, s)
					return err
				}, s.SessionToken
			},
			owner:  sessionOwner,
			stored: storedSessionOwners,
			reuse: func(e *env, key, userID string) error {
				s := e.newSession(userID)
				s.SessionToken = key
				_, err := e.a.CreateSession(e.ctx, s)
				return err
			},
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
				s := e.newSession(userID)
				s.SessionToken = key
				_, err = e.a.CreateSession(e.ctx, s)
				return err
			},
		},
		{
			kind:  "authenticator",
			needs: []core.Method{createAuth, getAuth, listAuth},
			make: func(e *env, userID string) (func() error, string) {
				au := e.newAuthenticator(userID, e.id("pk"))
				return func() error {
					_, err := e.a.CreateAuthenticator(e.ctx, au)
					return err
				}, au.CredentialID
			},
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
			reuse: func(e *env, key, userID string) error {
				au := e.newAuthenticator(userID, e.id("pk"))
				au.CredentialID = key
				_, err := e.a.CreateAuthenticator(e.ctx, au)
				return err
			},
		},
	}
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
			group: "deleteUserRace",
			name:  "with_" + w.kind + "_leaves_no_orphan",
			needs: append([]core.Method{createUser, deleteUser, getUser}, w.needs...),
			run:   func(t *testing.T, e *env) { runDeleteRace(t, e, w) },
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
	u := e.newUser()
	e.createUser(t, u)
	write, key := w.make(e, u.ID)

	// Both start together; in most trials one of them is held back a
	// little (alternately, by up to 1.4 ms), so that the other's steps
	// on a networked store meet it at different points.
	var wg sync.WaitGroup
	var writeErr, deleteErr error
	start := make(chan struct{})
	lag := time.Duration(trial%15) * 100 * time.Microsecond
	wg.Go(func() {
		<-start
		if trial%2 == 1 {
			time.Sleep(lag)
		}
		writeErr = write()
	})
	wg.Go(func() {
		<-start
		if trial%2 == 0 {
			time.Sleep(lag)
		}
		_, deleteErr = e.a.DeleteUser(e.ctx, u.ID)
	})
	close(start)
	wg.Wait()

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

	// The key is free for another user.
	other := e.newUser()
	e.createUser(t, other)
	if err := w.reuse(e, key, other.ID); err != nil {
		tally.keyBlocked++
		tally.fail("trial %d: another user cannot take the %s key %q of the deleted user: %v", trial, w.kind, key, err)
	} else if ids := w.stored(e.state(t), key); len(ids) != 1 || ids[0] != other.ID {
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

// concurrently calls f(0) to f(n-1), each in its own goroutine, all
// released together so that they meet in the adapter, and returns when all
// have returned.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// orphansOf describes every stored account, session and authenticator of
// the user.
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
	return left
}

// advanceCounter is the core.AuthenticatorCounterAdvancer extension's group.
const advanceCounter = "advanceAuthenticatorCounter"

// counterRules check core.AuthenticatorCounterAdvancer: the signature
// counter only ever increases, in one atomic step, so that a replayed or
// raced WebAuthn assertion fails.
func counterRules() []rule {
	x := core.ExtensionAdvanceAuthenticatorCounter
	needs := []core.Method{createUser, createAuth, getAuth}
	advance := func(e *env, id string, c int64) (*core.Authenticator, error) {
		return e.a.AdvanceAuthenticatorCounter(e.ctx, id, c)
	}
	// setup stores a user and an authenticator with the counter.
	setup := func(t *testing.T, e *env, counter int64) core.Authenticator {
		u := e.newUser()
		e.createUser(t, u)
		au := e.newAuthenticator(u.ID, e.id("pk"))
		au.Counter = counter
		e.createAuthenticator(t, au)
		return au
	}
	return []rule{
		{group: advanceCounter, name: "exactly_one_of_concurrent_equal_counters_wins", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			const n = 20
			au := setup(t, e, 7)
			results := make([]*core.Authenticator, n)
			errs := make([]error, n)
			concurrently(n, func(i int) {
				results[i], errs[i] = advance(e, au.CredentialID, 8)
			})
			won := 0
			for i, err := range errs {
				switch {
				case err == nil:
					won++
					want := au
					want.Counter = 8
					expectEqual(t, "the winning advance's result", results[i], &want)
				case !errors.Is(err, core.ErrCounterNotIncreased):
					t.Errorf("a losing concurrent advance: %v, want an error matching ErrCounterNotIncreased", err)
				}
			}
			if won != 1 {
				t.Errorf("%d of %d concurrent advances to the same counter succeeded, want exactly 1", won, n)
			}
			if got := e.getAuthenticator(t, au.CredentialID); got == nil || got.Counter != 8 {
				t.Errorf("stored authenticator = %s, want counter 8", show(got))
			}
		}},
		{group: advanceCounter, name: "replayed_or_older_counter_fails", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 7)
			got, err := advance(e, au.CredentialID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Counter != 10 {
				t.Errorf("advance to 10 returned %s", show(got))
			}
			before := e.state(t)
			for _, c := range []int64{10, 9, 7, 1, 0} {
				got, err := advance(e, au.CredentialID, c)
				expectErr(t, fmt.Sprintf("advance to %d with 10 stored", c), err, core.ErrCounterNotIncreased)
				if got != nil {
					t.Errorf("advance to %d with 10 stored returned %s as well as an error", c, show(got))
				}
			}
			e.expectUnchanged(t, before, "the rejected advances")
			if got, err := advance(e, au.CredentialID, 1<<40); err != nil || got == nil || got.Counter != 1<<40 {
				t.Errorf("advance to 2^40 = %s, %v; want the counter 2^40", show(got), err)
			}
		}},
		{group: advanceCounter, name: "zero_counters_mean_no_counter", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 0)
			before := e.state(t)
			for range 3 {
				got, err := advance(e, au.CredentialID, 0)
				if err != nil || got == nil || got.Counter != 0 || got.CredentialID != au.CredentialID {
					t.Errorf("advance 0 → 0 (an authenticator without a counter) = %s, %v; want the authenticator unchanged", show(got), err)
				}
			}
			e.expectUnchanged(t, before, "advancing 0 to 0")
			if got, err := advance(e, au.CredentialID, 3); err != nil || got == nil || got.Counter != 3 {
				t.Errorf("advance 0 → 3 = %s, %v", show(got), err)
			}
			_, err := advance(e, au.CredentialID, 0)
			expectErr(t, "advance 3 → 0", err, core.ErrCounterNotIncreased)
		}},
		{group: advanceCounter, name: "unknown_or_negative_rejected", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 7)
			before := e.state(t)
			_, err := advance(e, "no-such-credential", 8)
			expectErr(t, "advance of an unknown credential", err, core.ErrNotFound)
			_, err = advance(e, au.CredentialID, -1)
			expectErr(t, "advance to a negative counter", err, core.ErrInvalidInput)
			e.expectUnchanged(t, before, "the rejected advances")
		}},
		{group: advanceCounter, name: "cancelled_context_errors", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 7)
			before := e.state(t)
			ctx, cancel := contextCancelled(e.ctx)
			defer cancel()
			if _, err := e.a.AdvanceAuthenticatorCounter(ctx, au.CredentialID, 8); err == nil {
				t.Error("advance with a cancelled context returned no error")
			}
			e.expectUnchanged(t, before, "advance with a cancelled context")
		}},
	}
}
