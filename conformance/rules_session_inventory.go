package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// The groups of the session inventory's rules: the two extensions, and the
// metadata kept with a session.
const (
	listSessions    = string(core.MethodListSessionsByUserID)
	deleteSessions  = string(core.MethodDeleteSessionsByUserID)
	sessionMetadata = "sessionMetadata"
)

// sessionInventoryRules are the rules of the listSessionsByUserId and
// deleteSessionsByUserId extensions ([core.SessionsByUserLister],
// [core.SessionsByUserDeleter]) and of session metadata
// ([core.SessionMetadataKeeper]).
func sessionInventoryRules() []rule {
	return slices.Concat(sessionListRules(), sessionDeleteRules(), sessionMetadataRules())
}

// withMetadata returns s with metadata set, distinct for each session.
func (e *env) withMetadata(s core.Session) core.Session {
	s.CreatedAt = at(-time.Hour)
	s.UpdatedAt = at(-time.Minute)
	s.IPAddress = "2001:db8::" + s.SessionToken[len(s.SessionToken)-4:]
	s.UserAgent = "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/145.0 ü " + s.SessionToken
	return s
}

// asKept returns s normalised as the adapter keeps it: with its metadata
// when the adapter keeps metadata, without otherwise.
func (e *env) asKept(s core.Session) core.Session {
	s = s.Normalize()
	if !core.KeepsSessionMetadata(e.adapter) {
		s = s.WithoutMetadata()
	}
	return s
}

// listSessions calls listSessionsByUserId and fails the test on an error.
func (e *env) listSessions(t *testing.T, userID string) []core.Session {
	t.Helper()
	got, err := e.a.ListSessionsByUserID(e.ctx, userID)
	if err != nil {
		t.Fatalf("listSessionsByUserId(%q): %v", userID, err)
	}
	if got == nil {
		t.Fatalf("listSessionsByUserId(%q) = nil; want a non-nil list", userID)
	}
	return got
}

// expectForgotten fails the test when the session with the token is still
// readable, or (on stores with indexes) anything stored still mentions it.
func (e *env) expectForgotten(t *testing.T, what, token string) {
	t.Helper()
	if su := e.getSessionAndUser(t, token); su != nil {
		t.Errorf("%s: getSessionAndUser(%q) = %s; want nil", what, token, show(su))
	}
	e.expectNoMention(t, what, token)
}

// expectNoMention fails the test when the raw view is a [Mentioner] and
// something stored still mentions s.
func (e *env) expectNoMention(t *testing.T, what, s string) {
	t.Helper()
	m, ok := e.raw.(Mentioner)
	if !ok {
		return
	}
	left, err := m.Mentions(e.ctx, s)
	if err != nil {
		t.Fatalf("raw mentions: %v", err)
	}
	if len(left) > 0 {
		t.Errorf("%s: the store still mentions %q in %q", what, s, left)
	}
}

