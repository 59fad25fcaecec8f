package conformance

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

func sessionRules() []rule {
	return slices.Concat(createSessionRules(), getSessionAndUserRules(), updateSessionRules(), deleteSessionRules())
}

// createSessionRules are the rules of the createSession method.
func createSessionRules() []rule {
	return []rule{
		{group: string(createSession), name: "round_trip", needs: []core.Method{createUser, getSessionAndUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			s := e.newSession(u.ID)
			want := s.Normalize()
			got := e.createSession(t, s)
			expectSession(t, "createSession result", &got, want)
			su := found(t, "getSessionAndUser after createSession", e.getSessionAndUser(t, s.SessionToken))
			expectSession(t, "getSessionAndUser session", &su.Session, want)
			expectEqual(t, "stored sessions", e.state(t).Sessions, []core.Session{want})
		}},
		{group: string(createSession), name: "expires_utc_millisecond", needs: []core.Method{createUser, getSessionAndUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			s := e.newSession(u.ID)
			zone := time.FixedZone("UTC-7", -7*3600)
			s.Expires = time.Date(2040, time.July, 1, 12, 30, 45, 987654321, zone)
			want := time.Date(2040, time.July, 1, 19, 30, 45, 987000000, time.UTC)
			e.createSession(t, s)
			su := found(t, "getSessionAndUser", e.getSessionAndUser(t, s.SessionToken))
			expectUTC(t, "expires", su.Session.Expires)
			if !su.Session.Expires.Equal(want) {
				t.Errorf("expires = %s, want %s (UTC, truncated to the millisecond)", su.Session.Expires.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
			}
			if st := e.state(t).Sessions; len(st) != 1 || !st[0].Expires.Equal(want) {
				t.Errorf("stored sessions = %s, want expires %s", show(st), want.Format(time.RFC3339Nano))
			}
		}},
		takenKeyRule(createSession, "duplicate_token_rejected", "createSession with a taken token", func(t *testing.T, e *env, userID string) func(string) error {
			s := e.newSession(userID)
			e.createSession(t, s)
			return func(other string) error { return sessionKind.under(e, s.SessionToken, other) }
		}),
		unknownUserRule(createSession, "unknown_user_rejected", "createSession for an unknown user", sessionKind.insert),
		{group: string(createSession), name: "empty_fields_rejected", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			expectInvalid(t, e, "createSession", e.a.CreateSession, map[string]core.Session{
				"empty token":   {SessionToken: "", UserID: u.ID, Expires: future()},
				"empty userId":  {SessionToken: e.id("tok"), UserID: "", Expires: future()},
				"zero expires":  {SessionToken: e.id("tok"), UserID: u.ID},
				"token and all": {},
			})
		}},
		{group: string(createSession), name: "bad_tokens_round_trip_or_error", needs: []core.Method{createUser, getSessionAndUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			for name, tok := range badStrings() {
				before := e.state(t)
				s := e.newSession(u.ID)
				s.SessionToken = e.id("bad") + tok
				if _, err := e.a.CreateSession(e.ctx, s); err != nil {
					e.expectUnchanged(t, before, "createSession with "+name+" that failed")
					continue
				}
				su := e.getSessionAndUser(t, s.SessionToken)
				if su == nil || su.Session.SessionToken != s.SessionToken {
					t.Errorf("createSession with %s accepted the token but getSessionAndUser does not find it", name)
				}
			}
		}},
	}
}

