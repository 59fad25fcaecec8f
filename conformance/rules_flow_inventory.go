package conformance

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// inventoryFlowRules are the rules of a user's view of their sessions
// through the library ([auth.Sessions]): the sessionInventory group.
func inventoryFlowRules() []rule {
	const group = "sessionInventory"
	// signedIn creates a session for the user through the library, as a
	// sign-in from the client does, and returns its token.
	signedIn := func(t *testing.T, e *env, a *auth.Auth, userID string, c auth.Client) string {
		t.Helper()
		s, err := a.CreateSession(auth.WithClient(e.ctx, c), userID)
		if err != nil {
			t.Fatal(err)
		}
		return s.SessionToken
	}
	needs := func(t *testing.T, e *env) {
		t.Helper()
		caps := core.Probe(e.a)
		for _, x := range []core.Extension{core.ExtensionListSessionsByUserID, core.ExtensionDeleteSessionsByUserID} {
			if !caps.HasExtension(x) {
				t.Skipf("adapter %s does not implement %s (an optional extension)", caps.Adapter(), x)
			}
		}
	}
	return []rule{
		{group: group, name: "lists_the_users_sessions_with_the_current_marked", run: func(t *testing.T, e *env) {
			needs(t, e)
			c := newClock()
			a := e.newAuth(t, c, authOptions{maxAge: time.Hour, updateAge: time.Minute})
			u, other := e.storedUser(t), e.storedUser(t)
			laptop := signedIn(t, e, a, u.ID, auth.Client{IPAddress: "203.0.113.7", UserAgent: "Mozilla/5.0 (Macintosh) Firefox/145.0"})
			c.Add(5 * time.Minute)
			phone := signedIn(t, e, a, u.ID, auth.Client{IPAddress: "2001:db8:1:2::9", UserAgent: "Mozilla/5.0 (iPhone)\x00\n evil"})
			signedIn(t, e, a, other.ID, auth.Client{})
			list, err := a.Sessions().List(e.ctx, u.ID, laptop)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 {
				t.Fatalf("List = %s; want the user's 2 sessions", show(list))
			}
			// Most recently seen first: the phone signed in later.
			if list[0].ID != auth.SessionID(phone) || list[1].ID != auth.SessionID(laptop) || list[0].Current || !list[1].Current {
				t.Errorf("List = %s; want the phone's session, then the laptop's, marked current", show(list))
			}
			for _, si := range list {
				if strings.Contains(show(si), laptop) || strings.Contains(show(si), phone) {
					t.Errorf("List shows a session token: %s", show(si))
				}
			}
			if core.KeepsSessionMetadata(e.adapter) {
				if got := list[1]; got.IPAddress != "203.0.113.7" || got.UserAgent != "Mozilla/5.0 (Macintosh) Firefox/145.0" ||
					!got.CreatedAt.Equal(core.NormalizeTime(c.Now().Add(-5*time.Minute))) {
					t.Errorf("the laptop's session = %s; want its client and sign-in time", show(got))
				}
				if got := list[0].UserAgent; got != "Mozilla/5.0 (iPhone)   evil" {
					t.Errorf("the phone's user agent = %q; want control characters replaced", got)
				}
			}
			// An extension moves "last seen" on every backend: stored
			// (UpdatedAt) or derived from the expiry.
			c.Add(2 * time.Minute)
			if su, extended, err := a.Session(e.ctx, laptop); err != nil || su == nil || !extended {
				t.Fatalf("Session(laptop) = %v, %v, %v; want the session, extended", su, extended, err)
			}
			list, err = a.Sessions().List(e.ctx, u.ID, laptop)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].ID != auth.SessionID(laptop) || !list[0].LastSeenAt.Equal(core.NormalizeTime(c.Now())) {
				t.Errorf("List after the laptop's session was extended = %s; want it first, last seen now (%v)", show(list), c.Now())
			}
		}},
		{group: group, name: "revoke_reaches_only_the_users_own_sessions", run: func(t *testing.T, e *env) {
			needs(t, e)
			rec := &revocations{}
			a := e.newAuth(t, newClock(), authOptions{events: auth.Events{SessionsRevoked: rec.record}})
			attacker, victim := e.storedUser(t), e.storedUser(t)
			mine := signedIn(t, e, a, attacker.ID, auth.Client{})
			theirs := signedIn(t, e, a, victim.ID, auth.Client{})
			before := e.state(t)
			for _, id := range []string{auth.SessionID(theirs), theirs, "", "junk\x00"} {
				ok, err := a.Sessions().Revoke(e.ctx, attacker.ID, id)
				if ok || err != nil {
					t.Errorf("Revoke(attacker, %q) = %v, %v; want false, nil", id, ok, err)
				}
			}
			e.expectUnchanged(t, before, "revoking another user's session, or a token as an id")
			ok, err := a.Sessions().Revoke(e.ctx, attacker.ID, auth.SessionID(mine))
			if !ok || err != nil {
				t.Fatalf("Revoke(own session) = %v, %v; want true, nil", ok, err)
			}
			e.expectForgotten(t, "after Revoke", mine)
			if su := e.getSessionAndUser(t, theirs); su == nil {
				t.Error("the other user's session is gone")
			}
			want := []auth.SessionsRevokedEvent{{UserID: attacker.ID, Scope: "one", SessionID: auth.SessionID(mine), Count: 1}}
			expectEqual(t, "events", rec.all(), want)
		}},
		{group: group, name: "revoke_others_then_all", run: func(t *testing.T, e *env) {
			needs(t, e)
			rec := &revocations{}
			a := e.newAuth(t, newClock(), authOptions{events: auth.Events{SessionsRevoked: rec.record}})
			u, other := e.storedUser(t), e.storedUser(t)
			current := signedIn(t, e, a, u.ID, auth.Client{})
			var others []string
			for range 3 {
				others = append(others, signedIn(t, e, a, u.ID, auth.Client{}))
			}
			theirs := signedIn(t, e, a, other.ID, auth.Client{})
			if _, err := a.Sessions().RevokeOthers(e.ctx, u.ID, ""); err == nil {
				t.Error("RevokeOthers without the current session's token: no error; want one (it would end every session)")
			}
			if n, err := a.Sessions().RevokeOthers(e.ctx, u.ID, current); n != 3 || err != nil {
				t.Fatalf("RevokeOthers = %d, %v; want 3, nil", n, err)
			}
			for _, tok := range others {
				e.expectForgotten(t, "after RevokeOthers", tok)
			}
			if su, _, err := a.Session(e.ctx, current); su == nil || err != nil {
				t.Fatalf("the current session after RevokeOthers: %v, %v; want it kept", su, err)
			}
			if n, err := a.Sessions().RevokeAll(e.ctx, u.ID); n != 1 || err != nil {
				t.Fatalf("RevokeAll = %d, %v; want 1, nil", n, err)
			}
			e.expectForgotten(t, "after RevokeAll", current)
			if su := e.getSessionAndUser(t, theirs); su == nil {
				t.Error("RevokeAll of one user ended another user's session")
			}
			expectEqual(t, "events", rec.all(), []auth.SessionsRevokedEvent{
				{UserID: u.ID, Scope: "others", Count: 3}, {UserID: u.ID, Scope: "all", Count: 1}})
		}},
	}
}

// revocations records the SessionsRevoked events of an Auth.
type revocations struct {
	mu     sync.Mutex
	events []auth.SessionsRevokedEvent
}

func (r *revocations) record(_ context.Context, ev auth.SessionsRevokedEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

func (r *revocations) all() []auth.SessionsRevokedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}
