package conformance

import (
	"fmt"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// usernames is the group of the rules of usernames ([core.User.Username])
// and the getUserByUsername extension ([core.UserByUsernameGetter]).
const usernames = "usernames"

// newUsername returns a fresh username, normalised ([core.NormalizeUsername]).
func (e *env) newUsername() string { return e.id("name") }

// newUserNamed returns a new user ([env.newUser]) with a fresh username.
func (e *env) newUserNamed() core.User {
	u := e.newUser()
	u.Username = e.newUsername()
	return u
}

// getUserByUsername calls getUserByUsername through the checked layer and
// fails the test on an error.
func (e *env) getUserByUsername(t *testing.T, name string) *core.User {
	t.Helper()
	return lookup(t, e, "getUserByUsername", e.a.GetUserByUsername, name)
}

// expectUsernameFree fails the test unless the username finds nobody and
// a new user can take it.
func (e *env) expectUsernameFree(t *testing.T, what, name string) {
	t.Helper()
	if u := e.getUserByUsername(t, name); u != nil {
		t.Errorf("%s: getUserByUsername(%q) = %s; want nil", what, name, show(u))
	}
	u := e.newUser()
	u.Username = name
	if _, err := e.a.CreateUser(e.ctx, u); err != nil {
		t.Errorf("%s: createUser of another user named %q: %v; want the name free", what, name, err)
	}
}

// renamed returns u, normalised, with the username name.
func renamed(u core.User, name string) core.User {
	u = u.Normalize()
	u.Username = name
	return u
}

// usernameRules are the rules of usernames, for adapters that offer
// getUserByUsername, and the rules that an adapter without it is refused a
// username.
func usernameRules() []rule {
	x := core.ExtensionGetUserByUsername
	return []rule{
		{group: usernames, name: "round_trip_and_found_exactly", extension: x, needs: []core.Method{getUser, getUserByEmail}, run: func(t *testing.T, e *env) {
			u := e.newUserNamed()
			want := u.Normalize()
			got := e.createUser(t, u)
			e.createUser(t, e.newUserNamed()) // another, not to be found
			expectUser(t, "createUser result", &got, want)
			expectUser(t, "getUser", e.getUser(t, u.ID), want)
			expectUser(t, "getUserByEmail", e.getUserByEmail(t, u.Email), want)
			expectUser(t, "getUserByUsername", e.getUserByUsername(t, u.Username), want)
			for _, near := range []string{u.Username[:len(u.Username)-1], u.Username + "0", "x" + u.Username} {
				if g := e.getUserByUsername(t, near); g != nil {
					t.Errorf("getUserByUsername(%q) found %s, whose name is %q; names are compared exactly", near, show(g), u.Username)
				}
			}
			stored := e.state(t).Users
			if i := indexOfUser(stored, u.ID); i < 0 || stored[i].Username != u.Username {
				t.Errorf("stored users = %s; want %q stored with username %q", show(stored), u.ID, u.Username)
			}
		}},
		{group: usernames, name: "unknown_and_empty_find_nobody", extension: x, run: func(t *testing.T, e *env) {
			e.createUser(t, e.newUserNamed())
			e.createUser(t, e.newUser()) // a user without a username
			for _, name := range []string{"no-such-name", ""} {
				if g := e.getUserByUsername(t, name); g != nil {
					t.Errorf("getUserByUsername(%q) = %s; want nil", name, show(g))
				}
			}
			get, err := core.Require[core.UserByUsernameGetter](e.adapter, "the usernames rules")
			if err != nil {
				t.Fatal(err)
			}
			if g, err := get.GetUserByUsername(e.ctx, ""); err != nil || g != nil {
				t.Errorf("the adapter's own getUserByUsername(\"\") = %s, %v; want nil, nil", show(g), err)
			}
		}},
		{group: usernames, name: "taken_name_refused_and_nothing_written", extension: x, needs: []core.Method{getUser, getUserByEmail}, run: func(t *testing.T, e *env) {
			u := e.newUserNamed()
			e.createUser(t, u)
			dup := e.newUser()
			dup.Username = u.Username
			e.expectRefused(t, "createUser with a taken username", "the rejected createUser", core.ErrAlreadyExists, func() error {
				return errOf(e.a.CreateUser(e.ctx, dup))
			})
			if g := e.getUser(t, dup.ID); g != nil {
				t.Errorf("getUser of the refused user = %s; want nil", show(g))
			}
			e.expectAddressFree(t, "the e-mail address of a user refused for its username", dup.Email)
			expectUser(t, "getUserByUsername of the name's holder", e.getUserByUsername(t, u.Username), u.Normalize())
		}},
		{group: usernames, name: "taken_email_leaves_the_name_free", extension: x, needs: []core.Method{getUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			dup := e.newUserNamed()
			dup.Email = u.Email
			e.expectRefused(t, "createUser with a taken e-mail address and a free username", "the rejected createUser", core.ErrAlreadyExists, func() error {
				return errOf(e.a.CreateUser(e.ctx, dup))
			})
			e.expectUsernameFree(t, "the username of a user refused for its e-mail address", dup.Username)
		}},
		{group: usernames, name: "rename_frees_the_old_name", extension: x, needs: []core.Method{getUser, updateUser}, run: func(t *testing.T, e *env) {
			u := e.newUserNamed()
			e.createUser(t, u)
			want := renamed(u, e.newUsername())
			got, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Username: core.Set(want.Username)})
			expectOptional(t, err, "updateUser result", got, want, expectUser)
			expectUser(t, "getUser after the rename", e.getUser(t, u.ID), want)
			expectUser(t, "getUserByUsername of the new name", e.getUserByUsername(t, want.Username), want)
			e.expectNoMention(t, "after a rename", u.Username)
			e.expectUsernameFree(t, "the old name after a rename", u.Username)
		}},
		{group: usernames, name: "empty_removes_the_name", extension: x, needs: []core.Method{getUser, updateUser}, run: func(t *testing.T, e *env) {
			u, other := e.newUserNamed(), e.newUserNamed()
			e.createUser(t, u)
			e.createUser(t, other)
			want := renamed(u, "")
			got, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Username: core.Set("")})
			expectOptional(t, err, "updateUser result", got, want, expectUser)
			expectUser(t, "getUser after the name was removed", e.getUser(t, u.ID), want)
			e.expectNoMention(t, "after the name was removed", u.Username)
			e.expectUsernameFree(t, "a removed name", u.Username)
			// A second user without a name: "" is no name to collide on.
			if _, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: other.ID, Username: core.Set("")}); err != nil {
				t.Errorf("updateUser removing the name of a second user: %v", err)
			}
			expectUser(t, "getUser of the second user without a name", e.getUser(t, other.ID), renamed(other, ""))
		}},
		{group: usernames, name: "deleteUser_frees_the_name", extension: x, needs: []core.Method{deleteUser}, run: func(t *testing.T, e *env) {
			u := e.newUserNamed()
			e.createUser(t, u)
			if _, err := e.a.DeleteUser(e.ctx, u.ID); err != nil {
				t.Fatal(err)
			}
			e.expectNoMention(t, "after deleteUser of a named user", u.Username)
			e.expectUsernameFree(t, "the name of a deleted user", u.Username)
		}},
		{group: usernames, name: "update_to_a_taken_name_refused", extension: x, needs: []core.Method{getUser, getUserByEmail, updateUser}, run: func(t *testing.T, e *env) {
			u, other := e.newUserNamed(), e.newUserNamed()
			e.createUser(t, u)
			e.createUser(t, other)
			e.expectRefused(t, "updateUser to another user's name", "the rejected updateUser", core.ErrAlreadyExists, func() error {
				return errOf(e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Username: core.Set(other.Username), Name: core.Set(ptr("x"))}))
			})
			// The same with a new, free e-mail address: neither changes.
			email := e.id("free") + "@example.com"
			e.expectRefused(t, "updateUser to another user's name and a free address", "the rejected updateUser", core.ErrAlreadyExists, func() error {
				return errOf(e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Username: core.Set(other.Username), Email: core.Set(email)}))
			})
			expectUser(t, "getUser of the user refused the name", e.getUser(t, u.ID), u.Normalize())
			expectUser(t, "getUserByUsername of its own name", e.getUserByUsername(t, u.Username), u.Normalize())
			e.expectAddressFree(t, "the address of an updateUser refused for its username", email)
			// And a taken address with a free name: the name stays free.
			name := e.newUsername()
			e.expectRefused(t, "updateUser to a free name and another user's address", "the rejected updateUser", core.ErrAlreadyExists, func() error {
				return errOf(e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Username: core.Set(name), Email: core.Set(other.Email)}))
			})
			e.expectUsernameFree(t, "the name of an updateUser refused for its e-mail address", name)
		}},
		{group: usernames, name: "concurrent_creates_with_one_name_one_wins", extension: x, run: func(t *testing.T, e *env) {
			const n = 20
			name := e.newUsername()
			users := make([]core.User, n)
			errs := make([]error, n)
			for i := range users {
				users[i] = e.newUser()
				users[i].Username = name
			}
			coretest.Concurrently(n, func(i int) { _, errs[i] = e.a.CreateUser(e.ctx, users[i]) })
			expectOneWon(t, errs, core.ErrAlreadyExists, "a losing concurrent createUser", "concurrent createUser calls with one username succeeded")
			stored := e.state(t).Users
			if len(stored) != 1 {
				t.Fatalf("%d users stored, want 1: %s", len(stored), show(stored))
			}
			expectUser(t, "getUserByUsername after the race", e.getUserByUsername(t, name), stored[0])
			for _, u := range users {
				if u.ID != stored[0].ID {
					e.expectAddressFree(t, "the address of a user that lost the race for its name", u.Email)
				}
			}
		}},
		{group: usernames, name: "concurrent_renames_to_one_name_one_wins", extension: x, needs: []core.Method{getUser, updateUser}, run: func(t *testing.T, e *env) {
			for round := range 10 {
				us := [2]core.User{e.newUserNamed(), e.newUserNamed()}
				for _, u := range us {
					e.createUser(t, u)
				}
				name := e.newUsername()
				errs := make([]error, len(us))
				coretest.Concurrently(len(us), func(i int) {
					_, errs[i] = e.a.UpdateUser(e.ctx, core.UserUpdate{ID: us[i].ID, Username: core.Set(name)})
				})
				expectOneWon(t, errs, core.ErrAlreadyExists, "the losing rename", fmt.Sprintf("round %d: concurrent renames to one name succeeded", round))
				for i, u := range us {
					want := u.Normalize()
					if errs[i] == nil {
						want.Username = name
						expectUser(t, "getUserByUsername of the name both took", e.getUserByUsername(t, name), want)
					}
					expectUser(t, fmt.Sprintf("round %d: getUser after the race", round), e.getUser(t, u.ID), want)
				}
				if t.Failed() {
					return
				}
			}
		}},
		{group: usernames, name: "checked_layer_refuses_raw_names", extension: x, needs: []core.Method{updateUser}, run: func(t *testing.T, e *env) {
			u := e.newUserNamed()
			e.createUser(t, u)
			raw := "Name." + u.ID // upper case: not normalised
			bad := e.newUser()
			bad.Username = raw
			expectInvalid(t, e, "createUser", e.a.CreateUser, map[string]core.User{"a username not normalised": bad})
			e.expectRefused(t, "updateUser to a username not normalised", "the rejected updateUser", core.ErrInvalidInput, func() error {
				return errOf(e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Username: core.Set(raw)}))
			})
			for _, name := range []string{"NAME-" + u.Username[len("name-"):], " " + u.Username, "a\u0430b"} {
				if g := e.getUserByUsername(t, name); g != nil {
					t.Errorf("getUserByUsername(%q), a name not normalised, = %s; want nil", name, show(g))
				}
			}
		}},
		{group: usernames, name: "refused_where_not_kept", needs: []core.Method{createUser, updateUser}, run: func(t *testing.T, e *env) {
			for _, w := range withoutExtensions(e.adapter) {
				s := core.NewStore(w.adapter)
				u := e.newUserNamed()
				expectInvalid(t, e, "createUser through "+w.name, s.CreateUser, map[string]core.User{"a username": u})
				plain := e.storedUser(t)
				e.expectRefused(t, "updateUser setting a username through "+w.name, "the rejected updateUser", core.ErrInvalidInput, func() error {
					return errOf(s.UpdateUser(e.ctx, core.UserUpdate{ID: plain.ID, Username: core.Set(e.newUsername())}))
				})
			}
		}},
	}
}

// indexOfUser returns the index of the user with the id in users, or -1.
func indexOfUser(users []core.User, id string) int {
	for i, u := range users {
		if u.ID == id {
			return i
		}
	}
	return -1
}
