package conformance

import (
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
)

// familyFlowRules are the rules of token families (the tokenFamilies
// group): the refresh tokens of module tokens rotate through
// [auth.Edge.RotateFamily], a compare-and-set of the family session's
// expiry, so that one rotation per token, reuse ending the family, and the
// lost reply's single retry hold on a backend exactly when its adapter
// keeps the contract.
func familyFlowRules() []rule {
	const group = "tokenFamilies"
	policy := auth.FamilyPolicy{RetryAfter: time.Second, RetryWindow: 30 * time.Second}
	// start configures the library on each store (the rule's adapter, and
	// its peer when given), sharing one clock, and starts a family for a
	// new user.
	start := func(t *testing.T, e *env, c *coretest.Clock, stores ...*core.Store) ([]*auth.Auth, core.User, auth.FamilyToken) {
		t.Helper()
		if !core.Probe(e.a).HasExtension(core.ExtensionExtendSession) {
			t.Skipf("adapter %s does not implement extendSession, which token families need", core.Probe(e.a).Adapter())
		}
		var as []*auth.Auth
		for _, s := range stores {
			as = append(as, e.newAuth(t, c, authOptions{adapter: s, maxAge: 30 * 24 * time.Hour}))
		}
		u := e.storedUser(t)
		s, err := as[0].CreateSession(e.ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return as, u, auth.FamilyToken{Session: s.SessionToken, Expires: core.NormalizeTime(s.Expires), ClientID: "cli"}
	}
	rotate := func(t *testing.T, e *env, a *auth.Auth, ft auth.FamilyToken, want auth.FamilyOutcome, what string) auth.FamilyToken {
		t.Helper()
		got, next, _, err := a.Edge().RotateFamily(e.ctx, ft, "cli", policy)
		if err != nil || got != want {
			t.Fatalf("%s: outcome %d, %v; want %d", what, got, err, want)
		}
		return next
	}
	ended := func(t *testing.T, e *env, ft auth.FamilyToken, what string) {
		t.Helper()
		if su := e.getSessionAndUser(t, ft.Session); su != nil {
			t.Errorf("%s: the family's session is still there; want the family ended", what)
		}
	}
	return []rule{
		{group: group, name: "concurrent_rotations_on_two_instances_one_successor", needsPeer: true, run: func(t *testing.T, e *env) {
			// 50 refreshes of one token at once, on two instances: one
			// rotates; the others presented a token rotated at that
			// instant, a concurrent use, which is reuse: the family ends.
			// Five families, one after the other, so that a store whose
			// rotation is not atomic is caught whatever the scheduling.
			c := newClock()
			for round := range 5 {
				as, _, ft := start(t, e, c, e.a, e.peer)
				var mu sync.Mutex
				outcomes := map[auth.FamilyOutcome]int{}
				var successor auth.FamilyToken
				coretest.Concurrently(50, func(i int) {
					got, next, _, err := as[i%2].Edge().RotateFamily(e.ctx, ft, "cli", policy)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						t.Errorf("round %d, rotation %d: %v", round, i, err)
						return
					}
					outcomes[got]++
					if got == auth.FamilyRotated {
						successor = next
					}
				})
				if outcomes[auth.FamilyRotated] != 1 || outcomes[auth.FamilyRetried] != 0 ||
					outcomes[auth.FamilyReused]+outcomes[auth.FamilyEnded] != 49 || outcomes[auth.FamilyReused] == 0 {
					t.Fatalf("round %d: outcomes of 50 concurrent rotations = %v; want 1 rotated, the others reused (ending the family) or ended", round, outcomes)
				}
				ended(t, e, ft, "after the concurrent reuse")
				rotate(t, e, as[1], successor, auth.FamilyEnded, "the successor after the family ended")
			}
		}},
		{group: group, name: "reuse_ends_the_family", run: func(t *testing.T, e *env) {
			c := newClock()
			as, _, r0 := start(t, e, c, e.a)
			r1 := rotate(t, e, as[0], r0, auth.FamilyRotated, "the first rotation")
			c.Add(time.Minute)
			r2 := rotate(t, e, as[0], r1, auth.FamilyRotated, "the second rotation")
			if r2.Generation != 2 || !r2.Expires.After(r1.Expires) {
				t.Errorf("the second successor = %+v; want generation 2, a later expiry than %v", r2, r1.Expires)
			}
			c.Add(time.Minute)
			rotate(t, e, as[0], r1, auth.FamilyReused, "r1 presented again")
			ended(t, e, r1, "after reuse")
			rotate(t, e, as[0], r2, auth.FamilyEnded, "the current token after the family ended")
		}},
		{group: group, name: "lost_reply_retry_gets_the_successor_once", needsPeer: true, run: func(t *testing.T, e *env) {
			// The reply of a rotation is lost; the client retries a few
			// seconds later, on another instance: it gets the same
			// successor, once; a second retry is reuse.
			c := newClock()
			as, _, r0 := start(t, e, c, e.a, e.peer)
			lost := rotate(t, e, as[0], r0, auth.FamilyRotated, "the rotation whose reply is lost")
			c.Add(3 * time.Second)
			if retry := rotate(t, e, as[1], r0, auth.FamilyRetried, "the retry"); retry != lost {
				t.Errorf("the retry's successor = %+v; want the lost one %+v", retry, lost)
			}
			if active, _, _, err := as[1].Edge().FamilyActive(e.ctx, lost); err != nil || !active {
				t.Errorf("FamilyActive(successor) = %v, %v; want active", active, err)
			}
			c.Add(time.Second)
			rotate(t, e, as[0], r0, auth.FamilyReused, "a second retry")
			ended(t, e, r0, "after the second retry")
		}},
		{group: group, name: "another_client_or_a_foreign_expiry_changes_nothing", run: func(t *testing.T, e *env) {
			c := newClock()
			as, _, r0 := start(t, e, c, e.a)
			before := e.state(t)
			if got, _, _, err := as[0].Edge().RotateFamily(e.ctx, r0, "other-client", policy); err != nil || got != auth.FamilyRefused {
				t.Errorf("rotation by another client = %d, %v; want refused", got, err)
			}
			forged := r0
			forged.Expires = r0.Expires.Add(time.Hour)
			if got, _, _, err := as[0].Edge().RotateFamily(e.ctx, forged, "cli", policy); err != nil || got != auth.FamilyRefused {
				t.Errorf("rotation of a token with an expiry the family never had = %d, %v; want refused", got, err)
			}
			missing := r0
			missing.Session = "no-such-session"
			if got, _, _, err := as[0].Edge().RotateFamily(e.ctx, missing, "cli", policy); err != nil || got != auth.FamilyEnded {
				t.Errorf("rotation of an unknown family = %d, %v; want ended", got, err)
			}
			e.expectUnchanged(t, before, "refused rotations")
		}},
		{group: group, name: "revoking_the_session_ends_the_family", run: func(t *testing.T, e *env) {
			// The family is one of the user's sessions: signing out
			// everywhere ends it.
			if !core.Probe(e.a).HasExtension(core.ExtensionDeleteSessionsByUserID) {
				t.Skipf("adapter %s does not implement deleteSessionsByUserId", core.Probe(e.a).Adapter())
			}
			c := newClock()
			as, u, r0 := start(t, e, c, e.a)
			if n, err := as[0].Sessions().RevokeAll(e.ctx, u.ID); err != nil || n != 1 {
				t.Fatalf("RevokeAll = %d, %v; want the family's session", n, err)
			}
			rotate(t, e, as[0], r0, auth.FamilyEnded, "a rotation after the user signed out everywhere")
		}},
	}
}
