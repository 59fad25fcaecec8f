package interop

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// raceResult counts the callers of one race that got the token, and those
// that failed with the store's transient lock failure ([Fixture.Busy]).
type raceResult struct {
	authport, node         int
	authportBusy, nodeBusy int
}

func (r raceResult) busy() int { return r.authportBusy + r.nodeBusy }

// busy reports err as the store's transient lock failure.
func (f *Fixture) busy(err error) bool { return err != nil && f.Busy != nil && f.Busy(err) }

// retry runs op until it does not fail with a transient lock failure.
// After gcAfter of that it has Node's garbage collector run once (which
// finalizes libsql's failed statements and so releases their locks), and
// gives up after 60 s.
func (f *Fixture) retry(t *testing.T, what string, op func() error) error {
	t0 := time.Now()
	gc := false
	for {
		err := op()
		if !f.busy(err) || time.Since(t0) > 60*time.Second {
			if waited := time.Since(t0); waited > time.Second {
				t.Logf("%s waited %v for the store's lock (Node's GC run: %v)", what, waited.Round(time.Millisecond), gc)
			}
			return err
		}
		if !gc && time.Since(t0) > gcAfter {
			gc = true
			if err := f.call(nil, "$gc"); err != nil {
				t.Errorf("gc: %v", err)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// gcAfter is how long retry waits for a lock to clear by itself before it
// has Node's garbage collector run. A lock that outlives its failed
// statement has been seen to clear by itself after 8 s, and otherwise to
// stay for over a minute until a collection: waiting longer only slows
// the suite (it waited 15 s before, which was two thirds of the SQLite
// race's minute).
const gcAfter = 2 * time.Second

// race has authportN callers of authport and nodeN of Auth.js use one
// verification token at once.
func (f *Fixture) race(t *testing.T, key core.VerificationTokenKey, authportN, nodeN int) raceResult {
	t.Helper()
	var mu sync.Mutex
	var r raceResult
	var errs []error
	count := func(err error, got bool, busy, wins *int, side string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case f.busy(err):
			*busy++
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", side, err))
		case got:
			*wins++
		}
	}
	// The first authportN callers go through authport, the others
	// through Auth.js.
	coretest.Concurrently(authportN+nodeN, func(i int) {
		if i < authportN {
			v, err := f.Adapter.UseVerificationToken(t.Context(), key)
			count(err, v != nil, &r.authportBusy, &r.authport, "authport")
			return
		}
		var v *VerificationToken
		err := f.call(&v, "useVerificationToken", map[string]any{"identifier": key.Identifier, "token": key.Token})
		count(err, v != nil, &r.nodeBusy, &r.node, "Auth.js")
	})
	for _, err := range errs {
		t.Errorf("useVerificationToken during the race: %v", err)
	}
	return r
}

// newToken stores a token through Auth.js or authport.
func (f *Fixture) newToken(t *testing.T, byNode bool) core.VerificationTokenKey {
	t.Helper()
	k := core.VerificationTokenKey{Identifier: Unique("race") + "@example.com", Token: Unique("t")}
	err := f.retry(t, "createVerificationToken", func() error {
		if byNode {
			return f.call(nil, "createVerificationToken", map[string]any{"identifier": k.Identifier, "token": k.Token, "expires": Date(At(time.Hour))})
		}
		_, err := f.Adapter.CreateVerificationToken(t.Context(), core.VerificationToken{Identifier: k.Identifier, Token: k.Token, Expires: At(time.Hour)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// leftOver uses the token once more through authport after a race: 1 if it
// was still there.
func (f *Fixture) leftOver(t *testing.T, key core.VerificationTokenKey) int {
	var after *core.VerificationToken
	if err := f.retry(t, "useVerificationToken after the race", func() error {
		var err error
		after, err = f.Adapter.UseVerificationToken(t.Context(), key)
		return err
	}); err != nil {
		t.Errorf("useVerificationToken after the race: %v", err)
	}
	if after != nil {
		return 1
	}
	return 0
}

// verificationTokenRace has 50 callers use one token at once: all of
// authport's (exactly one gets it), all of Auth.js's, then, in rounds,
// 25 of each with tokens written by either side. Where both sides are
// atomic, exactly one caller in all gets it. Where the Auth.js adapter
// reads, then deletes, several may: then authport's callers still get it
// at most once, at least one caller gets it, and none is left behind.
//
// Where the store has a transient lock failure (SQLite's SQLITE_BUSY: libsql
// runs each write in autocommit, and in WAL mode a statement whose read
// snapshot went stale fails at once, busy timeout or not), callers on either
// side may fail with it. After such failures the suite has seen, with
// drizzle on libsql, the file stay locked for over a minute (the wait ends
// soon after Node's garbage collector runs: see retry) and, once in about
// 40 rounds, the token used twice (authport 1, Auth.js 1), and once the
// token gone with no caller having got it (an Auth.js caller's delete took
// effect, then failed with the lock). So there a round without lock
// failures must give exactly one use; with them, authport's callers get the
// token at most once, the lock must clear, and the token must be used at
// least once in all unless an Auth.js caller failed with the lock.
func (f *Fixture) verificationTokenRace(t *testing.T) {
	const n, rounds = 50, 6
	if f.Busy != nil {
		// A statement of Node's that failed with the store's lock can keep
		// its connection's transaction open until Node's collector
		// finalizes it (see retry); the writes Node makes on that
		// connection afterwards stay uncommitted with it, invisible to
		// authport, whose own writes meet the lock. Leave none behind for
		// the cases that follow (UsersWithoutEmail met one).
		t.Cleanup(func() {
			if err := f.call(nil, "$gc"); err != nil {
				t.Errorf("gc after the race: %v", err)
			}
		})
	}
	if r := f.race(t, f.newToken(t, false), n, 0); r.authport != 1 && r.busy() == 0 {
		t.Errorf("%d authport callers: %d got the token, want 1", n, r.authport)
	}
	r := f.race(t, f.newToken(t, true), 0, n)
	t.Logf("%d Auth.js callers: %d got the token (atomic: %v; lock failures: %d)", n, r.node, f.AtomicUse, r.nodeBusy)
	if r.node < 1 && r.busy() == 0 || f.AtomicUse && r.busy() == 0 && r.node != 1 {
		t.Errorf("%d Auth.js callers: %d got the token", n, r.node)
	}
	var multi []int
	for round := range rounds {
		byNode := round%2 == 0
		key := f.newToken(t, byNode)
		r := f.race(t, key, n/2, n/2)
		later := f.leftOver(t, key)
		g, nw := r.authport, r.node
		t.Logf("round %d (token by %s): authport %d, Auth.js %d of %d callers each got it, %d after; lock failures: authport %d, Auth.js %d",
			round, map[bool]string{true: "Auth.js", false: "authport"}[byNode], g, nw, n/2, later, r.authportBusy, r.nodeBusy)
		switch {
		case r.busy() == 0 && (f.AtomicUse || f.Busy != nil):
			if g+nw != 1 || later != 0 {
				t.Errorf("round %d: %d callers got the token (authport %d, Auth.js %d), %d after; want exactly 1 during the race", round, g+nw, g, nw, later)
			}
		case f.AtomicUse:
			t.Errorf("round %d: %d lock failures on a store both sides use atomically", round, r.busy())
		case f.Busy != nil:
			// An Auth.js caller that failed with a lock failure may still
			// have deleted the token (seen once with drizzle on libsql:
			// authport 0, Auth.js 0 of 14 answers, 11 lock failures, none
			// after): then no caller got it, and none can.
			if g > 1 || (g+nw+later < 1 && r.nodeBusy == 0) {
				t.Errorf("round %d: authport %d, Auth.js %d, after the race %d got the token; want authport at most 1, at least 1 in all", round, g, nw, later)
			}
			if g+nw+later == 0 {
				t.Logf("round %d: the token is gone and no caller got it, after %d lock failures of Auth.js's callers", round, r.nodeBusy)
			}
			if g+nw+later > 1 {
				t.Logf("round %d: the token was used %d times (authport %d, Auth.js %d) after lock failures", round, g+nw+later, g, nw)
			}
		default:
			if g > 1 || g+nw < 1 || later != 0 {
				t.Errorf("round %d: authport %d, Auth.js %d got the token, %d after; want authport at most 1, at least 1 in all, none after", round, g, nw, later)
			}
			multi = append(multi, g+nw)
		}
	}
	if !f.AtomicUse && f.Busy == nil {
		t.Logf("Auth.js's adapter reads, then deletes: not atomic; callers that got the token per round: %v", multi)
	}
}
