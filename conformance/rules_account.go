package conformance

import (
	"fmt"
	"slices"
	"testing"

	"github.com/authport/authport/core"
)

func accountRules() []rule {
	return slices.Concat(linkAccountRules(), unlinkAccountRules(), getAccountRules())
}

// linkAccountRules are the rules of the linkAccount method.
func linkAccountRules() []rule {
	return []rule{
		{group: string(linkAccount), name: "round_trip_all_fields", needs: []core.Method{createUser, getAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			want := acc.Normalize()
			if want.TokenType == nil || *want.TokenType != "bearer" {
				t.Fatalf("core.Account.Normalize kept token_type %v, want bearer", want.TokenType)
			}
			got, err := e.a.LinkAccount(e.ctx, acc)
			expectOptional(t, err, "linkAccount result", got, want, expectAccount)
			fetched := found(t, "getAccount after linkAccount", e.getAccount(t, acc.ProviderAccountID, acc.Provider))
			expectEqual(t, "getAccount", fetched, want)
			expectEqual(t, "stored accounts", e.state(t).Accounts, []core.Account{want})
		}},
		{group: string(linkAccount), name: "null_and_empty_differ", needs: []core.Method{createUser, getAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			nulls := core.Account{UserID: u.ID, Provider: "google", Type: core.AccountTypeOIDC, ProviderAccountID: e.id("nulls")}
			empties := core.Account{
				UserID: u.ID, Provider: "google", Type: core.AccountTypeOIDC, ProviderAccountID: e.id("empties"),
				AccessToken: ptr(""), AuthorizationDetails: []core.AuthorizationDetail{}, ExpiresAt: ptr(int64(0)),
				ExpiresIn: ptr(int64(0)), IDToken: ptr(""), RefreshToken: ptr(""), Scope: ptr(""), TokenType: ptr(""), SessionState: ptr(""),
			}
			for _, acc := range []core.Account{nulls, empties} {
				e.linkAccount(t, acc)
				got := found(t, fmt.Sprintf("getAccount(%q)", acc.ProviderAccountID), e.getAccount(t, acc.ProviderAccountID, acc.Provider))
				expectEqual(t, "getAccount "+acc.ProviderAccountID, got, acc)
				if (got.AuthorizationDetails == nil) != (acc.AuthorizationDetails == nil) {
					t.Errorf("authorization_details: nil and empty are mixed up for %q", acc.ProviderAccountID)
				}
			}
			expectEqual(t, "stored accounts", e.state(t).Accounts, []core.Account{empties, nulls})
		}},
		{group: string(linkAccount), name: "token_type_lowercased", needs: []core.Method{createUser, getAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			acc.TokenType = ptr("DPoP")
			e.linkAccount(t, acc)
			got := e.getAccount(t, acc.ProviderAccountID, acc.Provider)
			if got == nil || got.TokenType == nil || *got.TokenType != "dpop" {
				t.Errorf("getAccount token_type = %s, want \"dpop\"", show(got))
			}
			if s := e.state(t).Accounts; len(s) != 1 || s[0].TokenType == nil || *s[0].TokenType != "dpop" {
				t.Errorf("stored token_type = %s, want \"dpop\"", show(s))
			}
		}},
		{group: string(linkAccount), name: "several_accounts_per_user", needs: []core.Method{createUser, getAccount, getUserByAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			gh := e.newAccount(u.ID)
			gl := e.newAccount(u.ID)
			gl.Provider = "gitlab"
			e.linkAccount(t, gh)
			e.linkAccount(t, gl)
			for _, acc := range []core.Account{gh, gl} {
				got, err := e.a.GetUserByAccount(e.ctx, acc.Key())
				if err != nil {
					t.Fatal(err)
				}
				expectUser(t, "getUserByAccount "+acc.Provider, got, u.Normalize())
			}
			if n := len(e.state(t).Accounts); n != 2 {
				t.Errorf("%d accounts stored, want 2", n)
			}
		}},
		{group: string(linkAccount), name: "keys_do_not_collide", needs: []core.Method{createUser, getAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			// Pairs that a key built by joining with ':' or ' ' would confuse.
			pairs := [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"a b", "c"}, {"a", "b c"}, {"{a}", "b"}, {"a", "{b}"}}
			for _, p := range pairs {
				acc := e.newAccount(u.ID)
				acc.Provider, acc.ProviderAccountID = p[0], p[1]
				e.linkAccount(t, acc)
			}
			for _, p := range pairs {
				got := e.getAccount(t, p[1], p[0])
				if got == nil || got.Provider != p[0] || got.ProviderAccountID != p[1] {
					t.Errorf("getAccount(%q, %q) = %s", p[1], p[0], show(got))
				}
			}
			if n := len(e.state(t).Accounts); n != len(pairs) {
				t.Errorf("%d accounts stored, want %d", n, len(pairs))
			}
		}},
		takenKeyRule(linkAccount, "duplicate_rejected", "linkAccount of a linked (provider, providerAccountId)", func(t *testing.T, e *env, userID string) func(string) error {
			acc := e.newAccount(userID)
			e.linkAccount(t, acc)
			return func(other string) error { return accountKind.under(e, acc.ProviderAccountID, other) }
		}),
		unknownUserRule(linkAccount, "unknown_user_rejected", "linkAccount to an unknown user", accountKind.insert),
		{group: string(linkAccount), name: "empty_fields_rejected", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			expectInvalid(t, e, "linkAccount", e.a.LinkAccount, spoiled(func() core.Account { return e.newAccount(u.ID) }, map[string]func(*core.Account){
				"empty userId":            func(a *core.Account) { a.UserID = "" },
				"empty provider":          func(a *core.Account) { a.Provider = "" },
				"empty providerAccountId": func(a *core.Account) { a.ProviderAccountID = "" },
				"unknown type":            func(a *core.Account) { a.Type = "password" },
			}))
		}},
		{group: string(linkAccount), name: "bad_strings_round_trip_or_error", needs: []core.Method{createUser, getAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			for name, s := range badStrings() {
				before := e.state(t)
				acc := e.newAccount(u.ID)
				acc.ProviderAccountID = e.id("bad") + s
				acc.AccessToken = ptr(s)
				if _, err := e.a.LinkAccount(e.ctx, acc); err != nil {
					e.expectUnchanged(t, before, "linkAccount with "+name+" that failed")
					continue
				}
				got := e.getAccount(t, acc.ProviderAccountID, acc.Provider)
				if got == nil || got.AccessToken == nil || *got.AccessToken != s {
					t.Errorf("linkAccount with %s accepted the value but did not store it faithfully", name)
				}
			}
		}},
	}
}

