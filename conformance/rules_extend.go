package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
)

// extendSession is the group of the extendSession extension's rules.
const extendSession = string(core.MethodExtendSession)

// extendRules are the rules of the extendSession extension
// ([core.SessionExtender]): a conditional move of a session's expiry, so
// that of the instances finding one session due for extension at once
// only one writes (a page loading its API calls must not write expires once
// per request).
func extendRules() []rule {
	x := core.ExtensionExtendSession
	needs := []core.Method{createUser, createSession, getSessionAndUser}
	// stored creates a user and a session of it, and returns the session
	// as stored.
	stored := func(t *testing.T, e *env) core.Session {
		u := e.newUser()
		e.createUser(t, u)
		return e.createSession(t, e.newSession(u.ID))
	}
	return []rule{
		{group: extendSession, name: "moves_expires_when_unchanged", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			s := stored(t, e)
			to := s.Expires.Add(time.Hour)
			got := e.extendSession(t, s.SessionToken, s.Expires, to, true)
			want := s
			want.Expires = to
			expectEqual(t, "extendSession result", got, &want)
			expectEqual(t, "getSessionAndUser after extendSession", sessionOf(e.getSessionAndUser(t, s.SessionToken)), &want)
		}},
		{group: extendSession, name: "moves_expires_stored_before_from", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			// "Not after from": a caller that read a later expiry than
			// the stored one (a clock ahead) still extends.
			s := stored(t, e)
			to := s.Expires.Add(time.Hour)
			got := e.extendSession(t, s.SessionToken, s.Expires.Add(time.Minute), to, true)
			if got == nil || !got.Expires.Equal(to) {
				t.Errorf("extendSession result %s; want expires %v", show(got), to)
			}
		}},
		{group: extendSession, name: "stale_from_changes_nothing", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			s := stored(t, e)
			first := s.Expires.Add(time.Hour)
			e.extendSession(t, s.SessionToken, s.Expires, first, true)
			before := e.state(t)
			// A second caller read the expiry before the first moved it.
			got := e.extendSession(t, s.SessionToken, s.Expires, s.Expires.Add(2*time.Hour), false)
			want := s
			want.Expires = first
			expectEqual(t, "extendSession with a stale from", got, &want)
			e.expectUnchanged(t, before, "extendSession with a stale from")
		}},
		{group: extendSession, name: "unknown_session_is_nil", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			before := e.state(t)
			from := time.Now().Add(time.Hour)
			got, wrote, err := e.a.ExtendSession(e.ctx, "no-such-session", from, from.Add(time.Hour), from)
			if got != nil || wrote || err != nil {
				t.Errorf("extendSession of an unknown session = %s, %v, %v; want nil, false, nil", show(got), wrote, err)
			}
			e.expectUnchanged(t, before, "extendSession of an unknown session")
		}},
		{group: extendSession, name: "record_lives_to_the_new_expiry", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			// A store that expires records by itself (a TTL) must move
			// the record's own expiry too, not only the field.
			u := e.newUser()
			e.createUser(t, u)
			s := e.newSession(u.ID)
			s.Expires = time.Now().Add(700 * time.Millisecond)
			s = e.createSession(t, s)
			e.extendSession(t, s.SessionToken, s.Expires, time.Now().Add(time.Hour), true)
			time.Sleep(time.Until(s.Expires) + 300*time.Millisecond)
			if su := e.getSessionAndUser(t, s.SessionToken); su == nil {
				t.Error("the session was gone at its old expiry although extendSession had moved it an hour on")
			}
		}},
		{group: extendSession, name: "one_of_concurrent_callers_writes", extension: x, needs: needs, needsPeer: true, run: func(t *testing.T, e *env) {
			// Callers on two instances that read the same expiry: one
			// writes, and every caller gets the session as it wrote it.
			s := stored(t, e)
			want := coretest.ExtendOnce(t, e.ctx, s.SessionToken, s.UserID, s.Expires, 16, e.a, e.peer)
			if su := e.getSessionAndUser(t, s.SessionToken); su == nil || !su.Session.Expires.Equal(want) {
				t.Errorf("stored after the race: %s; want expires %v", show(su), want)
			}
		}},
		{group: "sessionLifetime", name: "instances_extend_once", extension: x, needsPeer: true, run: func(t *testing.T, e *env) {
			// Requests on two instances (two processes, as behind a
			// load balancer) that find one session due for extension
			// at once write expires once in all, not once per request.
			c := newClock()
			var w sessionWrites
			opts := authOptions{maxAge: time.Hour, updateAge: 10 * time.Minute}
			opts.adapter = w.around(e.a)
			first := e.newAuth(t, c, opts)
			opts.adapter = w.around(e.peer)
			second := e.newAuth(t, c, opts)
			s := e.dueSession(t, first, c)
			const n = 16
			e.burst(t, []*auth.Auth{first, second}, s.SessionToken, n, core.NormalizeTime(c.Now().Add(time.Hour)))
			if u, x := w.updates.Load(), w.extensions.Load(); u != 0 || x != 1 {
				t.Errorf("%d requests on two instances wrote %d updateSession and %d extendSession; want one extendSession write", n, u, x)
			}
		}},
	}
}

