package conformance

import (
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// optionalEmail is the group of the rules of users without an e-mail
// address ([core.User.Email] ""), which every adapter keeps.
const optionalEmail = "optionalEmail"

// newUserWithoutEmail returns a user with every field set but the e-mail
// address.
func (e *env) newUserWithoutEmail() core.User {
	u := e.newUser()
	u.Email = ""
	return u
}

// expectNoneByEmptyAddress fails the test when getUserByEmail("") finds a
// user, through the checked layer or on the adapter itself (the layer
// never passes "" on, so only the second shows how the adapter stores
// users without an address).
func (e *env) expectNoneByEmptyAddress(t *testing.T, when string) {
	t.Helper()
	if u := e.getUserByEmail(t, ""); u != nil {
		t.Errorf("%s: getUserByEmail(\"\") = %s; want nil", when, show(u))
	}
	get, err := core.Require[core.UserByEmailGetter](e.adapter, "the optionalEmail rules")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := get.GetUserByEmail(e.ctx, ""); err != nil || u != nil {
		t.Errorf("%s: the adapter's own getUserByEmail(\"\") = %s, %v; want nil, nil", when, show(u), err)
	}
}

// expectAddressFree fails the test unless the e-mail address finds nobody
// and a new user can take it.
func (e *env) expectAddressFree(t *testing.T, what, email string) {
	t.Helper()
	if u := e.getUserByEmail(t, email); u != nil {
		t.Errorf("%s: getUserByEmail(%q) = %s; want nil", what, email, show(u))
	}
	u := e.newUser()
	u.Email = email
	if _, err := e.a.CreateUser(e.ctx, u); err != nil {
		t.Errorf("%s: createUser of another user with %q: %v; want the address free", what, email, err)
	}
}

// optionalEmailRules are the rules of users without an e-mail address.
func optionalEmailRules() []rule {
	return []rule{
		{group: optionalEmail, name: "created_without_email_reads_back_empty", needs: []core.Method{getUser}, run: func(t *testing.T, e *env) {
			u := e.newUserWithoutEmail()
			want := u.Normalize()
			got := e.createUser(t, u)
			expectUser(t, "createUser result", &got, want)
			expectUser(t, "getUser", e.getUser(t, u.ID), want)
			expectEqual(t, "stored users", e.state(t).Users, []core.User{canonUser(want)})
		}},
		{group: optionalEmail, name: "many_without_email_coexist", needs: []core.Method{getUser, getUserByEmail}, run: func(t *testing.T, e *env) {
			// Two one after the other, then five at once: the store's
			// null is no key that a second user without one collides on.
			var want []core.User
			for range 2 {
				u := e.newUserWithoutEmail()
				e.createUser(t, u)
				want = append(want, canonUser(u.Normalize()))
			}
			const n = 5
			users := make([]core.User, n)
			errs := make([]error, n)
			for i := range users {
				users[i] = e.newUserWithoutEmail()
				want = append(want, canonUser(users[i].Normalize()))
			}
			coretest.Concurrently(n, func(i int) { _, errs[i] = e.a.CreateUser(e.ctx, users[i]) })
			for i, err := range errs {
				if err != nil {
					t.Errorf("concurrent createUser of user %q without an e-mail address: %v", users[i].ID, err)
				}
			}
			expectEqual(t, "stored users", e.state(t).Users, sortedUsers(want...))
			for _, u := range want {
				expectUser(t, "getUser of a user without an e-mail address", e.getUser(t, u.ID), u)
			}
			e.expectNoneByEmptyAddress(t, "with seven users without an e-mail address")
		}},
		{group: optionalEmail, name: "empty_address_finds_nobody", needs: []core.Method{getUserByEmail}, run: func(t *testing.T, e *env) {
			e.expectNoneByEmptyAddress(t, "in an empty store")
			e.storedUser(t)
			e.createUser(t, e.newUserWithoutEmail())
			e.expectNoneByEmptyAddress(t, "with a user without an e-mail address and one with")
		}},
		{group: optionalEmail, name: "update_adds_an_address", needs: []core.Method{getUser, getUserByEmail, updateUser}, run: func(t *testing.T, e *env) {
			u := e.newUserWithoutEmail()
			e.createUser(t, u)
			other := e.newUserWithoutEmail()
			e.createUser(t, other)
			want := u.Normalize()
			want.Email = e.id("added") + "@example.com"
			got, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Email: core.Set(want.Email)})
			expectOptional(t, err, "updateUser result", got, want, expectUser)
			expectUser(t, "getUser after an address was added", e.getUser(t, u.ID), want)
			expectUser(t, "getUserByEmail of the added address", e.getUserByEmail(t, want.Email), want)
			expectEqual(t, "stored users", e.state(t).Users, sortedUsers(canonUser(want), canonUser(other.Normalize())))
			e.expectNoneByEmptyAddress(t, "after one of two users without an address got one")
		}},
		{group: optionalEmail, name: "update_to_empty_removes_and_frees_the_address", needs: []core.Method{getUser, getUserByEmail, updateUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			want := u.Normalize()
			want.Email = ""
			got, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Email: core.Set("")})
			expectOptional(t, err, "updateUser result", got, want, expectUser)
			expectUser(t, "getUser after the address was removed", e.getUser(t, u.ID), want)
			e.expectNoneByEmptyAddress(t, "after a user's address was removed")
			e.expectNoMention(t, "after a user's address was removed", u.Email)
			e.expectAddressFree(t, "after updateUser removed it", u.Email)
			expectUser(t, "getUser of the user without its address, after another took it", e.getUser(t, u.ID), want)
		}},
		{group: optionalEmail, name: "adding_a_taken_address_refused", needs: []core.Method{updateUser}, run: func(t *testing.T, e *env) {
			other := e.storedUser(t)
			u := e.newUserWithoutEmail()
			e.createUser(t, u)
			e.expectRefused(t, "updateUser of a user without an address to another user's", "the rejected updateUser", core.ErrAlreadyExists, func() error {
				return errOf(e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Email: core.Set(other.Email), Name: core.Set(ptr("x"))}))
			})
		}},
		{group: optionalEmail, name: "deleteUser_leaves_nothing", needs: []core.Method{getUser, deleteUser, linkAccount, createSession}, run: func(t *testing.T, e *env) {
			u, other := e.newUserWithoutEmail(), e.newUserWithoutEmail()
			for _, x := range []core.User{u, other} {
				e.createUser(t, x)
				e.linkAccount(t, e.newAccount(x.ID))
				e.createSession(t, e.newSession(x.ID))
			}
			keep := e.state(t)
			got, err := e.a.DeleteUser(e.ctx, u.ID)
			expectOptional(t, err, "deleteUser result", got, u.Normalize(), expectUser)
			if g := e.getUser(t, u.ID); g != nil {
				t.Errorf("getUser after deleteUser = %s; want nil", show(g))
			}
			s := e.state(t)
			if left := orphansOf(s, u.ID); len(left) > 0 {
				t.Errorf("deleteUser of a user without an e-mail address left %q", left)
			}
			expectEqual(t, "stored users", s.Users, []core.User{canonUser(other.Normalize())})
			if len(s.Accounts) != 1 || len(s.Sessions) != 1 {
				t.Errorf("deleteUser of one user without an address changed the other's records: %d accounts, %d sessions left of %d, %d",
					len(s.Accounts), len(s.Sessions), len(keep.Accounts), len(keep.Sessions))
			}
			e.expectNoMention(t, "after deleteUser of a user without an e-mail address", u.ID)
			expectUser(t, "getUser of the other user without an address", e.getUser(t, other.ID), other.Normalize())
			e.createUser(t, e.newUserWithoutEmail()) // the store still takes users without one
		}},
	}
}
