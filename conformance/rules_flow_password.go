package conformance

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
)

// passwordProvider is the id of the password provider of the password
// flow rules.
const passwordProvider = "password"

// testHasherParams are Argon2id parameters cheap enough for rules that
// hash many times; the library's choice of parameters is not what the
// rules check.
var testHasherParams = password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// mailbox keeps the e-mails the password provider sends.
type mailbox struct {
	mu   sync.Mutex
	sent []provider.VerificationRequest
}

func (m *mailbox) send(_ context.Context, r provider.VerificationRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, r)
	return nil
}

// last returns the last e-mail of the purpose to the address, failing t
// when there is none.
func (m *mailbox) last(t *testing.T, to string, purpose provider.Purpose) provider.VerificationRequest {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.sent) - 1; i >= 0; i-- {
		if r := m.sent[i]; r.Identifier == to && r.Purpose == purpose {
			return r
		}
	}
	t.Fatalf("no %q e-mail to %s among %s", purpose, to, show(m.sent))
	return provider.VerificationRequest{}
}

// count is how many e-mails were sent.
func (m *mailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// pwOptions adjust the password flow's configuration.
type pwOptions struct {
	usernames, unverified bool
	strategy              auth.Strategy
	hasher                password.Hasher
	limiter               ratelimit.Store
	events                auth.Events
}

// passwordAuth configures the library with a password provider (codes on,
// a cheap hasher) on the rule's adapter; e-mails go to the mailbox.
func (e *env) passwordAuth(t *testing.T, box *mailbox, o pwOptions) *auth.Auth {
	t.Helper()
	caps := core.Probe(e.a)
	if !caps.HasExtension(core.ExtensionSwapPasswordHash) {
		t.Skipf("adapter %s does not implement swapPasswordHash (an optional extension)", caps.Adapter())
	}
	if o.usernames && !caps.HasExtension(core.ExtensionGetUserByUsername) {
		t.Skipf("adapter %s does not implement getUserByUsername (an optional extension)", caps.Adapter())
	}
	if (o.strategy == "" || o.strategy == auth.StrategyDatabase) && !caps.HasExtension(core.ExtensionDeleteSessionsByUserID) {
		t.Skipf("adapter %s does not implement deleteSessionsByUserId, which password sign-in with database sessions needs", caps.Adapter())
	}
	if o.hasher == nil {
		h, err := password.NewArgon2id(testHasherParams)
		if err != nil {
			t.Fatal(err)
		}
		o.hasher = h
	}
	pc := provider.Password("auth@example.com", box.send)
	pc.ID, pc.Codes, pc.Usernames, pc.AllowUnverifiedSignIn, pc.Hasher = passwordProvider, true, o.usernames, o.unverified, o.hasher
	ec := provider.Email("auth@example.com", box.send)
	ec.Codes = true
	a, err := auth.New(auth.Config{
		Adapter:     e.adapter,
		Providers:   []provider.Provider{pc, ec},
		Secrets:     []string{flowSecret},
		Session:     auth.SessionOptions{Strategy: o.strategy},
		BaseURL:     "https://app.example.com/auth",
		RateLimiter: o.limiter,
		Events:      o.events,
	})
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	return a
}

// signedUp signs up address with pw through a and verifies it with the
// e-mail's link, returning the verified sign-in.
func (e *env) signedUp(t *testing.T, a *auth.Auth, box *mailbox, address, pw string) *auth.SignIn {
	t.Helper()
	if _, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: address}, Password: pw}); err != nil {
		t.Fatalf("SignUp(%s): %v", address, err)
	}
	mail := box.last(t, address, provider.PurposeVerifyEmail)
	in, err := a.Passwords().VerifyEmail(e.ctx, address, auth.Proof{Token: mail.Token, Password: pw})
	if err != nil {
		t.Fatalf("VerifyEmail(%s): %v", address, err)
	}
	return in
}

