package conformance

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

const (
	createUser        = core.MethodCreateUser
	getUser           = core.MethodGetUser
	getUserByEmail    = core.MethodGetUserByEmail
	getUserByAccount  = core.MethodGetUserByAccount
	updateUser        = core.MethodUpdateUser
	deleteUser        = core.MethodDeleteUser
	linkAccount       = core.MethodLinkAccount
	unlinkAccount     = core.MethodUnlinkAccount
	getAccount        = core.MethodGetAccount
	createSession     = core.MethodCreateSession
	getSessionAndUser = core.MethodGetSessionAndUser
	updateSession     = core.MethodUpdateSession
	deleteSession     = core.MethodDeleteSession
	createToken       = core.MethodCreateVerificationToken
	useToken          = core.MethodUseVerificationToken
	createAuth        = core.MethodCreateAuthenticator
	getAuth           = core.MethodGetAuthenticator
	listAuth          = core.MethodListAuthenticatorsByUserID
	updateCounter     = core.MethodUpdateAuthenticatorCounter
)

// badStrings yields values that an adapter must either store faithfully or
// reject with an error, and never panic on, by name, in a fixed order with
// the 1 MiB value last, so that a rule that snapshots the store before each
// value does not read the large record again for every later one (on the
// Redis unstorage layout, under -race, each such snapshot took seconds).
func badStrings() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, b := range [][2]string{
			{"invalid_utf8", "bad\xff\xfe\xc3(utf8"},
			{"nul_byte", "nul\x00byte"},
			{"key_syntax", "a:b{c}d e*f?[g]\\h.i$j"},
			{"unicode", "Ünïcødé ✓ 🔑"},
			{"leading_space", "  padded  "},
			{"1MiB", strings.Repeat("x", 1<<20)},
		} {
			if !yield(b[0], b[1]) {
				return
			}
		}
	}
}

func userRules() []rule {
	return slices.Concat(createUserRules(), getUserRules(), getUserByEmailRules(), getUserByAccountRules(), updateUserRules(), deleteUserRules())
}

// expectRoundTrip creates u and checks that createUser's result, getUser,
// getUserByEmail and the stored users all give u back, normalized.
func (e *env) expectRoundTrip(t *testing.T, u core.User) {
	t.Helper()
	want := u.Normalize()
	got := e.createUser(t, u)
	expectUser(t, "createUser result", &got, want)
	expectUser(t, "getUser", e.getUser(t, u.ID), want)
	expectUser(t, "getUserByEmail", e.getUserByEmail(t, u.Email), want)
	expectEqual(t, "stored users", e.state(t).Users, []core.User{canonUser(want)})
}

// takenUserKeyRule is the createUser rule, named name, that a new user
// whose key (an e-mail or id, what names it) take copies from a stored user
// is refused with core.ErrAlreadyExists and stores nothing.
func takenUserKeyRule(name, what string, take func(dup *core.User, u core.User)) rule {
	return rule{group: string(createUser), name: name, run: func(t *testing.T, e *env) {
		u := e.storedUser(t)
		dup := e.newUser()
		take(&dup, u)
		e.expectRefused(t, "createUser with a taken "+what, "the rejected createUser", core.ErrAlreadyExists, func() error { return errOf(e.a.CreateUser(e.ctx, dup)) })
	}}
}