// getSessionAndUserRules are the rules of the getSessionAndUser method.
func getSessionAndUserRules() []rule {
	return []rule{
		{group: string(getSessionAndUser), name: "finds_session_and_user", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			s := e.newSession(u.ID)
			e.createSession(t, s)
			e.createSession(t, e.newSession(u.ID))
			e.createSession(t, e.newSession(other.ID))
			su := found(t, "getSessionAndUser", e.getSessionAndUser(t, s.SessionToken))
			expectSession(t, "session", &su.Session, s.Normalize())
			expectUser(t, "user", &su.User, u.Normalize())
		}},
		{group: string(getSessionAndUser), name: "not_found_is_nil", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createSession(t, e.newSession(u.ID))
			for _, tok := range []string{"no-such-token", ""} {
				su, err := e.a.GetSessionAndUser(e.ctx, tok)
				if su != nil {
					t.Errorf("getSessionAndUser(%q) = %s, want nil", tok, show(su))
				}
				if err != nil && tok != "" {
					t.Errorf("getSessionAndUser(%q): %v, want nil, nil", tok, err)
				}
			}
		}},
		{group: string(getSessionAndUser), name: "expired_session_is_nil", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			s := e.newSession(u.ID)
			s.Expires = time.Now().Add(-time.Minute)
			e.createSession(t, s)
			if su := e.getSessionAndUser(t, s.SessionToken); su != nil {
				t.Errorf("getSessionAndUser of an expired session = %s, want nil", show(su))
			}
			if su := e.getSessionAndUser(t, s.SessionToken); su != nil {
				t.Errorf("second getSessionAndUser of an expired session = %s, want nil", show(su))
			}
		}},

		{group: string(getSessionAndUser), name: "expired_session_removed_on_access", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			// SPEC §3: a session accessed after it expires is removed from
			// the database. Checked in the raw store: the record and, on
			// stores with indexes, every entry that mentions its token.
			u := e.storedUser(t)
			keep := e.newSession(u.ID)
			e.createSession(t, keep)
			s := e.newSession(u.ID)
			s.Expires = time.Now().Add(-time.Minute)
			e.createSession(t, s)
			if su := e.getSessionAndUser(t, s.SessionToken); su != nil {
				t.Errorf("getSessionAndUser of an expired session = %s, want nil", show(su))
			}
			expectEqual(t, "stored sessions after the expired one was accessed", e.state(t).Sessions, []core.Session{keep.Normalize()})
			e.expectNoMention(t, "after the expired session was accessed", s.SessionToken)
			if su := e.getSessionAndUser(t, keep.SessionToken); su == nil {
				t.Error("the user's other session is gone after the expired one was removed")
			}
		}},
	}
}

