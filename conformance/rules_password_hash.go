package conformance

import (
	"fmt"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// passwordHashes is the group of the rules of password hashes on accounts
// ([core.Account.PasswordHash]) and the swapPasswordHash extension
// ([core.PasswordHashSwapper]).
const passwordHashes = "passwordHashes"

// newPasswordHash returns a fresh hash in the PHC string format, with the
// '$', '=' and ',' it uses.
func (e *env) newPasswordHash() string {
	return "$argon2id$v=19$m=65536,t=3,p=4$" + e.id("c2FsdA") + "$aGFzaC1oYXNoLWhhc2g+/=="
}

// newPasswordAccount returns the password account of the user, with a hash
// when hash is not "".
func newPasswordAccount(userID, hash string) core.Account {
	acc := core.Account{UserID: userID, Provider: core.PasswordProvider, Type: core.AccountTypeCredentials, ProviderAccountID: userID}
	if hash != "" {
		acc.PasswordHash = &hash
	}
	return acc
}

// withHash returns acc, normalised, with the password hash h ("" for none).
func withHash(acc core.Account, h string) core.Account {
	acc = acc.Normalize()
	acc.PasswordHash = nil
	if h != "" {
		acc.PasswordHash = &h
	}
	return acc
}

// expectStoredAccount fails the test unless getAccount and the raw view
// give want for its key.
func (e *env) expectStoredAccount(t *testing.T, what string, want core.Account) {
	t.Helper()
	expectAccount(t, what+": getAccount", e.getAccount(t, want.ProviderAccountID, want.Provider), want)
	for _, a := range e.state(t).Accounts {
		if a.Key() == want.Key() {
			expectEqual(t, what+": the stored account", a, want)
			return
		}
	}
	t.Errorf("%s: no account %s stored", what, show(want.Key()))
}

// expectSwapRefused calls swapPasswordHash of the account named by key from
// old, which is not its stored hash, through the checked layer and on the
// adapter itself, and fails the test unless each fails with
// core.ErrPasswordHashChanged and changes nothing, and the adapter returns
// the stored account, stored.
func (e *env) expectSwapRefused(t *testing.T, what string, key core.AccountKey, old string, stored core.Account) {
	t.Helper()
	e.expectRefused(t, what, what, core.ErrPasswordHashChanged, func() error {
		return errOf(e.a.SwapPasswordHash(e.ctx, key, old, e.newPasswordHash()))
	})
	// The checked layer returns no record with an error; the adapter's
	// own result is the stored account, for the caller to try again from.
	swap, err := core.Require[core.PasswordHashSwapper](e.adapter, "the passwordHashes rules")
	if err != nil {
		t.Fatal(err)
	}
	var got *core.Account
	e.expectRefused(t, what+" on the adapter itself", what+" on the adapter itself", core.ErrPasswordHashChanged, func() error {
		got, err = swap.SwapPasswordHash(e.ctx, key, old, e.newPasswordHash())
		return err
	})
	expectAccount(t, "the account "+what+" returned", got, stored)
}

// skipWithout skips the test, naming the extension, when the adapter does
// not offer it (for a rule that needs a second extension besides its own).
func (e *env) skipWithout(t *testing.T, x core.Extension) {
	t.Helper()
	if caps := core.Probe(e.adapter); !caps.HasExtension(x) {
		t.Skipf("adapter %s does not implement %s (an optional extension)", caps.Adapter(), x)
	}
}

// passwordHashRules are the rules of password hashes, for adapters that
// offer swapPasswordHash, and the rule that an adapter without it is
// refused a hash.
func passwordHashRules() []rule {
	x := core.ExtensionSwapPasswordHash
	needs := []core.Method{createUser, linkAccount, getAccount}
	return []rule{
		{group: passwordHashes, name: "round_trip", extension: x, needs: []core.Method{createUser, linkAccount, getAccount, getUserByAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := newPasswordAccount(u.ID, e.newPasswordHash())
			want := acc.Normalize()
			got := e.linkAccount(t, acc)
			expectAccount(t, "linkAccount result", &got, want)
			e.linkAccount(t, e.newAccount(u.ID)) // an account without a hash beside it
			e.expectStoredAccount(t, "a password account", want)
			owner, err := e.a.GetUserByAccount(e.ctx, acc.Key())
			if err != nil {
				t.Fatal(err)
			}
			expectUser(t, "getUserByAccount of the password account", owner, u.Normalize())
			if caps := core.Probe(e.adapter); caps.HasExtension(core.ExtensionListAccountsByUserID) {
				list, err := e.a.ListAccountsByUserID(e.ctx, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				if i := indexOfAccount(list, acc.Key()); i < 0 {
					t.Errorf("listAccountsByUserId = %s; the password account is missing", show(list))
				} else {
					expectEqual(t, "the password account in listAccountsByUserId", list[i], want)
				}
			}
		}},
		{group: passwordHashes, name: "no_hash_is_nil", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			for _, acc := range []core.Account{e.newAccount(u.ID), newPasswordAccount(u.ID, "")} {
				e.linkAccount(t, acc)
				got := e.getAccount(t, acc.ProviderAccountID, acc.Provider)
				if got != nil && got.PasswordHash != nil {
					t.Errorf("getAccount of an account linked without a hash: passwordHash %q; want nil", *got.PasswordHash)
				}
				e.expectStoredAccount(t, "an account without a hash", acc.Normalize())
			}
		}},
		{group: passwordHashes, name: "swap_from_the_stored_hash", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			old, next := e.newPasswordHash(), e.newPasswordHash()
			acc := newPasswordAccount(u.ID, old)
			e.linkAccount(t, acc)
			want := withHash(acc, next)
			got, err := e.a.SwapPasswordHash(e.ctx, acc.Key(), old, next)
			if err != nil {
				t.Fatalf("swapPasswordHash from the stored hash: %v", err)
			}
			expectAccount(t, "swapPasswordHash result", got, want)
			e.expectStoredAccount(t, "after swapPasswordHash", want)
		}},
		{group: passwordHashes, name: "swap_from_another_hash_changes_nothing", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			stored := e.newPasswordHash()
			acc := newPasswordAccount(u.ID, stored)
			e.linkAccount(t, acc)
			for what, old := range map[string]string{"another hash": e.newPasswordHash(), "\"\" (no hash)": "", "the hash cut short": stored[:len(stored)-1]} {
				e.expectSwapRefused(t, "swapPasswordHash from "+what, acc.Key(), old, acc.Normalize())
			}
		}},
		{group: passwordHashes, name: "unknown_account_is_nil", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := newPasswordAccount(u.ID, e.newPasswordHash())
			e.linkAccount(t, acc)
			for _, key := range []core.AccountKey{
				{Provider: core.PasswordProvider, ProviderAccountID: "no-such-user"},
				{Provider: "github", ProviderAccountID: u.ID},
			} {
				expectNothing(t, e, fmt.Sprintf("swapPasswordHash of the unknown account %s", show(key)), func() (*core.Account, error) {
					return e.a.SwapPasswordHash(e.ctx, key, *acc.PasswordHash, e.newPasswordHash())
				})
			}
		}},
		{group: passwordHashes, name: "empty_old_hash_matches_no_hash", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := newPasswordAccount(u.ID, "")
			e.linkAccount(t, acc)
			e.expectSwapRefused(t, "swapPasswordHash of an account without a hash, from a hash", acc.Key(), e.newPasswordHash(), acc.Normalize())
			next := e.newPasswordHash()
			got, err := e.a.SwapPasswordHash(e.ctx, acc.Key(), "", next)
			if err != nil {
				t.Fatalf("swapPasswordHash of an account without a hash, from \"\": %v", err)
			}
			expectAccount(t, "swapPasswordHash result", got, withHash(acc, next))
			e.expectStoredAccount(t, "after the first hash was set", withHash(acc, next))
		}},
		{group: passwordHashes, name: "concurrent_swaps_from_one_hash_one_wins", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			const n = 50
			u := e.storedUser(t)
			old := e.newPasswordHash()
			acc := newPasswordAccount(u.ID, old)
			e.linkAccount(t, acc)
			next := make([]string, n)
			for i := range next {
				next[i] = e.newPasswordHash()
			}
			errs := make([]error, n)
			coretest.Concurrently(n, func(i int) { _, errs[i] = e.a.SwapPasswordHash(e.ctx, acc.Key(), old, next[i]) })
			expectOneWon(t, errs, core.ErrPasswordHashChanged, "a losing concurrent swapPasswordHash", "concurrent swapPasswordHash calls from one hash succeeded")
			for i, err := range errs {
				if err == nil {
					e.expectStoredAccount(t, "after the race", withHash(acc, next[i]))
				}
			}
		}},
		{group: passwordHashes, name: "updateAccount_keeps_the_hash", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			e.skipWithout(t, core.ExtensionUpdateAccount)
			u := e.storedUser(t)
			acc := newPasswordAccount(u.ID, e.newPasswordHash())
			e.linkAccount(t, acc)
			want := acc.Normalize()
			want.AccessToken, want.Scope = ptr("access-"+u.ID), ptr("read")
			got, err := e.a.UpdateAccount(e.ctx, core.AccountUpdate{Provider: acc.Provider, ProviderAccountID: acc.ProviderAccountID,
				AccessToken: core.Set(want.AccessToken), Scope: core.Set(want.Scope)})
			if err != nil {
				t.Fatal(err)
			}
			expectAccount(t, "updateAccount result", got, want)
			e.expectStoredAccount(t, "after updateAccount of token fields", want)
		}},
		{group: passwordHashes, name: "unlink_and_deleteUser_remove_the_hash", extension: x, needs: []core.Method{createUser, linkAccount, getAccount, unlinkAccount, deleteUser}, run: func(t *testing.T, e *env) {
			for _, remove := range []struct {
				what string
				call func(acc core.Account) error
				// relink: the user is still there, and the freed key
				// can be linked again.
				relink bool
			}{
				{"unlinkAccount", func(acc core.Account) error { return errOf(e.a.UnlinkAccount(e.ctx, acc.Key())) }, true},
				{"deleteUser", func(acc core.Account) error { return errOf(e.a.DeleteUser(e.ctx, acc.UserID)) }, false},
			} {
				u := e.storedUser(t)
				acc := newPasswordAccount(u.ID, e.newPasswordHash())
				e.linkAccount(t, acc)
				if err := remove.call(acc); err != nil {
					t.Fatalf("%s: %v", remove.what, err)
				}
				if got := e.getAccount(t, acc.ProviderAccountID, acc.Provider); got != nil {
					t.Errorf("getAccount after %s = %s; want nil", remove.what, show(got))
				}
				if i := indexOfAccount(e.state(t).Accounts, acc.Key()); i >= 0 {
					t.Errorf("the password account is still stored after %s", remove.what)
				}
				e.expectNoMention(t, "after "+remove.what+" of a password account", *acc.PasswordHash)
				if remove.relink {
					e.linkAccount(t, newPasswordAccount(u.ID, e.newPasswordHash()))
				}
			}
		}},
		{group: passwordHashes, name: "refused_where_not_kept", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			for _, w := range withoutExtensions(e.adapter) {
				s := core.NewStore(w.adapter)
				expectInvalid(t, e, "linkAccount through "+w.name, s.LinkAccount, map[string]core.Account{
					"a password hash": newPasswordAccount(u.ID, e.newPasswordHash()),
				})
				if _, err := s.SwapPasswordHash(e.ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: u.ID}, "", e.newPasswordHash()); err == nil {
					t.Errorf("swapPasswordHash through %s: no error", w.name)
				}
			}
		}},
	}
}

// indexOfAccount returns the index of the account with the key in
// accounts, or -1.
func indexOfAccount(accounts []core.Account, key core.AccountKey) int {
	for i, a := range accounts {
		if a.Key() == key {
			return i
		}
	}
	return -1
}