// createUserRules are the rules of the createUser method.
func createUserRules() []rule {
	return []rule{
		{group: string(createUser), name: "round_trip_all_fields", needs: []core.Method{getUser, getUserByEmail}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			e.expectRoundTrip(t, u)
		}},
		{group: string(createUser), name: "null_and_empty_differ", needs: []core.Method{getUser}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			u.EmailVerified, u.Name, u.Image = nil, nil, ptr("")
			e.createUser(t, u)
			got := e.getUser(t, u.ID)
			expectUser(t, "getUser", got, u)
			if got != nil && (got.Name != nil || got.EmailVerified != nil || got.Image == nil) {
				t.Errorf("null became empty or empty became null: %s", show(got))
			}
			expectEqual(t, "stored users", e.state(t).Users, []core.User{u})
		}},
		{group: string(createUser), name: "time_utc_millisecond", needs: []core.Method{getUser}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			u.EmailVerified = ptr(at(0)) // 15:09:26.535897932 +05:30
			e.createUser(t, u)
			got := e.getUser(t, u.ID)
			want := time.Date(2031, time.March, 14, 9, 39, 26, 535000000, time.UTC)
			if got == nil || got.EmailVerified == nil {
				t.Fatalf("getUser: %s, want emailVerified set", show(got))
			}
			expectUTC(t, "emailVerified", *got.EmailVerified)
			if !got.EmailVerified.Equal(want) {
				t.Errorf("emailVerified = %s, want %s (UTC, truncated to the millisecond)", got.EmailVerified.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
			}
			stored := e.state(t).Users
			if len(stored) != 1 || stored[0].EmailVerified == nil || !stored[0].EmailVerified.Equal(want) {
				t.Errorf("stored users = %s, want emailVerified %s", show(stored), want.Format(time.RFC3339Nano))
			}
		}},
		takenUserKeyRule("duplicate_email_rejected", "e-mail", func(dup *core.User, u core.User) { dup.Email = u.Email }),
		takenUserKeyRule("duplicate_id_rejected", "id", func(dup *core.User, u core.User) { dup.ID = u.ID }),
		{group: string(createUser), name: "duplicate_email_under_concurrency", run: func(t *testing.T, e *env) {
			const n = 20
			email := e.id("race") + "@example.com"
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				u := e.newUser()
				u.Email = email
				wg.Go(func() { _, errs[i] = e.a.CreateUser(e.ctx, u) })
			}
			wg.Wait()
			expectOneWon(t, errs, core.ErrAlreadyExists, "a losing concurrent createUser", "concurrent createUser calls with one e-mail succeeded")
			if users := e.state(t).Users; len(users) != 1 {
				t.Errorf("%d users stored, want 1: %s", len(users), show(users))
			}
		}},
		{group: string(createUser), name: "empty_fields_rejected", run: func(t *testing.T, e *env) {
			// An empty e-mail address is no error: a user without one
			// (the optionalEmail rules).
			expectInvalid(t, e, "createUser", e.a.CreateUser, map[string]core.User{
				"empty id": {ID: "", Email: e.id("x") + "@example.com"},
			})
		}},
		{group: string(createUser), name: "cancelled_context_errors", run: func(t *testing.T, e *env) {
			before := e.state(t)
			ctx, cancel := contextCancelled(e.ctx)
			defer cancel()
			if _, err := e.a.CreateUser(ctx, e.newUser()); err == nil {
				t.Error("createUser with a cancelled context returned no error")
			}
			e.expectUnchanged(t, before, "createUser with a cancelled context")
		}},
		{group: string(createUser), name: "bad_strings_round_trip_or_error", needs: []core.Method{getUser}, run: func(t *testing.T, e *env) {
			for name, s := range badStrings() {
				before := e.state(t)
				u := e.newUser()
				u.Name = ptr(s)
				u.Email = e.id("bad") + s + "@example.com"
				got, err := e.a.CreateUser(e.ctx, u)
				if err != nil {
					e.expectUnchanged(t, before, "createUser with "+name+" that failed")
					continue
				}
				if got == nil {
					t.Errorf("createUser with %s returned nil and no error", name)
					continue
				}
				stored := e.getUser(t, u.ID)
				if stored == nil || stored.Name == nil || *stored.Name != s || stored.Email != u.Email {
					t.Errorf("createUser with %s accepted the value but did not store it faithfully", name)
				}
			}
		}},
		{group: string(createUser), name: "records_copied_in_and_out", needs: []core.Method{getUser}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			want := u.Normalize()
			got := e.createUser(t, u)
			*u.Name, *u.Image = "changed by caller", "changed"
			*got.Name = "changed too"
			fetched := e.getUser(t, u.ID)
			expectUser(t, "getUser after the caller changed its copies", fetched, want)
			if fetched != nil {
				*fetched.Name = "and again"
			}
			expectUser(t, "getUser after the caller changed a fetched copy", e.getUser(t, u.ID), want)
		}},
	}
}