// dueSession creates a user and a session of it through a (MaxAge an hour,
// UpdateAge ten minutes), then moves the clock c on by eleven minutes, so
// that the session is due for extension.
func (e *env) dueSession(t *testing.T, a *auth.Auth, c *coretest.Clock) *core.Session {
	t.Helper()
	s, err := a.CreateSession(e.ctx, e.storedUser(t).ID)
	if err != nil {
		t.Fatal(err)
	}
	c.Add(11 * time.Minute)
	return s
}

// burst makes n concurrent Session calls with the token, spread over the
// instances, and fails unless each finds the session with expires want and
// the stored session has it too.
func (e *env) burst(t *testing.T, instances []*auth.Auth, token string, n int, want time.Time) {
	t.Helper()
	errs := make([]error, n)
	coretest.Concurrently(n, func(i int) {
		su, _, err := instances[i%len(instances)].Session(e.ctx, token)
		switch {
		case err != nil:
			errs[i] = err
		case su == nil:
			errs[i] = fmt.Errorf("request %d: Session = nil; want the session", i)
		case !su.Session.Expires.Equal(want):
			errs[i] = fmt.Errorf("request %d: expires %v; want the extension's %v", i, su.Session.Expires, want)
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if su := e.getSessionAndUser(t, token); su == nil || !su.Session.Expires.Equal(want) {
		t.Errorf("stored session after the burst: %s; want expires %v", show(su), want)
	}
}

// extendSession calls extendSession and fails the test on an error, a nil
// session, or a write report other than wantWrote.
func (e *env) extendSession(t *testing.T, token string, from, expires time.Time, wantWrote bool) *core.Session {
	t.Helper()
	got, wrote, err := e.a.ExtendSession(e.ctx, token, from, expires, from)
	call := fmt.Sprintf("extendSession(%q, %v, %v)", token, from, expires)
	if must(t, call, got, err) == nil {
		t.Fatalf("%s = nil; want the session", call)
	}
	*got = got.WithoutMetadata() // the method may leave it out; see the sessionMetadata rules
	if wrote != wantWrote {
		t.Errorf("%s reported wrote=%v; want %v", call, wrote, wantWrote)
	}
	return got
}

// sessionOf returns the session of su, or nil.
func sessionOf(su *core.SessionAndUser) *core.Session {
	if su == nil {
		return nil
	}
	return &su.Session
}

// sessionWrites counts the session writes made through the stores it wraps
// (see around): updateSession calls, and extendSession calls that wrote.
type sessionWrites struct {
	updates, extensions atomic.Int64
}

// around returns s with its session writes counted by w.
func (w *sessionWrites) around(s *core.Store) any { return countedStore{s, w} }

// countedStore is a store whose session writes a sessionWrites counts.
type countedStore struct {
	*core.Store
	w *sessionWrites
}

func (c countedStore) UpdateSession(ctx context.Context, update core.SessionUpdate) (*core.Session, error) {
	c.w.updates.Add(1)
	return c.Store.UpdateSession(ctx, update)
}

func (c countedStore) ExtendSession(ctx context.Context, token string, from, expires, seen time.Time) (*core.Session, bool, error) {
	s, wrote, err := c.Store.ExtendSession(ctx, token, from, expires, seen)
	if wrote {
		c.w.extensions.Add(1)
	}
	return s, wrote, err
}