func sessionListRules() []rule {
	x := core.ExtensionListSessionsByUserID
	needs := []core.Method{createUser, createSession}
	return []rule{
		{group: listSessions, name: "lists_the_users_sessions_in_order", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			var want []core.Session
			for range 3 {
				s := e.withMetadata(e.newSession(u.ID))
				e.createSession(t, s)
				want = append(want, e.asKept(s))
			}
			e.createSession(t, e.newSession(other.ID))
			slices.SortFunc(want, core.CompareSessions)
			expectEqual(t, "listSessionsByUserId", e.listSessions(t, u.ID), want)
		}},
		{group: listSessions, name: "unknown_user_is_an_empty_list", extension: x, run: func(t *testing.T, e *env) {
			if got := e.listSessions(t, "no-such-user"); len(got) != 0 {
				t.Errorf("listSessionsByUserId of an unknown user = %s; want an empty list", show(got))
			}
		}},
		{group: listSessions, name: "expired_is_never_listed_and_leaves_no_entry", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			keep := e.newSession(u.ID)
			e.createSession(t, keep)
			expired := e.newSession(u.ID)
			expired.Expires = time.Now().Add(-time.Minute)
			e.createSession(t, expired)
			expectEqual(t, "listSessionsByUserId with an expired session", e.listSessions(t, u.ID), []core.Session{e.asKept(keep)})
			e.expectNoMention(t, "after listing a user's sessions, one of which had expired", expired.SessionToken)
		}},
		{group: listSessions, name: "evicted_is_never_listed_and_leaves_no_entry", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			// A session that expires while nothing touches it: stores with
			// TTLs evict its record by themselves, behind the index's back.
			u := e.storedUser(t)
			s := e.newSession(u.ID)
			s.Expires = time.Now().Add(300 * time.Millisecond)
			e.createSession(t, s)
			time.Sleep(time.Until(s.Expires) + 100*time.Millisecond)
			if got := e.listSessions(t, u.ID); len(got) != 0 {
				t.Errorf("listSessionsByUserId after the user's only session expired = %s; want an empty list", show(got))
			}
			e.expectNoMention(t, "after listing the sessions of a user whose only session expired untouched", s.SessionToken)
		}},
		{group: listSessions, name: "follows_delete_move_and_deleteUser", extension: x, needs: []core.Method{createUser, createSession, deleteSession, updateSession, deleteUser}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			gone, moved, kept := e.newSession(u.ID), e.newSession(u.ID), e.newSession(u.ID)
			for _, s := range []core.Session{gone, moved, kept} {
				e.createSession(t, s)
			}
			if _, err := e.a.DeleteSession(e.ctx, gone.SessionToken); err != nil {
				t.Fatal(err)
			}
			if _, err := e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: moved.SessionToken, UserID: core.Set(other.ID)}); err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "listSessionsByUserId after deleting one session and moving another away", e.listSessions(t, u.ID), []core.Session{e.asKept(kept)})
			moved.UserID = other.ID
			expectEqual(t, "listSessionsByUserId of the user the session moved to", e.listSessions(t, other.ID), []core.Session{e.asKept(moved)})
			if _, err := e.a.DeleteUser(e.ctx, u.ID); err != nil {
				t.Fatal(err)
			}
			if got := e.listSessions(t, u.ID); len(got) != 0 {
				t.Errorf("listSessionsByUserId after deleteUser = %s; want an empty list", show(got))
			}
		}},
	}
}

