package handlersec

// Tests of the fixes the security review of second factors asked for,
// beyond the review's own attacks (factors_review_test.go), over the
// fixture of factors_core_test.go.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// withEmailSignIn adds an e-mail sign-in provider whose mails are kept in
// the fixture's list.
func withEmailSignIn(f **factorFixture) func(*auth.Config) {
	return func(c *auth.Config) {
		c.Providers = append(c.Providers, provider.Email("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
			(*f).mu.Lock()
			defer (*f).mu.Unlock()
			(*f).mails = append((*f).mails, r)
			return nil
		}))
	}
}

// emailSignIn signs in with an e-mail link.
func (f *factorFixture) emailSignIn(email string) (*auth.SignIn, error) {
	f.t.Helper()
	req, err := f.a.StartEmailSignIn(fctx, "email", email)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.a.VerifyEmailSignIn(fctx, "email", email, req.Token)
}

// verifiedUser signs up a password user and verifies their address.
func (f *factorFixture) verifiedUser(email string) string {
	f.t.Helper()
	uid := f.signUp(email)
	if _, err := f.store.UpdateUser(fctx, core.UserUpdate{ID: uid, EmailVerified: core.Set(ptr(f.clock.Now()))}); err != nil {
		f.t.Fatal(err)
	}
	return uid
}

// TestFactorsEmailSignInRequiredEnrolsTOTP: with Required, a user without
// a factor who signs in by e-mail is not offered an e-mail code (the
// mailbox proven twice): they enrol TOTP; e-mail codes are neither sent
// nor accepted for that pending sign-in. A password sign-in of the same
// user is offered the e-mail code.
func TestFactorsEmailSignInRequiredEnrolsTOTP(t *testing.T) {
	var f *factorFixture
	f = newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Required: true, EmailCode: true, Attempts: 20}, withEmailSignIn(&f))
	f.verifiedUser("ada@example.com")
	si, err := f.emailSignIn("ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	p := si.Pending
	if p == nil || !p.Enroll || slices.Contains(p.Factors, core.FactorEmail) {
		t.Fatalf("e-mail sign-in without a factor: pending %+v, want Enroll without e-mail codes", p)
	}
	f.mu.Lock()
	n := len(f.mails)
	f.mu.Unlock()
	if err := f.a.Factors().SendEmailCode(fctx, p.Token); !isSecondFactor(err) {
		t.Errorf("SendEmailCode for an e-mail sign-in: %v, want a SecondFactor refusal", err)
	}
	f.mu.Lock()
	if len(f.mails) != n {
		t.Errorf("an e-mail code was sent for an e-mail sign-in: %+v", f.mails[n:])
	}
	f.mu.Unlock()
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorEmail, Code: "12345678"}); !isSecondFactor(err) {
		t.Errorf("an e-mail answer to an e-mail sign-in: %v, want a SecondFactor refusal", err)
	}
	e, err := f.a.Factors().StartTOTP(fctx, "", p.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	done, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Enrollment: e.Token, Code: f.code(e.Key.Secret)})
	if err != nil || done.Session.SessionToken == "" {
		t.Fatalf("enrolling TOTP to finish the e-mail sign-in: %v", err)
	}

	// A password first factor may answer with an e-mail code.
	f.verifiedUser("grace@example.com")
	if p := f.signIn(fctx, f.a, "grace@example.com").Pending; p == nil || !slices.Contains(p.Factors, core.FactorEmail) {
		t.Errorf("password sign-in without a factor: pending %+v, want e-mail codes offered", p)
	}
}

// TestFactorsEmailOnlyFactorAfterEmailSignIn: a user whose only second
// factor is the e-mail code cannot sign in by e-mail (refused with
// SecondFactor, no session, no pending sign-in); their password sign-in is
// offered the e-mail code.
func TestFactorsEmailOnlyFactorAfterEmailSignIn(t *testing.T) {
	var f *factorFixture
	f = newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{EmailCode: true, Attempts: 20}, withEmailSignIn(&f))
	uid := f.verifiedUser("ada@example.com")
	if _, err := f.a.Factors().AddEmail(fctx, uid); err != nil {
		t.Fatal(err)
	}
	si, err := f.emailSignIn("ada@example.com")
	if !isSecondFactor(err) {
		t.Errorf("e-mail sign-in of a user whose only factor is the e-mail code: %+v, %v; want a SecondFactor refusal", si, err)
	}
	if p := f.signIn(fctx, f.a, "ada@example.com").Pending; p == nil || !slices.Equal(p.Factors, []core.FactorType{core.FactorEmail, core.FactorRecoveryCodes}) && !slices.Equal(p.Factors, []core.FactorType{core.FactorEmail}) {
		t.Errorf("password sign-in: pending %+v, want the e-mail code offered", p)
	}
}

// TestFactorsPendingEnrolmentAfterTheUserEnrolled: a pending sign-in made
// to enrol (the user had no factor) no longer enrols once the user has
// one (enrolled from another browser meanwhile).
func TestFactorsPendingEnrolmentAfterTheUserEnrolled(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Required: true, Attempts: 20})
	uid := f.signUp("ada@example.com")
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	if p == nil || !p.Enroll {
		t.Fatalf("pending %+v, want Enroll", p)
	}
	e, err := f.a.Factors().StartTOTP(fctx, "", p.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	f.enrol(uid)
	f.clock.Add(30 * time.Second)
	if _, err := f.a.Factors().StartTOTP(fctx, "", p.Token, ""); !isSecondFactor(err) {
		t.Errorf("StartTOTP through a pending sign-in once the user has a factor: %v, want a SecondFactor refusal", err)
	}
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Enrollment: e.Token, Code: f.code(e.Key.Secret)}); !isSecondFactor(err) {
		t.Errorf("confirming an enrolment through a pending sign-in once the user has a factor: %v, want a SecondFactor refusal", err)
	}
	if n := len(factorTypesOf(t, f.a, uid)); n != 2 {
		t.Errorf("the user has %d factors, want 2 (TOTP and recovery codes)", n)
	}
}