// hookedHasher is a hasher that calls after once, right after the first
// Verify of the password pw succeeds: a change made while a sign-in is
// between checking the password and creating its session.
type hookedHasher struct {
	password.Hasher
	pw    string
	after func()
	once  sync.Once
}

func (h *hookedHasher) Verify(ctx context.Context, hash, pw string) (bool, bool, error) {
	ok, rehash, err := h.Hasher.Verify(ctx, hash, pw)
	if ok && pw == h.pw && h.after != nil {
		h.once.Do(h.after)
	}
	return ok, rehash, err
}

// passwordSignIn signs in with the identifier and password.
func passwordSignIn(e *env, a *auth.Auth, identifier, pw string) (*auth.SignIn, error) {
	return a.Passwords().SignIn(e.ctx, auth.SignInRequest{Identifier: identifier, Password: pw})
}

// expectNoPassword fails t when v shows the password or a hash.
func expectNoPassword(t *testing.T, what string, v any, pw string) {
	t.Helper()
	if s := show(v); strings.Contains(s, pw) || strings.Contains(s, "$argon2id$") {
		t.Errorf("%s shows the password or its hash: %s", what, s)
	}
}

// passwordFlowRules are the rules of password sign-in through the
// library: the passwordFlow group.
func passwordFlowRules() []rule {
	const group = "passwordFlow"
	const pw, pw2 = "correct horse battery", "staple the horse again"
	wrong := &auth.Error{Code: auth.CodeCredentialsSignin}
	refused := &auth.Error{Code: auth.CodeVerification}
	return []rule{
		{group: group, name: "sign_up_verify_sign_in", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			var mu sync.Mutex
			var seen []string
			record := func(name string, v any) error {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, name+" "+show(v))
				return nil
			}
			events := auth.Events{
				SignIn:      func(_ context.Context, ev auth.SignInEvent) error { return record("signIn", ev) },
				CreateUser:  func(_ context.Context, u core.User) error { return record("createUser", u) },
				UpdateUser:  func(_ context.Context, u core.User) error { return record("updateUser", u) },
				LinkAccount: func(_ context.Context, ev auth.LinkAccountEvent) error { return record("linkAccount", ev) },
			}
			a := e.passwordAuth(t, box, pwOptions{events: events})
			res, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: " Ada@Example.com"}, Password: pw})
			if err != nil || !res.VerificationSent || res.SignIn != nil {
				t.Fatalf("SignUp = %s, %v; want a verification sent and no sign-in", show(res), err)
			}
			s := e.state(t)
			if len(s.Users) != 1 || s.Users[0].Email != "ada@example.com" || s.Users[0].EmailVerified != nil || len(s.Sessions) != 0 {
				t.Fatalf("after sign-up: %s; want one unverified user and no session", show(s))
			}
			if len(s.Accounts) != 1 || s.Accounts[0].Type != core.AccountTypeCredentials || s.Accounts[0].Provider != core.PasswordProvider ||
				s.Accounts[0].ProviderAccountID != s.Users[0].ID || s.Accounts[0].PasswordHash == nil || strings.Contains(*s.Accounts[0].PasswordHash, pw) {
				t.Fatalf("accounts = %s; want the user's password account holding a hash", show(s.Accounts))
			}
			for _, v := range s.VerificationTokens {
				if !strings.HasPrefix(v.Identifier, "authport:verify-email:") {
					t.Errorf("token identifier %q is not scoped to verification", v.Identifier)
				}
			}
			// Before verification a sign-in is refused like a wrong password.
			_, err = passwordSignIn(e, a, "ada@example.com", pw)
			expectErr(t, "sign-in before verification", err, wrong)
			mail := box.last(t, "ada@example.com", provider.PurposeVerifyEmail)
			in, err := a.Passwords().VerifyEmail(e.ctx, "ada@example.com", auth.Proof{Token: mail.Token, Password: pw})
			if err != nil || in.User.EmailVerified == nil || in.Session.SessionToken == "" {
				t.Fatalf("VerifyEmail = %s, %v; want a verified user signed in", show(in), err)
			}
			expectNoPassword(t, "the verification's sign-in", in, pw)
			_, err = a.Passwords().VerifyEmail(e.ctx, "ada@example.com", auth.Proof{Token: mail.Token, Password: pw})
			expectErr(t, "a second use of the verification link", err, refused)
			in, err = passwordSignIn(e, a, "ADA@example.com", pw)
			if err != nil || in.User.Email != "ada@example.com" || in.Session.SessionToken == "" {
				t.Fatalf("SignIn = %s, %v; want a session", show(in), err)
			}
			expectNoPassword(t, "the sign-in", in, pw)
			mu.Lock()
			defer mu.Unlock()
			var names []string
			for _, ev := range seen {
				names = append(names, strings.Fields(ev)[0])
			}
			if want := "createUser linkAccount updateUser signIn signIn"; strings.Join(names, " ") != want {
				t.Errorf("events %v; want %s (sign-up, verification, sign-in)", names, want)
			}
			expectNoPassword(t, "the events", seen, pw)
		}},
		{group: group, name: "taken_address_answers_like_a_new_one", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			owner := e.storedUser(t)
			before := e.state(t)
			taken, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: owner.Email}, Password: pw})
			if err != nil {
				t.Fatal(err)
			}
			e.expectUnchanged(t, before, "a sign-up with a taken address")
			fresh, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "fresh@example.com"}, Password: pw})
			if err != nil {
				t.Fatal(err)
			}
			if show(taken) != show(fresh) {
				t.Errorf("taken address answered %s, a new one %s; want the same", show(taken), show(fresh))
			}
			if m := box.last(t, owner.Email, provider.PurposeAccountExists); m.Token != "" || m.Code != "" {
				t.Errorf("the owner's notice carries a token: %s", show(m))
			}
		}},
		{group: group, name: "unknown_user_and_wrong_password_alike", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			e.signedUp(t, a, box, "known@example.com", pw)
			oauthOnly := e.storedUser(t)
			_, errWrong := passwordSignIn(e, a, "known@example.com", pw2)
			_, errUnknown := passwordSignIn(e, a, "nobody@example.com", pw)
			_, errNoPassword := passwordSignIn(e, a, oauthOnly.Email, pw)
			_, errNotAnAddress := passwordSignIn(e, a, "not an address", pw)
			for name, err := range map[string]error{"a wrong password": errWrong, "an unknown address": errUnknown,
				"a user without a password": errNoPassword, "a malformed identifier": errNotAnAddress} {
				expectErr(t, "sign-in with "+name, err, wrong)
				if err != nil && err.Error() != errWrong.Error() {
					t.Errorf("sign-in with %s: %q, a wrong password %q; want the same", name, err, errWrong)
				}
			}
			for _, bad := range []string{"nul\x00byte password", "\xff\xfeinvalid utf-8", strings.Repeat("x", password.MaxBytes+1)} {
				_, err := passwordSignIn(e, a, "known@example.com", bad)
				expectErr(t, "sign-in with a malformed password", err, core.ErrInvalidInput)
			}
		}},
		{group: group, name: "reset_token_single_use_under_50_concurrent_uses", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a1 := e.passwordAuth(t, box, pwOptions{})
			a2 := e.passwordAuth(t, box, pwOptions{})
			in := e.signedUp(t, a1, box, "race@example.com", pw)
			if err := a1.Passwords().RequestReset(e.ctx, "race@example.com", ""); err != nil {
				t.Fatal(err)
			}
			mail := box.last(t, "race@example.com", provider.PurposeResetPassword)
			hashBefore := *e.passwordAccount(t, in.User.ID).PasswordHash
			var ok, refusedN atomic.Int32
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for i := range 50 {
				a := a1
				if i%2 == 1 {
					a = a2
				}
				wg.Go(func() {
					err := a.Passwords().Reset(e.ctx, "race@example.com", auth.Proof{Token: mail.Token}, pw2)
					switch {
					case err == nil:
						ok.Add(1)
					case errors.Is(err, refused):
						refusedN.Add(1)
					default:
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("a concurrent reset failed otherwise than refused: %v", err)
			}
			if ok.Load() != 1 || refusedN.Load() != 49 {
				t.Fatalf("%d resets succeeded and %d were refused; want exactly 1 and 49", ok.Load(), refusedN.Load())
			}
			acc := e.passwordAccount(t, in.User.ID)
			if *acc.PasswordHash == hashBefore {
				t.Fatal("the password hash did not change")
			}
			if ss := e.state(t).Sessions; len(ss) != 0 {
				t.Errorf("sessions after the reset: %s; want none (a reset ends every session)", show(ss))
			}
			if _, err := passwordSignIn(e, a2, "race@example.com", pw2); err != nil {
				t.Errorf("sign-in with the new password: %v", err)
			}
			_, err := passwordSignIn(e, a1, "race@example.com", pw)
			expectErr(t, "sign-in with the old password", err, wrong)
		}},
		{group: group, name: "verification_token_cannot_reset", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			if _, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "scope@example.com"}, Password: pw}); err != nil {
				t.Fatal(err)
			}
			mail := box.last(t, "scope@example.com", provider.PurposeVerifyEmail)
			err := a.Passwords().Reset(e.ctx, "scope@example.com", auth.Proof{Token: mail.Token}, pw2)
			expectErr(t, "a reset with a verification token", err, refused)
			if _, err := a.Passwords().VerifyEmail(e.ctx, "scope@example.com", auth.Proof{Token: mail.Token, Password: pw}); err != nil {
				t.Errorf("the verification token after the refused reset: %v", err)
			}
		}},
		{group: group, name: "verification_link_needs_its_browser_or_the_password", run: func(t *testing.T, e *env) {
			// A mail scanner, or the owner of an address someone else
			// signed up with, holds the link but neither the sign-up's
			// browser binding nor the password: the link alone verifies
			// nothing, and stays usable.
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			if _, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "link@example.com"}, Password: pw, Binding: "signup-browser"}); err != nil {
				t.Fatal(err)
			}
			mail := box.last(t, "link@example.com", provider.PurposeVerifyEmail)
			before := e.state(t)
			for name, proof := range map[string]auth.Proof{
				"the link alone":          {Token: mail.Token},
				"another browser":         {Token: mail.Token, Binding: "other-browser"},
				"a wrong password":        {Token: mail.Token, Password: pw2},
				"the password, no token":  {Password: pw},
				"the binding, no token":   {Binding: "signup-browser"},
				"the binding, wrong link": {Token: strings.Repeat("0", 64), Binding: "signup-browser"},
			} {
				_, err := a.Passwords().VerifyEmail(e.ctx, "link@example.com", proof)
				expectErr(t, "verifying with "+name, err, refused)
			}
			e.expectUnchanged(t, before, "the refused verifications")
			in, err := a.Passwords().VerifyEmail(e.ctx, "link@example.com", auth.Proof{Token: mail.Token, Binding: "signup-browser"})
			if err != nil || in.User.EmailVerified == nil {
				t.Fatalf("the link in the sign-up's browser = %s, %v; want the user verified", show(in), err)
			}
			_, err = a.Passwords().VerifyEmail(e.ctx, "link@example.com", auth.Proof{Token: mail.Token, Password: pw})
			expectErr(t, "the link used again, with the password", err, refused)
			// Elsewhere, the password confirms the link.
			if _, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "link2@example.com"}, Password: pw, Binding: "signup-browser"}); err != nil {
				t.Fatal(err)
			}
			mail = box.last(t, "link2@example.com", provider.PurposeVerifyEmail)
			if in, err := a.Passwords().VerifyEmail(e.ctx, "link2@example.com", auth.Proof{Token: mail.Token, Password: pw}); err != nil || in.User.EmailVerified == nil {
				t.Fatalf("the link with the password = %s, %v; want the user verified", show(in), err)
			}
		}},
		{group: group, name: "email_sign_in_token_cannot_verify", run: func(t *testing.T, e *env) {
			// "authport:verify-email:x@example.com" is a valid address: an
			// e-mail sign-in link for it holds a token stored under the
			// verification's identifier, which must not verify x.
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			if _, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "x@example.com"}, Password: pw}); err != nil {
				t.Fatal(err)
			}
			req, err := a.StartEmailSignIn(e.ctx, emailProvider, "authport:verify-email:x@example.com")
			if err != nil {
				t.Skipf("the e-mail provider refuses the look-alike address: %v", err)
			}
			_, err = a.Passwords().VerifyEmail(e.ctx, "x@example.com", auth.Proof{Token: req.Token, Password: pw})
			expectErr(t, "verifying with an e-mail sign-in token", err, refused)
			if u := e.getUserByEmail(t, "x@example.com"); u == nil || u.EmailVerified != nil {
				t.Errorf("after the refused verification: %s; want x@example.com unverified", show(u))
			}
		}},
		{group: group, name: "email_sign_in_displaces_an_unverified_password_holder", run: func(t *testing.T, e *env) {
			// Pre-hijacking: someone signs up with the victim's address
			// and a password of theirs, then waits for the victim to sign
			// in by e-mail (link or code) or by OAuth with dangerous
			// linking. The victim gets a user of their own, and the
			// password no longer signs in to the address.
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			oauth := e.newAuth(t, newClock(), authOptions{})
			victim := func(address string) *auth.SignIn {
				switch address {
				case "link-victim@example.com":
					req, err := a.StartEmailSignIn(e.ctx, emailProvider, address)
					if err != nil {
						t.Fatal(err)
					}
					in, err := a.VerifyEmailSignIn(e.ctx, emailProvider, address, req.Token)
					if err != nil {
						t.Fatalf("the victim's e-mail link: %v", err)
					}
					return in
				case "code-victim@example.com":
					req, err := a.StartEmailSignInWithCode(e.ctx, emailProvider, address, "victim-browser")
					if err != nil {
						t.Fatal(err)
					}
					in, err := a.VerifyEmailSignInCode(e.ctx, emailProvider, address, req.Code, "victim-browser")
					if err != nil {
						t.Fatalf("the victim's e-mail code: %v", err)
					}
					return in
				default:
					return e.oauthSignIn(t, oauth, linkingProvider, e.id("gh"), address, nil)
				}
			}
			for _, address := range []string{"link-victim@example.com", "code-victim@example.com", "oauth-victim@example.com"} {
				if _, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: address}, Password: pw2}); err != nil {
					t.Fatal(err)
				}
				attacker := e.getUserByEmail(t, address)
				if attacker == nil {
					t.Fatalf("no user holds %s after the sign-up", address)
				}
				in := victim(address)
				if in.User.ID == attacker.ID || in.User.Email != address || !in.IsNewUser {
					t.Errorf("%s: the victim signed in to %s; want a new user of its own, not the sign-up's %s", address, show(in.User), attacker.ID)
				}
				if u := e.getUserByEmail(t, address); u == nil || u.ID != in.User.ID {
					t.Errorf("%s is held by %s; want the victim's user %s", address, show(u), in.User.ID)
				}
				if u := e.getUser(t, attacker.ID); u == nil || u.Email != auth.DisplacedEmail(attacker.ID) {
					t.Errorf("the sign-up's user after the victim's sign-in: %s; want it displaced to %s", show(u), auth.DisplacedEmail(attacker.ID))
				}
				_, err := passwordSignIn(e, a, address, pw2)
				expectErr(t, address+": the sign-up's password after the victim's sign-in", err, wrong)
			}
		}},
		{group: group, name: "sign_in_racing_a_reset_keeps_no_session", run: func(t *testing.T, e *env) {
			// A sign-in with the old password checks it, and a reset
			// swaps the hash and ends the sessions before the sign-in
			// creates its own: that session must not survive.
			box := &mailbox{}
			base, err := password.NewArgon2id(testHasherParams)
			if err != nil {
				t.Fatal(err)
			}
			h := &hookedHasher{Hasher: base, pw: pw}
			a := e.passwordAuth(t, box, pwOptions{hasher: h})
			in := e.signedUp(t, a, box, "racer@example.com", pw)
			var resetErr error
			h.after = func() {
				if resetErr = a.Passwords().RequestReset(e.ctx, "racer@example.com", ""); resetErr == nil {
					mail := box.last(t, "racer@example.com", provider.PurposeResetPassword)
					resetErr = a.Passwords().Reset(e.ctx, "racer@example.com", auth.Proof{Token: mail.Token}, pw2)
				}
			}
			_, err = passwordSignIn(e, a, "racer@example.com", pw)
			if resetErr != nil {
				t.Fatalf("the reset inside the sign-in: %v", resetErr)
			}
			expectErr(t, "the sign-in whose password was reset under it", err, wrong)
			for _, s := range e.state(t).Sessions {
				if s.UserID == in.User.ID {
					t.Errorf("a session after the reset: %s; want none", show(s))
				}
			}
			if _, err := passwordSignIn(e, a, "racer@example.com", pw2); err != nil {
				t.Errorf("sign-in with the new password: %v", err)
			}
		}},
		{group: group, name: "codes_single_use_and_bound_to_the_browser", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			e.signedUp(t, a, box, "code@example.com", pw)
			if err := a.Passwords().RequestReset(e.ctx, "code@example.com", "browser-1"); err != nil {
				t.Fatal(err)
			}
			mail := box.last(t, "code@example.com", provider.PurposeResetPassword)
			if !password.ValidCode(mail.Code) {
				t.Fatalf("reset e-mail code %q; want 6 digits", mail.Code)
			}
			for _, v := range e.state(t).VerificationTokens {
				if strings.Contains(v.Token, mail.Code) || strings.Contains(v.Identifier, mail.Code) {
					t.Errorf("the store holds the code: %s", show(v))
				}
			}
			before := e.state(t)
			for name, proof := range map[string]auth.Proof{
				"another browser":  {Code: mail.Code, Binding: "browser-2"},
				"no binding":       {Code: mail.Code},
				"the wrong shape":  {Code: "12345", Binding: "browser-1"},
				"letters":          {Code: "12a456", Binding: "browser-1"},
				"the link's token": {Code: mail.Token, Binding: "browser-1"},
			} {
				err := a.Passwords().Reset(e.ctx, "code@example.com", proof, pw2)
				expectErr(t, "a reset with a code from "+name, err, refused)
			}
			e.expectUnchanged(t, before, "the refused codes")
			if err := a.Passwords().Reset(e.ctx, "code@example.com", auth.Proof{Code: mail.Code, Binding: "browser-1"}, pw2); err != nil {
				t.Fatalf("reset with the code in its browser: %v", err)
			}
			err := a.Passwords().Reset(e.ctx, "code@example.com", auth.Proof{Code: mail.Code, Binding: "browser-1"}, pw)
			expectErr(t, "a second use of the code", err, refused)
			// The e-mail's link died with the password it was to reset.
			err = a.Passwords().Reset(e.ctx, "code@example.com", auth.Proof{Token: mail.Token}, pw)
			expectErr(t, "the link after the code reset the password", err, refused)
		}},
		{group: group, name: "code_attempt_cap_kills_the_code", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			limiter := ratelimit.NewMemory()
			a := e.passwordAuth(t, box, pwOptions{limiter: limiter})
			other := e.passwordAuth(t, box, pwOptions{limiter: limiter})
			_, err := a.StartEmailSignInWithCode(e.ctx, emailProvider, "cap@example.com", "browser")
			if err != nil {
				t.Fatal(err)
			}
			mail := box.last(t, "cap@example.com", provider.PurposeSignIn)
			if !password.ValidCode(mail.Code) {
				t.Fatalf("sign-in e-mail code %q; want 6 digits", mail.Code)
			}
			wrongCode := "000000"
			if mail.Code == wrongCode {
				wrongCode = "000001"
			}
			for i := range provider.DefaultCodeAttempts {
				inst := a
				if i%2 == 1 {
					inst = other
				}
				_, err := inst.VerifyEmailSignInCode(e.ctx, emailProvider, "cap@example.com", wrongCode, "browser")
				expectErr(t, "a wrong code", err, refused)
			}
			_, err = a.VerifyEmailSignInCode(e.ctx, emailProvider, "cap@example.com", mail.Code, "browser")
			expectErr(t, "the right code after the cap", err, refused)
			if s := e.state(t); len(s.Sessions) != 0 {
				t.Errorf("a code over the cap signed in: %s", show(s.Sessions))
			}
			// The link still works: the cap is on codes.
			if _, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "cap@example.com", mail.Token); err != nil {
				t.Errorf("the link after the code cap: %v", err)
			}
		}},
		{group: group, name: "change_ends_other_sessions", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			first := e.signedUp(t, a, box, "change@example.com", pw)
			second, err := passwordSignIn(e, a, "change@example.com", pw)
			if err != nil {
				t.Fatal(err)
			}
			err = a.Passwords().Change(e.ctx, first.User.ID, second.Session.SessionToken, pw2, pw)
			expectErr(t, "a change with a wrong current password", err, wrong)
			if err := a.Passwords().Change(e.ctx, first.User.ID, second.Session.SessionToken, pw, pw2); err != nil {
				t.Fatal(err)
			}
			ss := e.state(t).Sessions
			if len(ss) != 1 || ss[0].SessionToken != second.Session.SessionToken {
				t.Errorf("sessions after the change: %s; want only the changing one", show(ss))
			}
			if _, err := passwordSignIn(e, a, "change@example.com", pw2); err != nil {
				t.Errorf("sign-in with the new password: %v", err)
			}
			_, err = passwordSignIn(e, a, "change@example.com", pw)
			expectErr(t, "sign-in with the old password", err, wrong)
		}},
		{group: group, name: "set_password_for_another_sign_in", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			u := e.storedUser(t)
			if err := a.Passwords().Set(e.ctx, u.ID, pw); err != nil {
				t.Fatal(err)
			}
			err := a.Passwords().Set(e.ctx, u.ID, pw2)
			expectErr(t, "a second Set", err, auth.ErrHasPassword)
			if _, err := passwordSignIn(e, a, u.Email, pw); err != nil {
				t.Errorf("sign-in with the password set: %v", err)
			}
		}},
		{group: group, name: "rehash_on_sign_in_when_parameters_change", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{})
			in := e.signedUp(t, a, box, "rehash@example.com", pw)
			stronger := testHasherParams
			stronger.Iterations = 2
			h, err := password.NewArgon2id(stronger)
			if err != nil {
				t.Fatal(err)
			}
			old := *e.passwordAccount(t, in.User.ID).PasswordHash
			b := e.passwordAuth(t, box, pwOptions{hasher: h})
			if _, err := passwordSignIn(e, b, "rehash@example.com", pw); err != nil {
				t.Fatal(err)
			}
			now := *e.passwordAccount(t, in.User.ID).PasswordHash
			if now == old || !strings.Contains(now, "t=2") {
				t.Errorf("hash after sign-in with new parameters: %s; want a re-hash with t=2", now)
			}
			if _, err := passwordSignIn(e, b, "rehash@example.com", pw); err != nil {
				t.Errorf("sign-in after the re-hash: %v", err)
			}
		}},
		{group: group, name: "usernames_sign_up_and_in", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{usernames: true})
			res, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Username: "Ada.L"}, Password: pw})
			if err != nil || res.SignIn == nil || res.SignIn.User.Username != "ada.l" || res.SignIn.User.Email != "" {
				t.Fatalf("username-only SignUp = %s, %v; want a user ada.l without an address, signed in", show(res), err)
			}
			_, err = a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Username: "ADA.L"}, Password: pw})
			expectErr(t, "a sign-up with a taken username", err, auth.ErrUsernameTaken)
			if _, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Username: "grace"}, Password: pw2}); err != nil {
				t.Fatalf("a second user without an address: %v", err)
			}
			if in, err := passwordSignIn(e, a, "Ada.L", pw); err != nil || in.User.ID != res.SignIn.User.ID {
				t.Errorf("sign-in by username = %s, %v", show(in), err)
			}
			_, err = passwordSignIn(e, a, "ada.l", pw2)
			expectErr(t, "sign-in by username with a wrong password", err, wrong)
			_, err = a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Username: "a"}, Password: pw})
			expectErr(t, "a sign-up with an invalid username", err, core.ErrInvalidInput)
		}},
		{group: group, name: "jwt_sessions", run: func(t *testing.T, e *env) {
			box := &mailbox{}
			a := e.passwordAuth(t, box, pwOptions{strategy: auth.StrategyJWT})
			e.signedUp(t, a, box, "jwt@example.com", pw)
			in, err := passwordSignIn(e, a, "jwt@example.com", pw)
			if err != nil || in.Claims["sub"] != in.User.ID || in.Session.SessionToken != "" {
				t.Fatalf("SignIn with JWT sessions = %s, %v; want claims and no database session", show(in), err)
			}
			expectNoPassword(t, "the JWT claims", in.Claims, pw)
		}},
		{group: group, name: "oauth_user_without_email", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first := e.oauthSignIn(t, a, githubProvider, e.id("gh"), "", nil)
			second := e.oauthSignIn(t, a, githubProvider, e.id("gh"), "", nil)
			if first.User.Email != "" || second.User.Email != "" || first.User.ID == second.User.ID {
				t.Errorf("OAuth sign-ups without an address: %s and %s; want two users without one", show(first.User), show(second.User))
			}
			if u := e.getUserByEmail(t, ""); u != nil {
				t.Errorf("getUserByEmail(\"\") found %s", show(u))
			}
			if caps := core.Probe(e.a); caps.HasExtension(core.ExtensionListAccountsByUserID) && caps.Has(core.MethodUnlinkAccount) {
				// The e-mail provider is no way in for a user without an
				// address: the last account stays.
				_, err := a.UnlinkAccount(e.ctx, first.User.ID, first.Account.Key())
				expectErr(t, "unlinking the last account of a user without an address", err, auth.ErrLastSignInMethod)
			}
			strict := e.newAuth(t, newClock(), authOptions{requireEmail: true})
			before := e.state(t)
			_, err := strict.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, e.id("gh"), "", nil))
			if err == nil || !strings.Contains(err.Error(), "RequireEmail") {
				t.Errorf("RequireEmail: an OAuth profile without an address gave %v; want the refusal naming RequireEmail", err)
			}
			e.expectUnchanged(t, before, "the refused sign-up without an address")
		}},
	}
}

// passwordAccount returns the user's stored password account, failing t
// when there is none.
func (e *env) passwordAccount(t *testing.T, userID string) core.Account {
	t.Helper()
	for _, acc := range e.state(t).Accounts {
		if acc.UserID == userID && acc.Provider == core.PasswordProvider {
			if acc.PasswordHash == nil {
				t.Fatalf("the password account of %s has no hash", userID)
			}
			return acc
		}
	}
	t.Fatalf("user %s has no password account", userID)
	return core.Account{}
}
