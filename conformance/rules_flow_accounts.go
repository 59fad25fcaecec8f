package conformance

import (
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// accountFlowRules are the library's account management on the adapter:
// listing a user's accounts and unlinking one, never the last way to sign in.
func accountFlowRules() []rule {
	x := core.ExtensionListAccountsByUserID
	return []rule{
		{group: "accounts", name: "listed_and_unlinked_through_the_library", extension: x, needs: []core.Method{unlinkAccount}, run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{noEmail: true})
			first := e.oauthSignIn(t, a, "github", e.id("gh"), e.id("octo")+"@example.com", nil)
			second := e.oauthSignIn(t, a, "google", e.id("g"), e.id("octo")+"@example.com", first)
			list, err := a.Accounts(e.ctx, first.User.ID)
			if err != nil || len(list) != 2 {
				t.Fatalf("Accounts after two sign-ins = %s, %v; want two accounts", show(list), err)
			}
			if _, err := a.UnlinkAccount(e.ctx, first.User.ID, second.Account.Key()); err != nil {
				t.Fatalf("UnlinkAccount of one of two accounts: %v", err)
			}
			e.expectRefused(t, "UnlinkAccount of the last account without an e-mail provider", "a refused unlink", auth.ErrLastSignInMethod, func() error {
				return errOf(a.UnlinkAccount(e.ctx, first.User.ID, first.Account.Key()))
			})
			// With an e-mail provider the address is a way to sign in.
			withEmail := e.newAuth(t, newClock(), authOptions{})
			if _, err := withEmail.UnlinkAccount(e.ctx, first.User.ID, first.Account.Key()); err != nil {
				t.Errorf("UnlinkAccount of the last account with an e-mail provider: %v", err)
			}
			if list, err := a.Accounts(e.ctx, first.User.ID); err != nil || len(list) != 0 {
				t.Errorf("Accounts after unlinking both = %s, %v; want none", show(list), err)
			}
		}},
		{group: "accounts", name: "another_users_account_not_unlinked", extension: x, needs: []core.Method{unlinkAccount}, run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			mine := e.oauthSignIn(t, a, "github", e.id("gh"), e.id("me")+"@example.com", nil)
			theirs := e.oauthSignIn(t, a, "github", e.id("gh"), e.id("them")+"@example.com", nil)
			e.expectRefused(t, "UnlinkAccount of another user's account", "unlinking another user's account", core.ErrNotFound, func() error {
				return errOf(a.UnlinkAccount(e.ctx, mine.User.ID, theirs.Account.Key()))
			})
		}},
		{group: "accounts", name: "user_updated_through_the_library", needs: []core.Method{getUser}, run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			in := e.oauthSignIn(t, a, "github", e.id("gh"), e.id("ada")+"@example.com", nil)
			role := core.UserField[string]{Name: "role"}
			up := core.UserUpdate{ID: in.User.ID, Email: core.Set("  " + strings.ToUpper(in.User.Email) + " ")}
			if err := role.Set(&up, "admin"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.UpdateUser(e.ctx, up); err != nil {
				t.Fatal(err)
			}
			got, err := a.User(e.ctx, in.User.ID)
			if err != nil || got == nil {
				t.Fatalf("User after UpdateUser = %s, %v", show(got), err)
			}
			if r, ok, _ := role.Get(got); r != "admin" || !ok || got.Email != in.User.Email {
				t.Errorf("user after UpdateUser = %s; want role admin and the address normalised back to %q", show(got), in.User.Email)
			}
		}},
	}
}