// unlinkAccountRules are the rules of the unlinkAccount method.
func unlinkAccountRules() []rule {
	return []rule{
		{group: string(unlinkAccount), name: "removes_account", needs: []core.Method{createUser, linkAccount, getAccount, getUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc, keep := e.newAccount(u.ID), e.newAccount(u.ID)
			e.linkAccount(t, acc)
			e.linkAccount(t, keep)
			got, err := e.a.UnlinkAccount(e.ctx, acc.Key())
			expectOptional(t, err, "unlinkAccount result", got, acc.Normalize(), expectAccount)
			if g := e.getAccount(t, acc.ProviderAccountID, acc.Provider); g != nil {
				t.Errorf("getAccount after unlinkAccount = %s, want nil", show(g))
			}
			if e.getUser(t, u.ID) == nil {
				t.Error("unlinkAccount removed the user")
			}
			expectEqual(t, "stored accounts", e.state(t).Accounts, []core.Account{keep.Normalize()})
		}},
		{group: string(unlinkAccount), name: "unknown_account_is_nil", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.linkAccount(t, e.newAccount(u.ID))
			expectNothing(t, e, "unlinkAccount of an unknown account", func() (*core.Account, error) {
				return e.a.UnlinkAccount(e.ctx, core.AccountKey{Provider: "github", ProviderAccountID: "nope"})
			})
		}},

		{group: string(unlinkAccount), name: "token_type_written_by_others_lowercased", needs: []core.Method{createUser}, needsRawWriter: true, run: func(t *testing.T, e *env) {
			acc := e.rawMixedCaseAccount(t)
			got, err := e.a.UnlinkAccount(e.ctx, acc.Key())
			expectOptional(t, err, "unlinkAccount of an account stored with token_type \"Bearer\"", got, acc.Normalize(), expectAccount)
			if s := e.state(t); len(s.Accounts) != 0 {
				t.Errorf("accounts left after unlinkAccount: %s", show(s.Accounts))
			}
		}},
	}
}

