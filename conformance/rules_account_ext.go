package conformance

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/authport/authport/core"
)

// The groups of the account extensions' rules.
const (
	listAccounts  = string(core.MethodListAccountsByUserID)
	updateAccount = string(core.MethodUpdateAccount)
)

// accountListRules are the rules of the listAccountsByUserId extension
// ([core.AccountsByUserLister]).
func accountListRules() []rule {
	x := core.ExtensionListAccountsByUserID
	needs := []core.Method{createUser, linkAccount}
	return []rule{
		{group: listAccounts, name: "lists_the_users_accounts_in_order", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			var want []core.Account
			for _, p := range []string{"google", "github", "github"} {
				acc := e.newAccount(u.ID)
				acc.Provider = p
				e.linkAccount(t, acc)
				want = append(want, acc.Normalize())
			}
			e.linkAccount(t, e.newAccount(other.ID))
			slices.SortFunc(want, byAccountKey)
			got, err := e.a.ListAccountsByUserID(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "listAccountsByUserId", got, want)
		}},
		{group: listAccounts, name: "unknown_user_is_an_empty_list", extension: x, run: func(t *testing.T, e *env) {
			got, err := e.a.ListAccountsByUserID(e.ctx, "no-such-user")
			if err != nil || got == nil || len(got) != 0 {
				t.Errorf("listAccountsByUserId of an unknown user = %s, %v; want an empty, non-nil list", show(got), err)
			}
		}},
		{group: listAccounts, name: "follows_unlink_and_delete", extension: x, needs: []core.Method{createUser, linkAccount, unlinkAccount, deleteUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			first, second := e.newAccount(u.ID), e.newAccount(u.ID)
			e.linkAccount(t, first)
			e.linkAccount(t, second)
			if _, err := e.a.UnlinkAccount(e.ctx, first.Key()); err != nil {
				t.Fatal(err)
			}
			got, err := e.a.ListAccountsByUserID(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "listAccountsByUserId after unlinking one of two", got, []core.Account{second.Normalize()})
			if _, err := e.a.DeleteUser(e.ctx, u.ID); err != nil {
				t.Fatal(err)
			}
			got, err = e.a.ListAccountsByUserID(e.ctx, u.ID)
			if err != nil || len(got) != 0 {
				t.Errorf("listAccountsByUserId after deleteUser = %s, %v; want an empty list", show(got), err)
			}
		}},
	}
}

// accountUpdateRules are the rules of the updateAccount extension
// ([core.AccountUpdater]).
func accountUpdateRules() []rule {
	x := core.ExtensionUpdateAccount
	needs := []core.Method{createUser, linkAccount, getAccount}
	return []rule{
		{group: updateAccount, name: "changes_only_set_fields", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			e.linkAccount(t, acc)
			up := core.AccountUpdate{Provider: acc.Provider, ProviderAccountID: acc.ProviderAccountID,
				AccessToken: core.Set(ptr("rotated-access")), RefreshToken: core.Set(ptr("rotated-refresh")),
				ExpiresAt: core.Set(ptr(int64(1999999999))), TokenType: core.Set(ptr("DPoP"))}
			want := up.Apply(acc.Normalize())
			if want.TokenType == nil || *want.TokenType != "dpop" {
				t.Fatalf("AccountUpdate.Apply left token_type %s, want dpop", show(want.TokenType))
			}
			got, err := e.a.UpdateAccount(e.ctx, up)
			if err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "updateAccount result", got, &want)
			expectEqual(t, "getAccount after updateAccount", e.getAccount(t, acc.ProviderAccountID, acc.Provider), &want)
			expectEqual(t, "stored accounts", e.state(t).Accounts, []core.Account{want})
		}},
		{group: updateAccount, name: "null_clears_a_field", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			e.linkAccount(t, acc)
			up := core.AccountUpdate{Provider: acc.Provider, ProviderAccountID: acc.ProviderAccountID,
				RefreshToken: core.Null[string](), ExpiresIn: core.Null[int64]()}
			want := acc.Normalize()
			want.RefreshToken, want.ExpiresIn = nil, nil
			if _, err := e.a.UpdateAccount(e.ctx, up); err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "getAccount after clearing refresh_token and expires_in", e.getAccount(t, acc.ProviderAccountID, acc.Provider), &want)
		}},
		{group: updateAccount, name: "unknown_account_is_nil", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			e.linkAccount(t, acc)
			before := e.state(t)
			for _, key := range []core.AccountKey{
				{Provider: acc.Provider, ProviderAccountID: "no-such-account"},
				{Provider: "no-such-provider", ProviderAccountID: acc.ProviderAccountID},
			} {
				got, err := e.a.UpdateAccount(e.ctx, core.AccountUpdate{Provider: key.Provider, ProviderAccountID: key.ProviderAccountID,
					AccessToken: core.Set(ptr("x"))})
				if got != nil || err != nil {
					t.Errorf("updateAccount of %v = %s, %v; want nil, nil", key, show(got), err)
				}
			}
			e.expectUnchanged(t, before, "updateAccount of unknown accounts")
		}},
		{group: updateAccount, name: "empty_key_rejected", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			before := e.state(t)
			for _, up := range []core.AccountUpdate{
				{Provider: "", ProviderAccountID: "x", AccessToken: core.Set(ptr("x"))},
				{Provider: "github", ProviderAccountID: "", AccessToken: core.Set(ptr("x"))},
			} {
				if _, err := e.a.UpdateAccount(e.ctx, up); !errors.Is(err, core.ErrInvalidInput) {
					t.Errorf("updateAccount %+v: %v, want an error matching core.ErrInvalidInput", up.Key(), err)
				}
			}
			e.expectUnchanged(t, before, "rejected updateAccount")
		}},
		{group: updateAccount, name: "two_instances_update_different_fields", extension: x, needs: needs, needsPeer: true, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			for round := range 10 {
				acc := e.newAccount(u.ID)
				e.linkAccount(t, acc)
				want := acc.Normalize()
				want.AccessToken = ptr(fmt.Sprintf("access %d", round))
				want.Scope = ptr(fmt.Sprintf("scope %d", round))
				want.IDToken = ptr(fmt.Sprintf("id %d", round))
				want.SessionState = nil
				key := func(up core.AccountUpdate) core.AccountUpdate {
					up.Provider, up.ProviderAccountID = acc.Provider, acc.ProviderAccountID
					return up
				}
				updates := []core.AccountUpdate{
					key(core.AccountUpdate{AccessToken: core.Set(want.AccessToken)}),
					key(core.AccountUpdate{Scope: core.Set(want.Scope)}),
					key(core.AccountUpdate{IDToken: core.Set(want.IDToken)}),
					key(core.AccountUpdate{SessionState: core.Null[string]()}),
				}
				throughBoth(t, e, updates, (*core.Store).UpdateAccount)
				expectEqual(t, fmt.Sprintf("round %d: getAccount after concurrent updates of different fields through two instances", round),
					e.getAccount(t, acc.ProviderAccountID, acc.Provider), &want)
				if t.Failed() {
					return
				}
			}
		}},
	}
}