// updateSessionRules are the rules of the updateSession method.
func updateSessionRules() []rule {
	return []rule{
		{group: string(updateSession), name: "two_instances_update_different_fields", needs: []core.Method{createUser, getSessionAndUser}, needsPeer: true, run: func(t *testing.T, e *env) {
			// Two adapter instances on one store: one extends a session
			// while the other moves it to another user. Both are kept.
			for round := range 10 {
				u, other := e.storedUser(t), e.storedUser(t)
				s := e.newSession(u.ID)
				e.createSession(t, s)
				want := s.Normalize()
				want.UserID = other.ID
				want.Expires = core.NormalizeTime(s.Expires.Add(time.Duration(round+1) * time.Hour))
				updates := []core.SessionUpdate{
					{SessionToken: s.SessionToken, Expires: core.Set(want.Expires)},
					{SessionToken: s.SessionToken, UserID: core.Set(other.ID)},
				}
				throughBoth(t, e, updates, (*core.Store).UpdateSession)
				su := found(t, fmt.Sprintf("round %d: getSessionAndUser after the concurrent updates", round), e.getSessionAndUser(t, s.SessionToken))
				expectSession(t, fmt.Sprintf("round %d: session after concurrent updates of expires and userId through two instances", round), &su.Session, want)
				if t.Failed() {
					return
				}
			}
		}},
		{group: string(updateSession), name: "changes_only_given_fields", needs: []core.Method{createUser, createSession, getSessionAndUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			s, other := e.newSession(u.ID), e.newSession(u.ID)
			e.createSession(t, s)
			e.createSession(t, other)
			later := s.Expires.Add(48*time.Hour + 777*time.Microsecond)
			got, err := e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: s.SessionToken, Expires: core.Set(later)})
			if err != nil {
				t.Fatal(err)
			}
			want := s.Normalize()
			want.Expires = core.NormalizeTime(later)
			expectSession(t, "updateSession result", got, want)
			su := found(t, "getSessionAndUser after updateSession", e.getSessionAndUser(t, s.SessionToken))
			expectSession(t, "getSessionAndUser after updateSession", &su.Session, want)
			expectEqual(t, "stored sessions", e.state(t).Sessions, sortedSessions(want, other.Normalize()))
		}},
		{group: string(updateSession), name: "unknown_session_is_nil", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createSession(t, e.newSession(u.ID))
			expectNothing(t, e, "updateSession of an unknown token", func() (*core.Session, error) {
				return e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: "no-such-token", Expires: core.Set(future())})
			})
		}},
		{group: string(updateSession), name: "empty_token_rejected", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createSession(t, e.newSession(u.ID))
			e.expectRefused(t, "updateSession with an empty token", "the rejected updateSession", core.ErrInvalidInput, func() error {
				return errOf(e.a.UpdateSession(e.ctx, core.SessionUpdate{Expires: core.Set(future())}))
			})
		}},

		{group: string(updateSession), name: "moves_session_to_another_user", needs: []core.Method{createUser, createSession, getSessionAndUser}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			s := e.newSession(u.ID)
			e.createSession(t, s)
			got, err := e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: s.SessionToken, UserID: core.Set(other.ID)})
			if err != nil {
				t.Fatal(err)
			}
			want := s.Normalize()
			want.UserID = other.ID
			expectSession(t, "updateSession result", got, want)
			su := found(t, "getSessionAndUser after the move", e.getSessionAndUser(t, s.SessionToken))
			expectUser(t, "the session's user after the move", &su.User, other.Normalize())
			expectEqual(t, "stored sessions", e.state(t).Sessions, []core.Session{want})
		}},
		{group: string(updateSession), name: "unknown_user_rejected", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			s := e.newSession(u.ID)
			e.createSession(t, s)
			e.expectRefused(t, "updateSession to an unknown user", "the rejected updateSession", core.ErrNotFound, func() error {
				return errOf(e.a.UpdateSession(e.ctx, core.SessionUpdate{SessionToken: s.SessionToken, UserID: core.Set("no-such-user")}))
			})
		}},
	}
}

// deleteSessionRules are the rules of the deleteSession method.
func deleteSessionRules() []rule {
	return []rule{
		{group: string(deleteSession), name: "removes_session", needs: []core.Method{createUser, createSession, getSessionAndUser, getUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			s, keep := e.newSession(u.ID), e.newSession(u.ID)
			e.createSession(t, s)
			e.createSession(t, keep)
			got, err := e.a.DeleteSession(e.ctx, s.SessionToken)
			expectOptional(t, err, "deleteSession result", got, s.Normalize(), expectSession)
			if su := e.getSessionAndUser(t, s.SessionToken); su != nil {
				t.Errorf("getSessionAndUser after deleteSession = %s, want nil", show(su))
			}
			if e.getUser(t, u.ID) == nil {
				t.Error("deleteSession removed the user")
			}
			expectEqual(t, "stored sessions", e.state(t).Sessions, []core.Session{keep.Normalize()})
		}},
		{group: string(deleteSession), name: "unknown_session_is_nil", needs: []core.Method{createUser, createSession}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createSession(t, e.newSession(u.ID))
			expectNothing(t, e, "deleteSession of an unknown token", func() (*core.Session, error) { return e.a.DeleteSession(e.ctx, "no-such-token") })
		}},
	}
}

func sortedSessions(ss ...core.Session) []core.Session {
	for i := range ss {
		ss[i].Expires = canonTime(ss[i].Expires)
	}
	slices.SortFunc(ss, bySessionToken)
	return ss
}
