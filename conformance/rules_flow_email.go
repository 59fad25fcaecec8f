package conformance

import (
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// emailSignInRules are the library flow rules of the emailSignIn group.
func emailSignInRules() []rule {
	return []rule{
		{group: "emailSignIn", name: "new_user_created_verified", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			req := e.startEmail(t, a, "  New.User@Example.COM ")
			if req.Identifier != "new.user@example.com" || !hex64.MatchString(req.Token) {
				t.Errorf("request = %s, want the normalised address and a 256-bit token", show(req))
			}
			stored := e.state(t).VerificationTokens
			if len(stored) != 1 || stored[0].Token != auth.HashToken(req.Token, flowSecret) || stored[0].Token == req.Token {
				t.Fatalf("stored tokens = %s, want only the hash of the link's token", show(stored))
			}
			if want := core.NormalizeTime(c.Now().Add(provider.DefaultEmailMaxAge)); !stored[0].Expires.Equal(want) {
				t.Errorf("token expires %v, want %v (the provider's maxAge)", stored[0].Expires, want)
			}
			c.Add(time.Minute)
			in, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "new.user@example.com", req.Token)
			if err != nil {
				t.Fatal(err)
			}
			if !in.IsNewUser || in.User.Email != "new.user@example.com" || in.User.EmailVerified == nil || !in.User.EmailVerified.Equal(core.NormalizeTime(c.Now())) {
				t.Errorf("sign-in = %s, want a new user verified now", show(in))
			}
			s := e.state(t)
			if len(s.Users) != 1 || len(s.Sessions) != 1 || s.Sessions[0].UserID != in.User.ID || len(s.VerificationTokens) != 0 {
				t.Errorf("stored after sign-in: %s; want one user, one session, no token", show(s))
			}
			if len(s.Accounts) != 1 || s.Accounts[0].Type != core.AccountTypeEmail || s.Accounts[0].ProviderAccountID != "new.user@example.com" {
				t.Errorf("accounts = %s, want the user's e-mail account", show(s.Accounts))
			}
		}},
		{group: "emailSignIn", name: "email_verified_set_on_first_sign_in_only", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			u := e.newUser()
			u.EmailVerified = nil
			e.createUser(t, u)
			signIn := func() *auth.SignIn {
				req := e.startEmail(t, a, u.Email)
				in, err := a.VerifyEmailSignIn(e.ctx, emailProvider, u.Email, req.Token)
				if err != nil {
					t.Fatal(err)
				}
				return in
			}
			first := signIn()
			verified := core.NormalizeTime(c.Now())
			if first.IsNewUser || first.User.ID != u.ID || first.User.EmailVerified == nil || !first.User.EmailVerified.Equal(verified) {
				t.Errorf("first sign-in = %s, want the existing user verified now", show(first))
			}
			c.Add(time.Hour)
			signIn()
			got := e.getUser(t, u.ID)
			if got == nil || got.EmailVerified == nil || !got.EmailVerified.Equal(verified) {
				t.Errorf("after a second sign-in the user is %s, want emailVerified still %v", show(got), verified)
			}
			if n := len(e.state(t).Accounts); n != 1 {
				t.Errorf("%d accounts after two sign-ins, want the one e-mail account", n)
			}
		}},
		{group: "emailSignIn", name: "token_works_once", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			req := e.startEmail(t, a, "once@example.com")
			if _, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "once@example.com", req.Token); err != nil {
				t.Fatal(err)
			}
			e.expectRefused(t, "a second use of the link", "the rejected second use", &auth.Error{Code: auth.CodeVerification}, func() error {
				return errOf(a.VerifyEmailSignIn(e.ctx, emailProvider, "once@example.com", req.Token))
			})
		}},
		{group: "emailSignIn", name: "wrong_token_or_address_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			req := e.startEmail(t, a, "ada@example.com")
			before := e.state(t)
			for name, try := range map[string][2]string{
				"a wrong token":       {"ada@example.com", flipLast(req.Token)},
				"the hash as token":   {"ada@example.com", auth.HashToken(req.Token, flowSecret)},
				"another address":     {"eve@example.com", req.Token},
				"an empty token":      {"ada@example.com", ""},
				"a malformed address": {"not an address", req.Token},
			} {
				_, err := a.VerifyEmailSignIn(e.ctx, emailProvider, try[0], try[1])
				expectErr(t, "sign-in with "+name, err, &auth.Error{Code: auth.CodeVerification})
			}
			e.expectUnchanged(t, before, "the rejected sign-ins")
			if _, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "ada@example.com", req.Token); err != nil {
				t.Errorf("the right token after the wrong ones: %v", err)
			}
		}},
		{group: "emailSignIn", name: "expired_token_rejected", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			req := e.startEmail(t, a, "late@example.com")
			c.Add(provider.DefaultEmailMaxAge + time.Second)
			_, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "late@example.com", req.Token)
			expectErr(t, "sign-in with an expired link", err, &auth.Error{Code: auth.CodeVerification})
			s := e.state(t)
			if len(s.Users) != 0 || len(s.Sessions) != 0 {
				t.Errorf("an expired link signed someone in: %s", show(s))
			}
		}},
		{group: "emailSignIn", name: "rotated_secret_still_verifies", run: func(t *testing.T, e *env) {
			c := newClock()
			old := e.newAuth(t, c, authOptions{secrets: []string{"conformance-old-secret-0123456789abcdef"}})
			req := e.startEmail(t, old, "rotate@example.com")
			rotated := e.newAuth(t, c, authOptions{secrets: []string{"conformance-new-secret-0123456789abcdef", "conformance-old-secret-0123456789abcdef"}})
			if _, err := rotated.VerifyEmailSignIn(e.ctx, emailProvider, "rotate@example.com", req.Token); err != nil {
				t.Errorf("a link made with the old secret, after rotation: %v", err)
			}
			next := e.startEmail(t, rotated, "rotate@example.com")
			if s := e.state(t).VerificationTokens; len(s) != 1 || s[0].Token != auth.HashToken(next.Token, "conformance-new-secret-0123456789abcdef") {
				t.Errorf("new tokens are not hashed with the newest secret: %s", show(s))
			}
		}},

		{group: "emailSignIn", name: "address_normalised_when_verifying", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			req := e.startEmail(t, a, "ada@example.com")
			in, err := a.VerifyEmailSignIn(e.ctx, emailProvider, " ADA@Example.com ", req.Token)
			if err != nil {
				t.Fatalf("the link's token with the address in other case and spaces: %v", err)
			}
			if in.User.Email != "ada@example.com" {
				t.Errorf("signed in %s, want ada@example.com", show(in.User))
			}
		}},
	}
}

// startEmail starts an e-mail sign-in of the address through a, failing t
// on an error, and returns the request, whose token is the link's.
func (e *env) startEmail(t *testing.T, a *auth.Auth, address string) *provider.VerificationRequest {
	t.Helper()
	req, err := a.StartEmailSignIn(e.ctx, emailProvider, address)
	if err != nil {
		t.Fatalf("startEmailSignIn(%q): %v", address, err)
	}
	return req
}
