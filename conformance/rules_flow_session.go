package conformance

import (
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// sessionLifetimeRules are the rules of session tokens, expiry and
// extension through the library (the sessionLifetime group).
func sessionLifetimeRules() []rule {
	return []rule{
		{group: "sessionLifetime", name: "new_tokens_are_random_256_bit", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			s1, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !hex64.MatchString(s1.SessionToken) || s1.SessionToken == s2.SessionToken {
				t.Errorf("session tokens %q and %q: want two different 64-digit hex (256-bit) tokens", s1.SessionToken, s2.SessionToken)
			}
			if want := core.NormalizeTime(c.Now().Add(time.Hour)); !s1.Expires.Equal(want) {
				t.Errorf("expires = %v, want now+maxAge = %v", s1.Expires, want)
			}
		}},
		{group: "sessionLifetime", name: "unknown_token_is_nil", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			for _, tok := range []string{"", "no-such-session"} {
				if su, _, err := a.Session(e.ctx, tok); su != nil || err != nil {
					t.Errorf("Session(%q) = %s, %v; want nil, nil", tok, show(su), err)
				}
			}
		}},
		{group: "sessionLifetime", name: "extended_at_most_once_per_update_age", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{maxAge: time.Hour, updateAge: 10 * time.Minute})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			stored := func() time.Time {
				ss := e.state(t).Sessions
				if len(ss) != 1 {
					t.Fatalf("%d sessions stored, want 1", len(ss))
				}
				return ss[0].Expires
			}
			created := s.Expires
			c.Add(9 * time.Minute)
			if su, _, err := a.Session(e.ctx, s.SessionToken); err != nil || su == nil {
				t.Fatalf("Session after 9m = %s, %v", show(su), err)
			}
			if got := stored(); !got.Equal(created) {
				t.Errorf("after 9m (updateAge 10m) expires moved to %v, want it unchanged at %v", got, created)
			}
			c.Add(2 * time.Minute)
			su, _, err := a.Session(e.ctx, s.SessionToken)
			if err != nil || su == nil {
				t.Fatalf("Session after 11m = %s, %v", show(su), err)
			}
			want := core.NormalizeTime(c.Now().Add(time.Hour))
			if got := stored(); !got.Equal(want) || !su.Session.Expires.Equal(want) {
				t.Errorf("after 11m expires = %v (returned %v), want now+maxAge = %v", got, su.Session.Expires, want)
			}
			c.Add(time.Minute)
			if _, _, err := a.Session(e.ctx, s.SessionToken); err != nil {
				t.Fatal(err)
			}
			if got := stored(); !got.Equal(want) {
				t.Errorf("a minute after the extension expires moved again, to %v", got)
			}
		}},
		{group: "sessionLifetime", name: "update_age_zero_extends_every_access", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{maxAge: time.Hour, updateAge: 0})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				c.Add(time.Second)
				su, _, err := a.Session(e.ctx, s.SessionToken)
				if err != nil || su == nil {
					t.Fatalf("Session = %s, %v", show(su), err)
				}
				if want := core.NormalizeTime(c.Now().Add(time.Hour)); !su.Session.Expires.Equal(want) {
					t.Errorf("expires = %v, want %v", su.Session.Expires, want)
				}
			}
		}},
		{group: "sessionLifetime", name: "expired_session_deleted", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{maxAge: time.Hour})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			c.Add(time.Hour + time.Second)
			e.expectRemovedOnAccess(t, a, s.SessionToken)
		}},
	}
}

