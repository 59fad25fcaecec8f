package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// lostReply is the group of the rules of lost replies: a call whose
// replies are lost after the server ran its commands (a connection reset
// by a killed node or a failover) may fail, but a retry of it succeeds and
// leaves every unique key of the records free for another user as soon as
// the records are gone, with nothing left behind that does not expire.
const lostReply = "lostReply"

// lostReplyMaxSkip bounds the round trips a lostReply rule lets through
// before the lost ones: more than any of the calls has.
const lostReplyMaxSkip = 32

// nextChangeWait bounds how long the next e-mail change may wait after
// one whose replies were lost: far below a lease a store may keep for a
// holder that stopped (Redis Cluster's claim TTL, 30s by default), far
// above a change's round trips.
const nextChangeWait = 10 * time.Second

// lostReplyRules are the rules of calls whose replies are lost (see
// [Fixture.LossyPeer]). Each runs its call once for every point at which
// one reply, then two replies in a row, can be lost (the first round
// trips let through, then the lost ones), each time on fresh records.
func lostReplyRules() []rule {
	needs := []core.Method{
		createUser, getUser, getUserByEmail, updateUser, deleteUser, linkAccount, getUserByAccount,
		createSession, getSessionAndUser, createAuth, getAuth,
	}
	return []rule{{
		group: lostReply, name: "createUser retried after lost replies, nothing blocked", needs: needs, needsLossyPeer: true,
		run: func(t *testing.T, e *env) {
			lostReplyRounds(t, e, "createUser",
				func(t *testing.T) *lostRecords { return &lostRecords{user: e.lostUser()} },
				func(s *core.Store, r *lostRecords) error { _, err := s.CreateUser(e.ctx, r.user); return err },
				func(t *testing.T, r *lostRecords, where string) {
					_, err := e.a.CreateUser(e.ctx, r.user)
					if err != nil && !errors.Is(err, core.ErrAlreadyExists) {
						t.Errorf("%s: the retried createUser: %v", where, err)
					}
					if errors.Is(err, core.ErrAlreadyExists) && e.getUser(t, r.user.ID) == nil {
						t.Errorf("%s: the retried createUser: %v, and there is no such user: the e-mail or id is still blocked", where, err)
					}
					e.expectUserWhole(t, r, where)
					e.expectFreed(t, r, where)
				})
		},
	}, {
		group: lostReply, name: "updateUser e-mail change retried after lost replies, next change not blocked", needs: needs, needsLossyPeer: true,
		run: func(t *testing.T, e *env) {
			lostReplyRounds(t, e, "updateUser",
				func(t *testing.T) *lostRecords {
					r := &lostRecords{user: e.lostUser()}
					e.createUser(t, r.user)
					r.emails = append(r.emails, e.id("moved")+"@example.com")
					return r
				},
				func(s *core.Store, r *lostRecords) error {
					_, err := s.UpdateUser(e.ctx, core.UserUpdate{ID: r.user.ID, Email: core.Set(r.emails[0])})
					return err
				},
				func(t *testing.T, r *lostRecords, where string) {
					old := r.user.Email
					r.emails = append(r.emails, old)
					u, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: r.user.ID, Email: core.Set(r.emails[0])})
					if err != nil || u == nil || u.Email != r.emails[0] {
						t.Errorf("%s: the retried updateUser = %s, %v; want the user with e-mail %q", where, show(u), err, r.emails[0])
						return
					}
					r.user.Email = r.emails[0]
					e.expectUserWhole(t, r, where)
					if got := e.getUserByEmail(t, old); got != nil {
						t.Errorf("%s: getUserByEmail(the old e-mail %q) = %s; want nil", where, old, show(got))
					}
					e.expectTakenBy(t, old, where+", the old e-mail")
					// The next change is not kept waiting by what the lost
					// replies left (a lock, a lease).
					next := e.id("next") + "@example.com"
					ctx, cancel := context.WithTimeout(e.ctx, nextChangeWait)
					defer cancel()
					if u, err := e.a.UpdateUser(ctx, core.UserUpdate{ID: r.user.ID, Email: core.Set(next)}); err != nil || u == nil || u.Email != next {
						t.Errorf("%s: the next e-mail change = %s, %v; want it done within %v", where, show(u), err, nextChangeWait)
					} else {
						r.user.Email = next
						r.emails = append(r.emails, next)
					}
					e.expectFreed(t, r, where)
				})
		},
	}, {
		group: lostReply, name: "deleteUser retried after lost replies releases every key", needs: needs, needsLossyPeer: true,
		run: func(t *testing.T, e *env) {
			lostReplyRounds(t, e, "deleteUser",
				func(t *testing.T) *lostRecords {
					r := &lostRecords{user: e.lostUser()}
					e.createUser(t, r.user)
					r.attach(t, e)
					return r
				},
				func(s *core.Store, r *lostRecords) error { _, err := s.DeleteUser(e.ctx, r.user.ID); return err },
				func(t *testing.T, r *lostRecords, where string) {
					if _, err := e.a.DeleteUser(e.ctx, r.user.ID); err != nil {
						t.Errorf("%s: the retried deleteUser: %v", where, err)
					}
					if got := e.getUser(t, r.user.ID); got != nil {
						t.Errorf("%s: getUser after the retried deleteUser = %s; want nil", where, show(got))
					}
					e.expectReleased(t, r, where)
				})
		},
	}}
}

