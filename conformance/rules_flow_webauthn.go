package conformance

import (
	"fmt"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
)

// webAuthnRules are the library flow rules of the webAuthn group.
func webAuthnRules() []rule {
	return []rule{
		{group: "webAuthn", name: "register_then_authenticate", run: func(t *testing.T, e *env) {
			a, u, au := e.registeredPasskey(t)
			if acc := e.getAccount(t, "pk-account", passkeyProvider); acc == nil || acc.UserID != u.ID || acc.Type != core.AccountTypeWebAuthn {
				t.Errorf("account = %s, want the user's webauthn account", show(acc))
			}
			in, err := signInWithPasskey(e, a, au.CredentialID, au.Counter+1)
			if err != nil {
				t.Fatal(err)
			}
			if in.User.ID != u.ID || in.Account == nil || in.Account.ProviderAccountID != au.ProviderAccountID {
				t.Errorf("signed in %s, want user %s with account %s", show(in), u.ID, au.ProviderAccountID)
			}
			if stored := e.getAuthenticator(t, au.CredentialID); stored == nil || stored.Counter != au.Counter+1 {
				t.Errorf("stored authenticator = %s, want counter %d", show(stored), au.Counter+1)
			}
		}},
		{group: "webAuthn", name: "counter_must_increase", run: func(t *testing.T, e *env) {
			a, _, au := e.registeredPasskey(t)
			before := e.state(t)
			for _, c := range []int64{au.Counter, au.Counter - 1, 0} {
				_, err := signInWithPasskey(e, a, au.CredentialID, c)
				expectErr(t, "a counter that did not increase", err, core.ErrCounterNotIncreased)
				expectCode(t, "a counter that did not increase", err, auth.CodeWebAuthnVerification)
			}
			e.expectUnchanged(t, before, "the rejected authentications")
		}},
		{group: "webAuthn", name: "zero_counters_accepted", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.storedUser(t)
			au := e.newAuthenticator(u.ID, "pk-account")
			au.Counter = 0
			e.register(t, a, au)
			if _, err := signInWithPasskey(e, a, au.CredentialID, 0); err != nil {
				t.Errorf("an authenticator without a counter (both 0): %v", err)
			}
		}},
		{group: "webAuthn", name: "account_of_another_user_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u1, u2 := e.storedUser(t), e.storedUser(t)
			e.register(t, a, e.newAuthenticator(u1.ID, "pk-account"))
			e.expectRefused(t, "registering for u2 under u1's webauthn account", "the rejected registration", &auth.Error{Code: auth.CodeOAuthAccountNotLinked}, func() error {
				return errOf(registerPasskey(e, a, e.newAuthenticator(u2.ID, "pk-account")))
			})
		}},
		{group: "webAuthn", name: "second_authenticator_reuses_the_account", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.storedUser(t)
			for range 2 {
				e.register(t, a, e.newAuthenticator(u.ID, "pk-account"))
			}
			if s := e.state(t); len(s.Accounts) != 1 || len(s.Authenticators) != 2 {
				t.Errorf("stored: %s; want one webauthn account and two authenticators", show(s))
			}
		}},
		{group: "webAuthn", name: "unknown_user_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser() // never created
			e.expectRefused(t, "registering for an unknown user", "the rejected registration", core.ErrNotFound, func() error {
				return errOf(registerPasskey(e, a, e.newAuthenticator(u.ID, "pk-account")))
			})
		}},
		{group: "webAuthn", name: "authenticators_listed_by_user", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u1, u2 := e.storedUser(t), e.storedUser(t)
			au := e.newAuthenticator(u1.ID, "pk-1")
			for _, x := range []core.Authenticator{au, e.newAuthenticator(u2.ID, "pk-2")} {
				e.register(t, a, x)
			}
			got, err := a.Authenticators(e.ctx, u1.ID)
			if err != nil || len(got) != 1 || got[0].CredentialID != au.CredentialID {
				t.Errorf("Authenticators(u1) = %s, %v; want u1's one authenticator", show(got), err)
			}
			if got, err := a.Authenticators(e.ctx, e.newUser().ID); err != nil || len(got) != 0 {
				t.Errorf("Authenticators(unknown user) = %s, %v; want none", show(got), err)
			}
		}},
		{group: "webAuthn", name: "raced_or_replayed_assertion_fails", extension: core.ExtensionAdvanceAuthenticatorCounter, run: func(t *testing.T, e *env) {
			a, _, au := e.registeredPasskey(t)
			const n = 20
			errs := make([]error, n)
			coretest.Concurrently(n, func(i int) {
				_, errs[i] = signInWithPasskey(e, a, au.CredentialID, au.Counter+1)
			})
			expectOneWon(t, errs, core.ErrCounterNotIncreased, "a losing concurrent assertion", "concurrent assertions with the same counter passed")
			for _, c := range []int64{au.Counter + 1, au.Counter} {
				_, err := signInWithPasskey(e, a, au.CredentialID, c)
				expectErr(t, fmt.Sprintf("a replayed assertion with counter %d", c), err, core.ErrCounterNotIncreased)
			}
			if stored := e.getAuthenticator(t, au.CredentialID); stored == nil || stored.Counter != au.Counter+1 {
				t.Errorf("stored authenticator = %s, want counter %d", show(stored), au.Counter+1)
			}
		}},
		{group: "webAuthn", name: "unknown_credential_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			_, err := signInWithPasskey(e, a, "no-such-credential", 1)
			expectErr(t, "unknown credential", err, core.ErrNotFound)
			expectCode(t, "unknown credential", err, auth.CodeWebAuthnVerification)
		}},
	}
}

// expectCode fails the test unless err carries the sign-in error code
// (auth.CodeOf), the one the handler shows.
func expectCode(t *testing.T, what string, err error, code auth.Code) {
	t.Helper()
	if got := auth.CodeOf(err); err != nil && got != code {
		t.Errorf("%s: error %q has code %s, want %s", what, err, got, code)
	}
}
