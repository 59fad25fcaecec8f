package conformance

import (
	"errors"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// oauthSignInRules are the library flow rules of the oauthSignIn group.
func oauthSignInRules() []rule {
	return []rule{
		{group: "oauthSignIn", name: "new_user_and_account", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			in := e.oauthSignIn(t, a, githubProvider, "gh-1", "octo@example.com", nil)
			if !in.IsNewUser || in.User.Email != "octo@example.com" || in.User.EmailVerified != nil || in.User.Name == nil {
				t.Errorf("sign-in = %s, want a new user with emailVerified null", show(in))
			}
			s := e.state(t)
			if len(s.Users) != 1 || len(s.Sessions) != 1 || len(s.Accounts) != 1 {
				t.Fatalf("stored: %s; want one user, session and account", show(s))
			}
			acc := s.Accounts[0]
			wantExpiresAt := c.Now().Unix() + 3600
			if acc.UserID != in.User.ID || acc.Type != core.AccountTypeOAuth || acc.Provider != githubProvider || acc.ProviderAccountID != "gh-1" ||
				acc.AccessToken == nil || *acc.AccessToken != "gho_access" || acc.TokenType == nil || *acc.TokenType != "bearer" ||
				acc.ExpiresAt == nil || *acc.ExpiresAt < wantExpiresAt-1 || *acc.ExpiresAt > wantExpiresAt {
				t.Errorf("account = %s, want the default subset with token_type lowercased and expires_at = now+expires_in (%d)", show(acc), wantExpiresAt)
			}
		}},
		{group: "oauthSignIn", name: "linked_account_signs_in_its_user", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first := e.oauthSignIn(t, a, githubProvider, "gh-1", "octo@example.com", nil)
			again := e.oauthSignIn(t, a, githubProvider, "gh-1", "changed@example.com", nil)
			if again.IsNewUser || again.User.ID != first.User.ID || again.Session.SessionToken == first.Session.SessionToken {
				t.Errorf("second sign-in = %s, want the same user in a new session", show(again))
			}
			if s := e.state(t); len(s.Users) != 1 || len(s.Accounts) != 1 || len(s.Sessions) != 2 {
				t.Errorf("stored: %s; want one user, one account, two sessions", show(s))
			}
		}},
		{group: "oauthSignIn", name: "linked_account_of_signed_in_user_changes_nothing", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first := e.oauthSignIn(t, a, githubProvider, "gh-1", "octo@example.com", nil)
			before := e.state(t)
			again := e.oauthSignIn(t, a, githubProvider, "gh-1", "octo@example.com", first)
			if again.User.ID != first.User.ID || !again.KeepSession {
				t.Errorf("sign-in while signed in = %s, want the current user and session", show(again))
			}
			e.expectUnchanged(t, before, "signing in again with the linked account")
		}},
		{group: "oauthSignIn", name: "account_of_another_user_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			e.oauthSignIn(t, a, githubProvider, "gh-a", "a@example.com", nil)
			b := e.oauthSignIn(t, a, githubProvider, "gh-b", "b@example.com", nil)
			e.expectRefused(t, "signed in as b, signing in with a's account", "the rejected sign-in", &auth.Error{Code: auth.CodeOAuthAccountNotLinked}, func() error {
				return errOf(a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-a", "a@example.com", b)))
			})
		}},
		{group: "oauthSignIn", name: "new_account_linked_to_signed_in_user", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first := e.oauthSignIn(t, a, githubProvider, "gh-1", "octo@example.com", nil)
			in := e.oauthSignIn(t, a, googleProvider, "google-sub", "other@example.com", first)
			if in.User.ID != first.User.ID || in.IsNewUser {
				t.Errorf("sign-in = %s, want the signed-in user", show(in))
			}
			got := e.getAccount(t, "google-sub", googleProvider)
			if got == nil || got.UserID != first.User.ID || got.Type != core.AccountTypeOIDC {
				t.Errorf("the new account = %s, want an oidc account of the signed-in user", show(got))
			}
			if n := len(e.state(t).Users); n != 1 {
				t.Errorf("%d users, want 1", n)
			}
		}},
		{group: "oauthSignIn", name: "email_of_existing_user_not_linked_by_default", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.storedUser(t)
			e.expectRefused(t, "a new account whose e-mail belongs to a user", "the rejected sign-in", &auth.Error{Code: auth.CodeOAuthAccountNotLinked}, func() error {
				return errOf(a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", u.Email, nil)))
			})
		}},
		{group: "oauthSignIn", name: "email_of_existing_user_linked_when_allowed", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.storedUser(t)
			in := e.oauthSignIn(t, a, linkingProvider, "gh-1", u.Email, nil)
			if in.User.ID != u.ID || in.IsNewUser {
				t.Errorf("sign-in = %s, want the existing user", show(in))
			}
			if got := e.getAccount(t, "gh-1", linkingProvider); got == nil || got.UserID != u.ID {
				t.Errorf("account = %s, want it linked to the existing user", show(got))
			}
		}},
		{group: "oauthSignIn", name: "oidc_without_id_token_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			cb := oauthCallback(googleProvider, "google-sub", "g@example.com", nil)
			cb.Tokens.IDToken = ""
			e.expectRefused(t, "an OIDC callback without an id_token", "the rejected sign-in", provider.ErrMissingIDToken, func() error {
				return errOf(a.SignInWithOAuth(e.ctx, cb))
			})
		}},
		{group: "oauthSignIn", name: "account_callback_subset_stored", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			e.oauthSignIn(t, a, subsetProvider, "gh-1", "octo@example.com", nil)
			got := e.getAccount(t, "gh-1", subsetProvider)
			want := core.Account{UserID: "", Provider: subsetProvider, Type: core.AccountTypeOAuth, ProviderAccountID: "gh-1", AccessToken: ptr("gho_access")}
			if got != nil {
				want.UserID = got.UserID
			}
			if got == nil {
				t.Fatal("no account stored")
			}
			expectEqual(t, "the stored account (the callback keeps access_token only)", *got, want)
		}},

		{group: "oauthSignIn", name: "new_account_while_signed_in_keeps_the_session", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first := e.oauthSignIn(t, a, githubProvider, "gh-1", "octo@example.com", nil)
			in := e.oauthSignIn(t, a, googleProvider, "google-sub", "other@example.com", first)
			if !in.KeepSession || in.Session.SessionToken != "" {
				t.Errorf("session %s, want the current session kept (KeepSession, no new session)", show(in.Session))
			}
			if s := e.state(t); len(s.Sessions) != 1 || len(s.Accounts) != 2 || len(s.Users) != 1 {
				t.Errorf("stored: %s; want one user with two accounts and the one session", show(s))
			}
		}},

		{group: "oauthSignIn", name: "failed_link_leaves_no_user", needs: []core.Method{deleteUser}, run: func(t *testing.T, e *env) {
			full, ok := e.adapter.(core.Adapter)
			if !ok {
				t.Skipf("adapter %T does not implement every method (core.Adapter), which the failing wrapper embeds", e.adapter)
			}
			injected := errors.New("injected linkAccount failure")
			a := e.newAuth(t, newClock(), authOptions{adapter: failingLinker{Adapter: full, err: injected}})
			before := e.state(t)
			in, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-4242", "octo@example.com", nil))
			if !errors.Is(err, injected) {
				t.Fatalf("sign-in whose link fails = %s, %v; want the link's error", show(in), err)
			}
			e.expectUnchanged(t, before, "a sign-in whose linkAccount failed")
			// The address is free: signing in again, with a working link,
			// creates the user and the account.
			in, err = e.newAuth(t, newClock(), authOptions{}).SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-4242", "octo@example.com", nil))
			if err != nil || !in.IsNewUser {
				t.Fatalf("sign-in after the failed one = %s, %v; want a new user", show(in), err)
			}
			if s := e.state(t); len(s.Users) != 1 || len(s.Accounts) != 1 || s.Accounts[0].UserID != in.User.ID {
				t.Errorf("stored: %s; want the one user with its account", show(s))
			}
		}},
	}
}