func sessionDeleteRules() []rule {
	x := core.ExtensionDeleteSessionsByUserID
	needs := []core.Method{createUser, createSession, getSessionAndUser}
	// deleteAll calls deleteSessionsByUserId and fails the test unless it
	// reports want deleted sessions.
	deleteAll := func(t *testing.T, e *env, userID, except string, want int) {
		t.Helper()
		n, err := e.a.DeleteSessionsByUserID(e.ctx, userID, except)
		if err != nil || n != want {
			t.Fatalf("deleteSessionsByUserId(%q, except %q) = %d, %v; want %d, nil", userID, except, n, err, want)
		}
	}
	return []rule{
		{group: deleteSessions, name: "deletes_every_session_of_the_user", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			var tokens []string
			for range 3 {
				s := e.newSession(u.ID)
				e.createSession(t, s)
				tokens = append(tokens, s.SessionToken)
			}
			expired := e.newSession(u.ID)
			expired.Expires = time.Now().Add(-time.Minute)
			e.createSession(t, expired)
			theirs := e.newSession(other.ID)
			e.createSession(t, theirs)
			deleteAll(t, e, u.ID, "", 3) // the expired one is deleted, not counted
			for _, tok := range append(tokens, expired.SessionToken) {
				e.expectForgotten(t, "after deleteSessionsByUserId", tok)
			}
			expectEqual(t, "stored sessions after deleteSessionsByUserId", e.state(t).Sessions, []core.Session{theirs.Normalize()})
			deleteAll(t, e, u.ID, "", 0)
		}},
		{group: deleteSessions, name: "keeps_the_excepted_session", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			current, a, b := e.newSession(u.ID), e.newSession(u.ID), e.newSession(u.ID)
			for _, s := range []core.Session{a, current, b} {
				e.createSession(t, s)
			}
			deleteAll(t, e, u.ID, current.SessionToken, 2)
			e.expectForgotten(t, "after deleteSessionsByUserId of the others", a.SessionToken)
			e.expectForgotten(t, "after deleteSessionsByUserId of the others", b.SessionToken)
			if su := e.getSessionAndUser(t, current.SessionToken); su == nil {
				t.Error("deleteSessionsByUserId deleted the session it was told to keep")
			}
			if core.Probe(e.a).HasExtension(core.ExtensionListSessionsByUserID) {
				expectEqual(t, "listSessionsByUserId after deleting the others", e.listSessions(t, u.ID), []core.Session{current.Normalize()})
			}
		}},
		{group: deleteSessions, name: "another_users_session_as_except_keeps_nothing", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			// An attacker's request names a victim's session as the one to
			// keep: the attacker's sessions all go, the victim's stays.
			u, victim := e.storedUser(t), e.storedUser(t)
			mine := e.newSession(u.ID)
			e.createSession(t, mine)
			theirs := e.newSession(victim.ID)
			e.createSession(t, theirs)
			deleteAll(t, e, u.ID, theirs.SessionToken, 1)
			e.expectForgotten(t, "after deleteSessionsByUserId naming another user's session", mine.SessionToken)
			expectEqual(t, "stored sessions", e.state(t).Sessions, []core.Session{theirs.Normalize()})
		}},
		{group: deleteSessions, name: "unknown_user_deletes_nothing", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createSession(t, e.newSession(u.ID))
			before := e.state(t)
			deleteAll(t, e, "no-such-user", "", 0)
			e.expectUnchanged(t, before, "deleteSessionsByUserId of an unknown user")
		}},
		{group: deleteSessions, name: "races_creates_and_deletes_without_a_half_session", extension: x, needs: append(slices.Clone(needs), deleteSession), run: func(t *testing.T, e *env) {
			// 50 calls at once: 20 creates of new sessions, 20 deletes of
			// existing ones, and 10 deletes of all the user's sessions,
			// the 20 existing ones first. Afterwards none of the 20
			// existing sessions is readable, and each new one is either
			// gone or whole: readable and listed.
			u := e.storedUser(t)
			old := make([]core.Session, 20)
			for i := range old {
				old[i] = e.newSession(u.ID)
				e.createSession(t, old[i])
			}
			fresh := make([]core.Session, 20)
			for i := range fresh {
				fresh[i] = e.newSession(u.ID)
			}
			errs := make([]error, 50)
			coretest.Concurrently(50, func(i int) {
				switch {
				case i < 20:
					_, errs[i] = e.a.CreateSession(e.ctx, fresh[i])
				case i < 40:
					_, errs[i] = e.a.DeleteSession(e.ctx, old[i-20].SessionToken)
				default:
					_, errs[i] = e.a.DeleteSessionsByUserID(e.ctx, u.ID, "")
				}
			})
			for i, err := range errs {
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			for _, s := range old {
				e.expectForgotten(t, "after the race", s.SessionToken)
			}
			e.expectWhole(t, u.ID, fresh)
		}},
		{group: deleteSessions, name: "an_extension_racing_the_delete_never_brings_it_back", extension: x, needsPeer: true, needs: append(slices.Clone(needs), updateSession), run: func(t *testing.T, e *env) {
			// Two instances: one deletes the user's other sessions while
			// both extend one of them (with extendSession where the
			// adapter has it, else updateSession). The extension must not
			// write back a session the delete removed.
			extend := func(a *core.Store, token string, from, to time.Time) error {
				if core.Probe(a).HasExtension(core.ExtensionExtendSession) {
					_, _, err := a.ExtendSession(e.ctx, token, from, to, time.Now())
					return err
				}
				_, err := a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: token, Expires: core.Set(to)})
				return err
			}
			for round := range 10 {
				u := e.storedUser(t)
				current, s := e.newSession(u.ID), e.newSession(u.ID)
				e.createSession(t, current)
				e.createSession(t, s)
				from := s.Normalize().Expires
				instances := [2]*core.Store{e.a, e.peer}
				errs := make([]error, 21)
				coretest.Concurrently(21, func(i int) {
					if i == 20 {
						_, errs[i] = instances[round%2].DeleteSessionsByUserID(e.ctx, u.ID, current.SessionToken)
						return
					}
					errs[i] = extend(instances[i%2], s.SessionToken, from, from.Add(time.Duration(i+1)*time.Minute))
				})
				for i, err := range errs {
					if err != nil {
						t.Fatalf("round %d, call %d: %v", round, i, err)
					}
				}
				e.expectForgotten(t, "after an extension raced deleteSessionsByUserId", s.SessionToken)
				if core.Probe(e.a).HasExtension(core.ExtensionListSessionsByUserID) {
					expectEqual(t, "listSessionsByUserId after the race", e.listSessions(t, u.ID), []core.Session{current.Normalize()})
				}
			}
		}},
	}
}

