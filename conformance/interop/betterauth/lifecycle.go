package betterauth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// busy reports err as the store's transient lock failure.
func (s *suite) busy(err error) bool { return err != nil && s.f.Busy != nil && s.f.Busy(err) }

// raceOnce has authportN callers of authport's useVerificationToken and
// nodeN of Better Auth's consumeVerificationValue take one value at once,
// and returns how many on each side got it and how many failed with the
// store's lock.
// authport's callers each wait delay and a random time below 10 ms first,
// so that Better Auth's, a round trip to Node away, get their turn.
func (s *suite) raceOnce(t *testing.T, key core.VerificationTokenKey, authportN, nodeN int, delay time.Duration) (authport, node, busy int) {
	t.Helper()
	var mu sync.Mutex
	var errs []error
	count := func(err error, got bool, wins *int, side string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case s.busy(err):
			busy++
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", side, err))
		case got:
			*wins++
		}
	}
	coretest.Concurrently(authportN+nodeN, func(i int) {
		if i < authportN {
			time.Sleep(delay + rand.N(10*time.Millisecond))
			v, err := s.f.Adapter.UseVerificationToken(t.Context(), key)
			count(err, v != nil, &authport, "authport")
			return
		}
		var v *Verification
		err := s.call(&v, "consumeVerificationValue", key.Identifier)
		count(err, v != nil && v.Value == key.Token, &node, "Better Auth")
	})
	for _, err := range errs {
		t.Errorf("during the race: %v", err)
	}
	return authport, node, busy
}