// getUserRules are the rules of the getUser method.
func getUserRules() []rule {
	return append(lookupRules(getUser, (*env).getUser, func(u core.User) string { return u.ID }, "no-such-user", "id"), []rule{
		{group: string(getUser), name: "bad_ids_never_panic", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			e.storedUser(t)
			before := e.state(t)
			lookUp := func(name, id string) {
				if u, err := e.a.GetUser(e.ctx, id); err == nil && u != nil {
					t.Errorf("getUser(%s) found %s", name, show(u))
				}
			}
			for name, id := range badStrings() {
				lookUp(name, id)
			}
			lookUp("empty", "")
			e.expectUnchanged(t, before, "getUser")
		}},
		{group: string(getUser), name: "cancelled_context_errors", run: func(t *testing.T, e *env) {
			ctx, cancel := contextCancelled(e.ctx)
			defer cancel()
			if _, err := e.a.GetUser(ctx, "any"); err == nil {
				t.Error("getUser with a cancelled context returned no error")
			}
		}},
	}...)
}

// getUserByEmailRules are the rules of the getUserByEmail method.
func getUserByEmailRules() []rule {
	return lookupRules(getUserByEmail, (*env).getUserByEmail, func(u core.User) string { return u.Email }, "nobody@example.com", "address")
}

// lookupRules are the rules that the user lookup m, called through get,
// finds the user whose key (key) it is given and not another, and finds
// nothing (nil) by unknown, a key no user has; what names the key in the
// failure message.
func lookupRules(m core.Method, get func(*env, *testing.T, string) *core.User, key func(core.User) string, unknown, what string) []rule {
	return []rule{
		{group: string(m), name: "finds_user", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.storedUser(t) // another user, not to be found
			expectUser(t, string(m), get(e, t, key(u)), u.Normalize())
		}},
		{group: string(m), name: "not_found_is_nil", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			e.storedUser(t)
			if u := get(e, t, unknown); u != nil {
				t.Errorf("%s of an unknown %s = %s, want nil", m, what, show(u))
			}
		}},
	}
}

// getUserByAccountRules are the rules of the getUserByAccount method.
func getUserByAccountRules() []rule {
	return []rule{
		{group: string(getUserByAccount), name: "finds_owner", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			acc := e.newAccount(u.ID)
			e.linkAccount(t, acc)
			e.linkAccount(t, e.newAccount(other.ID))
			got, err := e.a.GetUserByAccount(e.ctx, acc.Key())
			if err != nil {
				t.Fatal(err)
			}
			expectUser(t, "getUserByAccount", got, u.Normalize())
		}},
		{group: string(getUserByAccount), name: "not_found_is_nil", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			e.linkAccount(t, acc)
			for _, key := range []core.AccountKey{
				{Provider: "github", ProviderAccountID: "no-such-account"},
				{Provider: "gitlab", ProviderAccountID: acc.ProviderAccountID},
			} {
				got, err := e.a.GetUserByAccount(e.ctx, key)
				if err != nil || got != nil {
					t.Errorf("getUserByAccount(%+v) = %s, %v; want nil, nil", key, show(got), err)
				}
			}
		}},
		{group: string(getUserByAccount), name: "provider_and_id_not_swapped", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			acc.Provider, acc.ProviderAccountID = "alpha", "beta"
			e.linkAccount(t, acc)
			lookup := e.a.GetUserByAccount
			got, err := lookup(e.ctx, core.AccountKey{Provider: "alpha", ProviderAccountID: "beta"})
			if err != nil {
				t.Fatal(err)
			}
			expectUser(t, "getUserByAccount{provider: alpha, providerAccountId: beta}", got, u.Normalize())
			if got, err := lookup(e.ctx, core.AccountKey{Provider: "beta", ProviderAccountID: "alpha"}); err != nil || got != nil {
				t.Errorf("getUserByAccount with provider and id swapped = %s, %v; want nil, nil", show(got), err)
			}
		}},
	}
}