// lostRecords is one round's user and what it holds under unique keys.
type lostRecords struct {
	user    core.User
	emails  []string // the addresses the round gave the user besides user.Email
	account *core.Account
	auth    *core.Authenticator
	session *core.Session
}

// attach gives the user an account, a session and an authenticator.
func (r *lostRecords) attach(t *testing.T, e *env) {
	t.Helper()
	acc := e.linkAccount(t, e.newAccount(r.user.ID))
	s := e.createSession(t, e.newSession(r.user.ID))
	au := e.createAuthenticator(t, e.newAuthenticator(r.user.ID, acc.ProviderAccountID))
	r.account, r.session, r.auth = &acc, &s, &au
}

// lostUser returns a new user, with a username when the adapter keeps
// usernames.
func (e *env) lostUser() core.User {
	if core.Probe(e.adapter).HasExtension(core.ExtensionGetUserByUsername) {
		return e.newUserNamed()
	}
	return e.newUser()
}

// lostReplyRounds runs call on the lossy instance once for each number of
// replies lost in a row (1, then 2) and each number of round trips let
// through before them, on fresh records from setup, until a run loses no
// reply (the call has fewer round trips); check then retries the call
// through the fixture's adapter and checks the outcome. The run that loses
// nothing must succeed, and is checked too.
func lostReplyRounds(t *testing.T, e *env, what string, setup func(*testing.T) *lostRecords,
	call func(*core.Store, *lostRecords) error, check func(t *testing.T, r *lostRecords, where string)) {
	for n := 1; n <= 2; n++ {
		for skip := 0; ; skip++ {
			if skip == lostReplyMaxSkip {
				t.Fatalf("%s still lost %d replies after %d round trips: the rule's bound is too low", what, n, skip)
			}
			r := setup(t)
			e.loser.LoseReplies(skip, n)
			err := call(e.lossy, r)
			lost := e.loser.Lost()
			where := fmt.Sprintf("%s with %d replies lost after %d round trips (%d lost; its error: %v)", what, n, skip, lost, err)
			if lost == 0 && err != nil {
				t.Errorf("%s that lost no reply: %v", what, err)
			}
			check(t, r, where)
			if t.Failed() || lost == 0 {
				break
			}
		}
	}
}