// sessionCostRules are the sessionLifetime rules on what a session lookup
// costs the store: reads and writes counted, expired sessions removed
// without a write of the library's own, one extension write per burst.
func sessionCostRules() []rule {
	return []rule{
		{group: "sessionLifetime", name: "expired_session_is_nil_without_a_library_write", run: func(t *testing.T, e *env) {
			// Expired by the adapter's clock too, which hides it: the
			// library gets nil and calls no write method (it cannot tell
			// the token from an unknown one, and a write per unknown
			// token would let junk cookies turn reads into writes). Removing it
			// is the adapter's, as it reads (the rule
			// getSessionAndUser/expired_session_removed_on_access checks
			// the raw store), by PurgeExpired or by a TTL.
			counting, store := e.counting()
			a := e.newAuth(t, newClock(), authOptions{adapter: store})
			u := e.newUser()
			e.createUser(t, u)
			s := e.newSession(u.ID)
			s.Expires = time.Now().Add(-time.Minute)
			e.createSession(t, s)
			counting.Reset()
			if su, _, err := a.Session(e.ctx, s.SessionToken); su != nil || err != nil {
				t.Errorf("Session of an expired session = %s, %v; want nil, nil", show(su), err)
			}
			if w := counting.Writes(); len(w) != 0 {
				t.Errorf("Session of a hidden expired session wrote: %v; want no write", w)
			}
			if e.purger != nil {
				if _, err := e.purger.PurgeExpired(e.ctx); err != nil {
					t.Fatal(err)
				}
				if ss := e.state(t).Sessions; len(ss) != 0 {
					t.Errorf("the expired session is still stored after PurgeExpired: %s", show(ss))
				}
			}
		}},
		{group: "sessionLifetime", name: "unknown_token_one_read_no_write", run: func(t *testing.T, e *env) {
			// A junk session cookie costs one getSessionAndUser and
			// nothing else: a deleteSession per unknown token would let
			// anyone turn cheap reads into writes (on bbolt, a synced
			// commit each), a denial of service.
			counting, store := e.counting()
			a := e.newAuth(t, newClock(), authOptions{adapter: store})
			u := e.newUser()
			e.createUser(t, u)
			live, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			before := e.state(t)
			counting.Reset()
			const n = 5
			for i := range n {
				token := e.newSession(u.ID).SessionToken
				if i == 0 {
					token = flipLast(live.SessionToken)
				}
				if su, _, err := a.Session(e.ctx, token); su != nil || err != nil {
					t.Fatalf("Session of an unknown token = %s, %v; want nil, nil", show(su), err)
				}
			}
			calls := counting.Calls()
			if calls[getSessionAndUser] != n || len(calls) != 1 {
				t.Errorf("%d lookups of unknown tokens made the calls %v; want %d getSessionAndUser and nothing else", n, calls, n)
			}
			e.expectUnchanged(t, before, "lookups of unknown session tokens")
		}},
		{group: "sessionLifetime", name: "concurrent_requests_extend_once", run: func(t *testing.T, e *env) {
			// A burst of requests on a session due for extension (a
			// page loading its API calls) writes expires once, not once
			// per request, and every request sees the new expiry.
			counting, store := e.counting()
			c := newClock()
			a := e.newAuth(t, c, authOptions{adapter: store, maxAge: time.Hour, updateAge: 10 * time.Minute})
			s := e.dueSession(t, a, c)
			counting.Reset()
			const n = 8
			e.burst(t, []*auth.Auth{a}, s.SessionToken, n, core.NormalizeTime(c.Now().Add(time.Hour)))
			// One write: updateSession, or extendSession when the adapter
			// offers that extension (core/auth then extends with it).
			if w := counting.Writes(); w[updateSession]+w[core.MethodExtendSession] != 1 || len(w) != 1 {
				t.Errorf("%d concurrent requests on a session due for extension wrote %v; want one updateSession or extendSession", n, w)
			}
		}},
		{group: "sessionLifetime", name: "sign_out_deletes_session", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.SignOut(e.ctx, s.SessionToken); err != nil {
				t.Fatal(err)
			}
			if su, _, _ := a.Session(e.ctx, s.SessionToken); su != nil {
				t.Errorf("Session after sign-out = %s", show(su))
			}
			if ss := e.state(t).Sessions; len(ss) != 0 {
				t.Errorf("sessions stored after sign-out: %s", show(ss))
			}
		}},

		{group: "sessionLifetime", name: "default_max_age_and_update_age", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{defaults: true})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := core.NormalizeTime(c.Now().Add(30 * 24 * time.Hour)); !s.Expires.Equal(want) {
				t.Errorf("expires = %v, want now+30 days = %v", s.Expires, want)
			}
			c.Add(23 * time.Hour)
			if su, _, err := a.Session(e.ctx, s.SessionToken); err != nil || su == nil {
				t.Fatalf("Session after 23h = %s, %v", show(su), err)
			}
			if got := e.getSessionAndUser(t, s.SessionToken); got == nil || !got.Session.Expires.Equal(s.Expires) {
				t.Errorf("after 23h (default updateAge 24h) the session is %s, want expires unchanged at %v", show(got), s.Expires)
			}
			c.Add(2 * time.Hour)
			su, _, err := a.Session(e.ctx, s.SessionToken)
			if err != nil || su == nil {
				t.Fatalf("Session after 25h = %s, %v", show(su), err)
			}
			want := core.NormalizeTime(c.Now().Add(30 * 24 * time.Hour))
			if got := e.getSessionAndUser(t, s.SessionToken); got == nil || !got.Session.Expires.Equal(want) || !su.Session.Expires.Equal(want) {
				t.Errorf("after 25h the session is %s (returned %v), want expires now+30 days = %v", show(got), su.Session.Expires, want)
			}
		}},
	}
}