// updateUserRules are the rules of the updateUser method.
func updateUserRules() []rule {
	return []rule{
		{group: string(updateUser), name: "changes_only_given_fields", needs: []core.Method{createUser, getUser}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			got, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Name: core.Set(ptr("Grace"))})
			if err != nil {
				t.Fatal(err)
			}
			want := u.Normalize()
			want.Name = ptr("Grace")
			expectUser(t, "updateUser result", got, want)
			expectUser(t, "getUser after updateUser", e.getUser(t, u.ID), want)
			expectEqual(t, "stored users", e.state(t).Users, sortedUsers(canonUser(want), canonUser(other.Normalize())))
		}},
		{group: string(updateUser), name: "sets_nullable_fields_to_null", needs: []core.Method{createUser, getUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			got, err := e.a.UpdateUser(e.ctx, core.UserUpdate{
				ID: u.ID, Name: core.Null[string](), EmailVerified: core.Null[time.Time](), Image: core.Set(ptr("")),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := u.Normalize()
			want.Name, want.EmailVerified, want.Image = nil, nil, ptr("")
			expectUser(t, "updateUser result", got, want)
			expectUser(t, "getUser after updateUser", e.getUser(t, u.ID), want)
			expectEqual(t, "stored users", e.state(t).Users, []core.User{want})
		}},
		{group: string(updateUser), name: "sets_email_verified_utc_millisecond", needs: []core.Method{createUser, getUser}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			u.EmailVerified = nil
			e.createUser(t, u)
			verified := at(time.Hour)
			if _, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, EmailVerified: core.Set(&verified)}); err != nil {
				t.Fatal(err)
			}
			want := u.Normalize()
			want.EmailVerified = ptr(core.NormalizeTime(verified))
			expectUser(t, "getUser after updateUser", e.getUser(t, u.ID), want)
		}},
		{group: string(updateUser), name: "concurrent_updates_of_different_fields_kept", needs: []core.Method{createUser, getUser}, run: func(t *testing.T, e *env) {
			for round := range 10 {
				u := e.storedUser(t)
				name, image := ptr(fmt.Sprintf("name %d", round)), ptr(fmt.Sprintf("image %d", round))
				var wg sync.WaitGroup
				errs := make([]error, 2)
				wg.Go(func() {
					_, errs[0] = e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Name: core.Set(name)})
				})
				wg.Go(func() {
					_, errs[1] = e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Image: core.Set(image)})
				})
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
				got := e.getUser(t, u.ID)
				if got == nil || got.Name == nil || *got.Name != *name || got.Image == nil || *got.Image != *image {
					t.Fatalf("round %d: after concurrent updates of name and image the user is %s; one update was lost", round, show(got))
				}
			}
		}},
		{group: string(updateUser), name: "two_instances_update_different_fields", needs: []core.Method{createUser, getUser}, needsPeer: true, run: func(t *testing.T, e *env) {
			// Two adapter instances on one store (two processes of the
			// application) update different fields of one user at once:
			// each writes only the fields it is given, so every update
			// is kept. In-process serialisation cannot pass this rule.
			for round := range 10 {
				u := e.storedUser(t)
				want := u.Normalize()
				want.Name = ptr(fmt.Sprintf("name %d", round))
				want.Image = ptr(fmt.Sprintf("image %d", round))
				want.Email = e.id("moved") + "@example.com"
				want.EmailVerified = ptr(core.NormalizeTime(at(time.Duration(round+1) * time.Hour)))
				updates := []core.UserUpdate{
					{ID: u.ID, Name: core.Set(want.Name)},
					{ID: u.ID, Image: core.Set(want.Image)},
					{ID: u.ID, EmailVerified: core.Set(want.EmailVerified)},
					{ID: u.ID, Email: core.Set(want.Email)},
				}
				throughBoth(t, e, updates, (*core.Store).UpdateUser)
				expectUser(t, fmt.Sprintf("round %d: getUser after four concurrent updates of different fields through two instances", round), e.getUser(t, u.ID), want)
				if t.Failed() {
					return
				}
			}
		}},
		{group: string(updateUser), name: "moves_email", needs: []core.Method{createUser, getUserByEmail}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			newEmail := e.id("moved") + "@example.com"
			if _, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Email: core.Set(newEmail)}); err != nil {
				t.Fatal(err)
			}
			if got := e.getUserByEmail(t, u.Email); got != nil {
				t.Errorf("getUserByEmail of the old address = %s, want nil", show(got))
			}
			want := u.Normalize()
			want.Email = newEmail
			expectUser(t, "getUserByEmail of the new address", e.getUserByEmail(t, newEmail), want)
			// The old address is free again.
			reuse := e.newUser()
			reuse.Email = u.Email
			e.createUser(t, reuse)
		}},
		{group: string(updateUser), name: "taken_email_rejected", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			e.expectRefused(t, "updateUser to another user's e-mail", "the rejected updateUser", core.ErrAlreadyExists, func() error {
				return errOf(e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Email: core.Set(other.Email), Name: core.Set(ptr("x"))}))
			})
		}},
		{group: string(updateUser), name: "unknown_user_errors", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			e.storedUser(t)
			before := e.state(t)
			_, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: "no-such-user", Name: core.Set(ptr("x"))})
			expectErr(t, "updateUser of an unknown id", err, core.ErrNotFound)
			_, err = e.a.UpdateUser(e.ctx, core.UserUpdate{ID: "", Name: core.Set(ptr("x"))})
			expectErr(t, "updateUser with an empty id", err, core.ErrInvalidInput)
			e.expectUnchanged(t, before, "the rejected updateUser")
		}},
	}
}