// verificationRace has 40 callers, 20 through each side, take one
// verification value written by either side, in rounds, authport's
// callers held back longer each round so that either side wins some. Better Auth's
// consumeVerificationValue reads the newest row of the identifier, then
// deletes it by id in a transaction (its consumeOne: a DELETE whose
// affected row count decides), and authport's useVerificationToken is one
// atomic statement: where the pairing says both are atomic on its store,
// exactly one caller in all gets the value; otherwise the counts are
// logged, and none may be left behind unused twice by authport.
func (s *suite) verificationRace(t *testing.T) {
	const n = 40
	ms := time.Millisecond
	delays := []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 45 * ms, 60 * ms, 100 * ms}
	wins := map[string]int{}
	for round, delay := range delays {
		byNode := round%2 == 0
		key := core.VerificationTokenKey{Identifier: Unique("race:identifier"), Token: Unique("value")}
		if byNode {
			s.must(t, nil, "createVerificationValue", map[string]any{"identifier": key.Identifier, "value": key.Token, "expiresAt": date(at(time.Hour))})
		} else if _, err := s.f.Adapter.CreateVerificationToken(t.Context(), core.VerificationToken{Identifier: key.Identifier, Token: key.Token, Expires: at(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		g, nw, busy := s.raceOnce(t, key, n/2, n/2, delay)
		wins["authport"] += g
		wins["Better Auth"] += nw
		after, err := s.f.Adapter.UseVerificationToken(t.Context(), key)
		if err != nil && !s.busy(err) {
			t.Errorf("useVerificationToken after the race: %v", err)
		}
		later := 0
		if after != nil {
			later = 1
		}
		t.Logf("round %d (value by %s, authport's callers %v late): authport %d, Better Auth %d of %d callers each got it, %d after; lock failures %d",
			round, map[bool]string{true: "Better Auth", false: "authport"}[byNode], delay, g, nw, n/2, later, busy)
		switch {
		case s.f.AtomicConsume && busy == 0:
			if g+nw != 1 || later != 0 {
				t.Errorf("round %d: %d callers got the value (authport %d, Better Auth %d), %d after; want exactly 1", round, g+nw, g, nw, later)
			}
		default:
			if g > 1 || (g+nw+later < 1 && busy == 0) {
				t.Errorf("round %d: authport %d, Better Auth %d, after %d; want authport at most 1, at least 1 in all", round, g, nw, later)
			}
		}
	}
	t.Logf("rounds won: %v", wins)
}

// records gives the user a session and an OAuth account through each
// side; it returns the session tokens.
func (s *suite) records(t *testing.T, userID string) []string {
	t.Helper()
	ctx := context.Background()
	s.must(t, nil, "linkAccount", map[string]any{"userId": userID, "providerId": "github", "accountId": Unique("pa"), "accessToken": "gho_x"})
	if _, err := s.f.Adapter.LinkAccount(ctx, core.Account{UserID: userID, Type: core.AccountTypeOAuth, Provider: "google", ProviderAccountID: Unique("pa")}); err != nil {
		t.Fatal(err)
	}
	var ns Session
	s.must(t, &ns, "createSession", userID)
	tok := Unique("s") + "-0123456789abcdef"
	if _, err := s.f.Adapter.CreateSession(ctx, core.Session{SessionToken: tok, UserID: userID, Expires: at(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return []string{ns.Token, tok}
}

// deleteUser: deleteUser on either side leaves nothing of a user the other
// made (counted in the store, raw), and changes no other user's records.
func (s *suite) deleteUser(t *testing.T) {
	ctx := context.Background()
	a := s.f.Adapter
	bystander := s.nodeSignUp(t, Unique("bystander")+"@example.com", "correct horse battery", nil)
	s.records(t, string(bystander.User.ID))
	before := s.f.Leftovers(t, string(bystander.User.ID))
	if len(before) == 0 {
		t.Fatal("Leftovers finds nothing of a user with records")
	}

	t.Run("authport_deletes_what_node_wrote", func(t *testing.T) {
		email := Unique("del-n") + "@example.com"
		r := s.nodeSignUp(t, email, "correct horse battery", nil)
		toks := s.records(t, string(r.User.ID))
		d, err := a.DeleteUser(ctx, string(r.User.ID))
		if err != nil || d == nil || d.ID != string(r.User.ID) {
			t.Fatalf("deleteUser: %+v, %v", d, err)
		}
		if left := s.f.Leftovers(t, string(r.User.ID)); len(left) != 0 {
			t.Errorf("authport's deleteUser left %q", left)
		}
		var u *User
		s.must(t, &u, "findUserById", string(r.User.ID))
		if u != nil {
			t.Errorf("Better Auth still finds the user: %+v", u)
		}
		for _, tok := range append(toks, r.Token) {
			var res struct {
				Body *SessionAndUser `json:"body"`
			}
			s.must(t, &res, "getSession", SessionCookie(s.f.Secret, tok))
			if res.Body != nil {
				t.Errorf("Better Auth's getSession answers a session of the deleted user: %+v", res.Body)
			}
		}
		err = s.call(nil, "signIn", map[string]any{"email": email, "password": "correct horse battery"})
		if c := code(err); c != "UNAUTHORIZED" {
			t.Errorf("Better Auth's signInEmail of the deleted user: %v (code %q), want UNAUTHORIZED", err, c)
		}
	})
	t.Run("node_deletes_what_authport_wrote", func(t *testing.T) {
		email := Unique("del-g") + "@example.com"
		const pw = "correct horse battery staple"
		up, err := s.auth.Passwords().SignUp(ctx, authSignUp(email, pw))
		if err != nil || up.SignIn == nil {
			t.Fatalf("authport's sign-up: %+v, %v", up, err)
		}
		uid := up.SignIn.User.ID
		toks := append(s.records(t, uid), up.SignIn.Session.SessionToken)
		s.must(t, nil, "deleteUser", uid)
		if left := s.f.Leftovers(t, uid); len(left) != 0 {
			t.Errorf("Better Auth's deleteUser left %q", left)
		}
		if u, err := a.GetUser(ctx, uid); u != nil || err != nil {
			t.Errorf("authport's getUser after Better Auth's deleteUser: %+v, %v", u, err)
		}
		if u, err := a.GetUserByEmail(ctx, email); u != nil || err != nil {
			t.Errorf("authport's getUserByEmail after Better Auth's deleteUser: %+v, %v", u, err)
		}
		for _, tok := range toks {
			if su, err := a.GetSessionAndUser(ctx, tok); su != nil || err != nil {
				t.Errorf("authport's getSessionAndUser after Better Auth's deleteUser: %+v, %v", su, err)
			}
		}
		if _, err := s.auth.Passwords().SignIn(ctx, authSignIn(email, pw)); err == nil {
			t.Error("authport signs in the user Better Auth deleted")
		}
	})
	if after := s.f.Leftovers(t, string(bystander.User.ID)); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("another user's records changed: %q, then %q", before, after)
	}
}