// expectWhole fails the test unless each of the sessions is either gone
// or whole: readable and, when the adapter lists sessions, listed for the
// user; and nothing else is listed.
func (e *env) expectWhole(t *testing.T, userID string, sessions []core.Session) {
	t.Helper()
	var readable []core.Session
	for _, s := range sessions {
		if su := e.getSessionAndUser(t, s.SessionToken); su != nil {
			readable = append(readable, s.Normalize())
		} else {
			e.expectNoMention(t, "a session gone after the race", s.SessionToken)
		}
	}
	if !core.Probe(e.a).HasExtension(core.ExtensionListSessionsByUserID) {
		return
	}
	slices.SortFunc(readable, core.CompareSessions)
	if readable == nil {
		readable = []core.Session{}
	}
	expectEqual(t, "listSessionsByUserId after the race (the readable sessions)", e.listSessions(t, userID), readable)
}

func sessionMetadataRules() []rule {
	x := core.ExtensionListSessionsByUserID
	needs := []core.Method{createUser, createSession}
	return []rule{
		{group: sessionMetadata, name: "kept_as_created_or_not_at_all", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			// An adapter that keeps metadata returns it exactly, times
			// normalised; one that does not returns none of it, never part.
			u := e.storedUser(t)
			s := e.withMetadata(e.newSession(u.ID))
			e.createSession(t, s)
			expectEqual(t, "listSessionsByUserId", e.listSessions(t, u.ID), []core.Session{e.asKept(s)})
			raw := e.state(t).Sessions
			if len(raw) != 1 {
				t.Fatalf("raw sessions = %s; want the one created", show(raw))
			}
			expectEqual(t, "the raw view's session", raw[0], e.asKept(s))
		}},
		{group: sessionMetadata, name: "extension_moves_updated_at", extension: x, needs: append(slices.Clone(needs), updateSession), run: func(t *testing.T, e *env) {
			// UpdatedAt ("last seen") moves with the extension's write and
			// with an updateSession that sets it, and only then.
			if !core.Probe(e.a).HasExtension(core.ExtensionExtendSession) {
				t.Fatalf("adapter %T lists sessions but has no extendSession", e.adapter)
			}
			u := e.storedUser(t)
			s := e.withMetadata(e.newSession(u.ID))
			e.createSession(t, s)
			want := e.asKept(s)
			from := want.Expires
			// A stale extension writes nothing, UpdatedAt included.
			if _, wrote, err := e.a.ExtendSession(e.ctx, s.SessionToken, from.Add(-time.Hour), from.Add(time.Hour), at(time.Hour)); err != nil || wrote {
				t.Fatalf("a stale extendSession = wrote %v, %v; want no write", wrote, err)
			}
			expectEqual(t, "after a stale extension", e.listSessions(t, u.ID), []core.Session{want})
			if _, wrote, err := e.a.ExtendSession(e.ctx, s.SessionToken, from, from.Add(time.Hour), at(time.Hour)); err != nil || !wrote {
				t.Fatalf("extendSession = wrote %v, %v; want a write", wrote, err)
			}
			want.Expires, want.UpdatedAt = from.Add(time.Hour), at(time.Hour)
			want = e.asKept(want)
			expectEqual(t, "after an extension", e.listSessions(t, u.ID), []core.Session{want})
			if _, err := e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: s.SessionToken, UpdatedAt: core.Set(at(2 * time.Hour))}); err != nil {
				t.Fatal(err)
			}
			want.UpdatedAt = at(2 * time.Hour)
			want = e.asKept(want)
			expectEqual(t, "after updateSession set UpdatedAt", e.listSessions(t, u.ID), []core.Session{want})
		}},
	}
}