// getAccountRules are the rules of the getAccount method.
func getAccountRules() []rule {
	return []rule{
		{group: string(getAccount), name: "finds_account", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			e.linkAccount(t, acc)
			e.linkAccount(t, e.newAccount(u.ID))
			got := found(t, "getAccount", e.getAccount(t, acc.ProviderAccountID, acc.Provider))
			expectEqual(t, "getAccount", got, acc.Normalize())
		}},
		{group: string(getAccount), name: "not_found_is_nil", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			e.linkAccount(t, acc)
			for _, args := range [][2]string{{"nope", "github"}, {acc.ProviderAccountID, "gitlab"}} {
				if got := e.getAccount(t, args[0], args[1]); got != nil {
					t.Errorf("getAccount(%q, %q) = %s, want nil", args[0], args[1], show(got))
				}
			}
		}},
		{group: string(getAccount), name: "arguments_in_spec_order", needs: []core.Method{createUser, linkAccount}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			acc := e.newAccount(u.ID)
			acc.Provider, acc.ProviderAccountID = "alpha", "beta"
			e.linkAccount(t, acc)
			// SPEC §4: getAccount(providerAccountId, provider).
			if got := e.getAccount(t, "beta", "alpha"); got == nil || got.Provider != "alpha" {
				t.Errorf("getAccount(providerAccountId=beta, provider=alpha) = %s, want the account", show(got))
			}
			if got := e.getAccount(t, "alpha", "beta"); got != nil {
				t.Errorf("getAccount with the arguments swapped = %s, want nil", show(got))
			}
		}},
		{group: string(getAccount), name: "token_type_written_by_others_lowercased", needs: []core.Method{createUser}, needsRawWriter: true, run: func(t *testing.T, e *env) {
			acc := e.rawMixedCaseAccount(t)
			got := found(t, "getAccount of an account the raw view wrote", e.getAccount(t, acc.ProviderAccountID, acc.Provider))
			expectEqual(t, "getAccount of an account stored with token_type \"Bearer\"", got, acc.Normalize())
		}},
	}
}

// rawMixedCaseAccount stores, through the raw view, an account of a new user
// with token_type "Bearer", as Auth.js's pg and drizzle adapters store it,
// and returns it.
func (e *env) rawMixedCaseAccount(t *testing.T) core.Account {
	t.Helper()
	u := e.storedUser(t)
	acc := e.newAccount(u.ID)
	acc.TokenType = ptr("Bearer")
	if err := e.raw.(RawWriter).WriteAccount(e.ctx, acc); err != nil {
		t.Fatalf("raw WriteAccount: %v", err)
	}
	if s := e.state(t); len(s.Accounts) != 1 || s.Accounts[0].TokenType == nil || *s.Accounts[0].TokenType != "Bearer" {
		t.Fatalf("the raw view did not store the account as given: %s", show(s.Accounts))
	}
	return acc
}

// unknownUserRule is the rule, named name in m's group, that m refuses a
// record of a user that does not exist with core.ErrNotFound and stores
// nothing: insert makes the record for userID and calls m; what names the
// call in the failure message.
func unknownUserRule(m core.Method, name, what string, insert func(e *env, userID string) error) rule {
	return rule{group: string(m), name: name, needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
		e.storedUser(t)
		e.expectRefused(t, what, "the rejected "+string(m), core.ErrNotFound, func() error { return insert(e, "no-such-user") })
	}}
}

// takenKeyRule is the rule, named name in m's group, that m refuses with
// core.ErrAlreadyExists, storing nothing, a record of one user under the
// key that a record of another holds: store stores the first user's record
// and returns again, which calls m with a record of the user it is given
// under the same key; what names that call in the failure message.
func takenKeyRule(m core.Method, name, what string, store func(t *testing.T, e *env, userID string) (again func(userID string) error)) rule {
	return rule{group: string(m), name: name, needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
		u, other := e.storedUser(t), e.storedUser(t)
		again := store(t, e, u.ID)
		e.expectRefused(t, what, "the rejected "+string(m), core.ErrAlreadyExists, func() error { return again(other.ID) })
	}}
}