// expectUserWhole checks that the user is stored as r holds it and found by
// its e-mail (and username).
func (e *env) expectUserWhole(t *testing.T, r *lostRecords, where string) {
	t.Helper()
	want := r.user.Normalize()
	expectUser(t, where+": getUser", e.getUser(t, r.user.ID), want)
	expectUser(t, where+": getUserByEmail", e.getUserByEmail(t, r.user.Email), want)
	if r.user.Username != "" {
		expectUser(t, where+": getUserByUsername", e.getUserByUsername(t, r.user.Username), want)
	}
}

// expectFreed deletes the user and checks that everything it held is
// released (expectReleased).
func (e *env) expectFreed(t *testing.T, r *lostRecords, where string) {
	t.Helper()
	if _, err := e.a.DeleteUser(e.ctx, r.user.ID); err != nil {
		t.Errorf("%s: deleteUser: %v", where, err)
		return
	}
	e.expectReleased(t, r, where)
}

// expectReleased checks, once the user is deleted, that each of its
// addresses, its username, account, session token and credential id can
// be taken by another user right away (no wait for a claim to expire),
// and that nothing that does not expire by itself still mentions the user
// or one of its addresses.
func (e *env) expectReleased(t *testing.T, r *lostRecords, where string) {
	t.Helper()
	for _, email := range append([]string{r.user.Email}, r.emails...) {
		e.expectTakenBy(t, email, where+", the e-mail "+email)
	}
	other := e.newUser()
	other.Username = r.user.Username
	other = e.createUser(t, other)
	if r.account != nil {
		acc := *r.account
		acc.UserID = other.ID
		if _, err := e.a.LinkAccount(e.ctx, acc); err != nil {
			t.Errorf("%s: linkAccount of the deleted user's account to another user: %v", where, err)
		}
	}
	if r.session != nil {
		s := *r.session
		s.UserID = other.ID
		if _, err := e.a.CreateSession(e.ctx, s); err != nil {
			t.Errorf("%s: createSession of the deleted user's session token for another user: %v", where, err)
		}
	}
	if r.auth != nil {
		au := *r.auth
		au.UserID = other.ID
		if _, err := e.a.CreateAuthenticator(e.ctx, au); err != nil {
			t.Errorf("%s: createAuthenticator of the deleted user's credential id for another user: %v", where, err)
		}
	}
	if _, err := e.a.DeleteUser(e.ctx, other.ID); err != nil {
		t.Errorf("%s: deleteUser of the other user: %v", where, err)
	}
	for _, s := range append([]string{r.user.ID, r.user.Email}, r.emails...) {
		if left := e.persistentMentions(t, s); len(left) > 0 {
			t.Errorf("%s: %v still mention %q and do not expire", where, left, s)
		}
	}
}

// expectTakenBy checks that a new user can take the e-mail right away, and
// deletes that user.
func (e *env) expectTakenBy(t *testing.T, email, where string) {
	t.Helper()
	u := e.newUser()
	u.Email = email
	if _, err := e.a.CreateUser(e.ctx, u); err != nil {
		t.Errorf("%s: createUser of another user with it: %v; want it free", where, err)
		return
	}
	if got := e.getUserByEmail(t, email); got == nil || got.ID != u.ID {
		t.Errorf("%s: getUserByEmail = %s; want the other user %s", where, show(got), u.ID)
	}
	if _, err := e.a.DeleteUser(e.ctx, u.ID); err != nil {
		t.Errorf("%s: deleteUser of the other user: %v", where, err)
	}
}

// persistentMentions returns what the Raw view finds still mentioning s
// that does not expire by itself (see [PersistentMentioner]); nothing
// without a Mentioner.
func (e *env) persistentMentions(t *testing.T, s string) []string {
	t.Helper()
	var left []string
	var err error
	switch m := e.raw.(type) {
	case PersistentMentioner:
		left, err = m.PersistentMentions(e.ctx, s)
	case Mentioner:
		left, err = m.Mentions(e.ctx, s)
	default:
		return nil
	}
	if err != nil {
		t.Fatalf("reading what mentions %q: %v", s, err)
	}
	return left
}
