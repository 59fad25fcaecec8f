package handlersec

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/core/auth"
)

// signOutEvents records the SignOut events of an Auth.
type signOutEvents struct {
	mu  sync.Mutex
	got []auth.SignOutEvent
}

func (r *signOutEvents) record(_ context.Context, e auth.SignOutEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
	return nil
}

func (r *signOutEvents) take() []auth.SignOutEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// renderings are the ways a listener might write an event down: %v, %+v
// and %#v of it and of the session it points to (fmt prints a pointer's
// address, not what it points to), and its JSON (which follows pointers).
func renderings(t *testing.T, e auth.SignOutEvent) []string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{string(b), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)}
	if e.Session != nil {
		out = append(out, fmt.Sprintf("%+v", *e.Session), fmt.Sprintf("%#v", *e.Session))
	}
	return out
}

// TestSignOutEventHoldsNoToken: the SignOut event of a database session
// names it by the public id the session list showed, and carries the
// session without its token; nowhere in the event is the token. With JWT
// sessions it carries the claims, and no id or session.
func TestSignOutEventHoldsNoToken(t *testing.T) {
	rec := &signOutEvents{}
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{}, func(c *auth.Config) { c.Events.SignOut = rec.record })
	uid := f.signUp("ada@example.com")
	si := f.signIn(fctx, f.a, "ada@example.com")
	token := si.Session.SessionToken
	if token == "" || si.Pending != nil {
		t.Fatalf("sign-in: %+v; want a database session", si)
	}
	list, err := f.a.Sessions().List(fctx, uid, token)
	if err != nil {
		t.Fatal(err)
	}
	id := ""
	for _, s := range list {
		if s.Current {
			id = s.ID
		}
	}
	if id == "" || id != auth.SessionID(token) {
		t.Fatalf("sessions %+v: no current one with the token's id", list)
	}
	if err := f.a.Edge().EndSession(fctx, token, nil); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 {
		t.Fatalf("SignOut events: %+v; want one", got)
	}
	e := got[0]
	if e.SessionID != id || e.Session == nil || e.Session.UserID != uid || e.Session.SessionToken != "" ||
		!e.Session.Expires.Equal(si.Session.Expires) || e.Token != nil {
		t.Errorf("SignOut event %+v (session %+v); want id %s, the session of user %s without its token, no claims", e, e.Session, id, uid)
	}
	for _, r := range renderings(t, e) {
		if strings.Contains(r, token) {
			t.Errorf("the SignOut event holds the session token: %s", r)
		}
	}
	// The sign-up's session lives on; the one signed out is gone.
	after, err := f.a.Sessions().List(fctx, uid, "")
	if err != nil || len(after) != len(list)-1 || slices.ContainsFunc(after, func(s auth.SessionInfo) bool { return s.ID == id }) {
		t.Errorf("after sign-out: sessions %+v, %v; want %d, without %s", after, err, len(list)-1, id)
	}

	rec = &signOutEvents{}
	g := newFactorFixture(t, auth.StrategyJWT, auth.SecondFactorOptions{}, func(c *auth.Config) { c.Events.SignOut = rec.record })
	uid = g.signUp("bob@example.com")
	si = g.signIn(fctx, g.a, "bob@example.com")
	if si.Claims == nil {
		t.Fatalf("JWT sign-in: %+v; want claims", si)
	}
	if err := g.a.Edge().EndSession(fctx, "", si.Claims); err != nil {
		t.Fatal(err)
	}
	got = rec.take()
	if len(got) != 1 || got[0].SessionID != "" || got[0].Session != nil || got[0].Token["sub"] != uid {
		t.Errorf("JWT SignOut events: %+v; want one with the claims only", got)
	}
}