// deleteUserRules are the rules of the deleteUser method.
func deleteUserRules() []rule {
	return []rule{
		{group: string(deleteUser), name: "removes_user", needs: []core.Method{createUser, getUser, getUserByEmail}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			got, err := e.a.DeleteUser(e.ctx, u.ID)
			expectOptional(t, err, "deleteUser result", got, u.Normalize(), expectUser)
			if g := e.getUser(t, u.ID); g != nil {
				t.Errorf("getUser after deleteUser = %s, want nil", show(g))
			}
			if g := e.getUserByEmail(t, u.Email); g != nil {
				t.Errorf("getUserByEmail after deleteUser = %s, want nil", show(g))
			}
			expectEqual(t, "stored users", e.state(t).Users, []core.User{canonUser(other.Normalize())})
			reuse := e.newUser()
			reuse.Email = u.Email
			e.createUser(t, reuse)
		}},
		{group: string(deleteUser), name: "cascades_to_accounts_sessions_authenticators", needs: []core.Method{createUser, linkAccount, createSession, createAuth}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			for _, id := range []string{u.ID, other.ID} {
				acc := e.newAccount(id)
				e.linkAccount(t, acc)
				e.linkAccount(t, e.newAccount(id))
				e.createSession(t, e.newSession(id))
				e.createSession(t, e.newSession(id))
				e.createAuthenticator(t, e.newAuthenticator(id, acc.ProviderAccountID))
			}
			keep := e.state(t)
			if _, err := e.a.DeleteUser(e.ctx, u.ID); err != nil {
				t.Fatal(err)
			}
			s := e.state(t)
			for _, a := range s.Accounts {
				if a.UserID == u.ID {
					t.Errorf("account %s survived deleteUser", show(a.Key()))
				}
			}
			for _, se := range s.Sessions {
				if se.UserID == u.ID {
					t.Errorf("session %q survived deleteUser", se.SessionToken)
				}
			}
			for _, au := range s.Authenticators {
				if au.UserID == u.ID {
					t.Errorf("authenticator %q survived deleteUser", au.CredentialID)
				}
			}
			if len(s.Accounts) != 2 || len(s.Sessions) != 2 || len(s.Authenticators) != 1 {
				t.Errorf("deleteUser removed another user's records: left %d accounts, %d sessions, %d authenticators of %d, %d, %d",
					len(s.Accounts), len(s.Sessions), len(s.Authenticators), len(keep.Accounts), len(keep.Sessions), len(keep.Authenticators))
			}
			if m, ok := e.raw.(Mentioner); ok {
				for _, needle := range []string{u.ID, u.Email} {
					found, err := m.Mentions(e.ctx, needle)
					if err != nil {
						t.Fatal(err)
					}
					if len(found) > 0 {
						t.Errorf("after deleteUser, stored entries still mention %q: %v", needle, found)
					}
				}
			}
		}},
		{group: string(deleteUser), name: "unknown_user_is_nil", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			e.storedUser(t)
			expectNothing(t, e, "deleteUser of an unknown id", func() (*core.User, error) { return e.a.DeleteUser(e.ctx, "no-such-user") })
		}},
	}
}

func sortedUsers(us ...core.User) []core.User {
	out := slices.Clone(us)
	slices.SortFunc(out, byUserID)
	return out
}
