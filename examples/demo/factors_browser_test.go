package main

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"
)

// Selectors of the handler's second-factor pages.
const (
	totpStartForm    = `form[data-authport-totp-start]`
	totpConfirmForm  = `form[data-authport-totp-confirm]`
	factorCodeForm   = `form[data-authport-factor]`
	recoveryForm     = `form[data-authport-recovery]`
	passkeyAddForm   = `form[data-authport-passkey-add]`
	recoveryCodeList = `ul[data-authport-recovery-codes] li`
)

// testClock is the demo's clock in the second-factor test: real time
// moved forward by whole TOTP steps, so that each sign-in gets a code of
// a step of its own without waiting 30 seconds for it.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// nextStep moves the clock one TOTP period on.
func (c *testClock) nextStep() { c.offset.Add(int64(30 * time.Second)) }

// later moves the clock on past the attempt cap's window (every answer,
// right or wrong, counts against a user's five per five minutes), in
// whole TOTP periods.
func (c *testClock) later() { c.offset.Add(int64(auth.DefaultPendingMaxAge + 30*time.Second)) }

// logWriter writes the demo's log lines to the test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// code is the TOTP code of the key text at the demo's now, as an
// authenticator app computes it.
func (c *testClock) code(t *testing.T, key string) string {
	t.Helper()
	code, err := totp.GenerateCode(key, c.now())
	if err != nil {
		t.Fatalf("totp.GenerateCode: %v", err)
	}
	return code
}

// passwordSignIn fills the sign-in page's password form and waits for
// the challenge page of the pending sign-in.
func passwordSignIn(t *testing.T, b *tab, a *app, origin, email, password string) {
	t.Helper()
	b.run("open the sign-in page", chromedp.Navigate(origin+"/auth/signin?callbackUrl=%2F"))
	fill(b, "sign in with the password", passwordForm, "email", email, "password", password)
	b.waitPath("/auth/two-factor")
	if b.cookie("authjs.session-token") != "" {
		b.fatalf("a session cookie before the second factor")
	}
	if b.cookie("authport.pending") == "" {
		b.fatalf("no pending sign-in cookie on the challenge page")
	}
}

// signedInHome checks that the tab shows the home page signed in as email,
// with a session the adapter holds.
func signedInHome(t *testing.T, b *tab, a *app, email, after string) {
	t.Helper()
	b.waitPath("/")
	if got := b.text(); !strings.Contains(got, "Signed in as") || !strings.Contains(got, email) {
		b.fatalf("after %s the home page does not show %s: %q", after, email, got)
	}
	if s := sessionOf(t, a, b.cookie("authjs.session-token")); s == nil || s.User.Email != email {
		t.Fatalf("after %s the adapter holds no session of %s for the cookie: %+v", after, email, s)
	}
}

// factorTypes are the types of the user's stored factors.
func factorTypes(t *testing.T, a *app, userID string) []core.FactorType {
	t.Helper()
	list := lookUp(t, a, "ListFactorsByUserID", func(l core.FactorsByUserLister) ([]core.Factor, error) {
		return l.ListFactorsByUserID(context.Background(), userID)
	})
	var out []core.FactorType
	for _, f := range list {
		out = append(out, f.Type)
	}
	return out
}

// TestSecondFactors: sign up with a password, enrol an authenticator
// app from the security page (the key read from the page, codes computed
// with pquerna/otp as an app computes them), see the recovery codes; sign
// in with the password and the app's code; the same code in the next
// sign-in is refused and the next step's accepted; a passkey made a
// second factor (CDP's virtual authenticator, user verification) answers
// the challenge; a recovery code works once.
func TestSecondFactors(t *testing.T) {
	eachBackendInBrowser(t, func(t *testing.T, be backend, browser context.Context) {
		box := startMailbox(t)
		l := listen(t)
		clock := &testClock{}
		a := serve(t, l, appConfig{DB: be.db(t), SMTP: box.URL(), Now: clock.now, Logger: slog.New(slog.NewTextHandler(logWriter{t}, nil))})
		if !a.passwords || !a.factors {
			t.Skipf("the %s adapter keeps no password hashes or no factors in this build: the demo has them off", be.name)
		}
		b := newTab(t, browser)
		authID := addVirtualAuthenticator(b)
		email := randomName("tess.") + "@example.com"
		pass := "a long passphrase for " + email

		// Sign up; the mailed code confirms the address and signs in.
		b.run("open the sign-up page", chromedp.Navigate(l.origin+"/auth/password/signup?callbackUrl=%2F"))
		fill(b, "sign up", signUpForm, "email", email, "password", pass)
		b.waitPath("/auth/verify-request")
		_, mailed := waitMail(t, b, box, 0, email, l.origin, "/auth/password/verify")
		fill(b, "type the verification code", codeForm, "code", mailed)
		signedInHome(t, b, a, email, "sign-up")
		user := userByEmail(t, a, email)

		// A passkey first (with user verification), while the sign-in
		// takes one step.
		b.run("add a passkey", clickText("Add a passkey"))
		b.waitPath("/auth/signin/passkey")
		b.run("create the passkey", chromedp.Click(chromedp.CSS(passkeyForm+` button`), chromedp.NodeVisible))
		signedInHome(t, b, a, email, "registering a passkey")
		if n, creds := len(authenticators(t, a, email)), virtualCredentials(t, b, authID); n != 1 || len(creds) != 1 {
			t.Fatalf("the user has %d passkeys and the authenticator %d credentials, want 1 each", n, len(creds))
		}

		// Enrol the authenticator app from the security page.
		b.run("open sign-in security", clickText("Sign-in security"))
		b.waitPath("/auth/account/security")
		if got := b.text(); !strings.Contains(got, "None yet") {
			b.fatalf("the security page of a user without factors says %q", got)
		}
		fill(b, "add an authenticator app", totpStartForm, "name", "phone")
		b.waitPath("/auth/two-factor/totp/start")
		key := get(b, "read the key", chromedp.Value(chromedp.CSS(`#totp-key`)))
		qr := get(b, "read the QR code", chromedp.AttributeValue(chromedp.CSS(`img[data-authport-totp-qr]`), "src")).Value
		if len(key) < 32 || !strings.HasPrefix(qr, "data:image/png;base64,") {
			b.fatalf("the enrolment page shows key %q and QR code %.40q", key, qr)
		}
		b.screenshot("totp-enrol-" + be.name)
		fill(b, "confirm the app's code", totpConfirmForm, "code", clock.code(t, key))
		b.waitPath("/auth/two-factor/totp/confirm")
		if got := b.text(); !strings.Contains(got, "Save these recovery codes now") {
			b.fatalf("the recovery codes page says %q", got)
		}
		nodes := get(b, "read the recovery codes", chromedp.Nodes(chromedp.CSSAll(recoveryCodeList)))
		var recovery []string
		for _, n := range nodes {
			if len(n.Children) == 1 {
				recovery = append(recovery, n.Children[0].NodeValue)
			}
		}
		if len(recovery) != 10 {
			b.fatalf("%d recovery codes on the page, want 10: %q", len(recovery), recovery)
		}
		b.screenshot("recovery-codes-" + be.name)
		if got := factorTypes(t, a, user.ID); !containsAll(got, core.FactorTOTP, core.FactorRecoveryCodes) {
			t.Fatalf("stored factors %v, want totp and recovery", got)
		}

		// The passkey becomes a second factor too. The user has an
		// authenticator app now, so changing factors needs a session that
		// proved one lately: the browser is sent to re-authenticate with
		// the password and the app's code, and comes back.
		b.run("open sign-in security", chromedp.Navigate(l.origin+"/auth/account/security"))
		b.run("make the passkey a second factor", chromedp.Click(chromedp.CSS(passkeyAddForm+` button`), chromedp.NodeVisible))
		b.waitPath("/auth/reauth")
		clock.nextStep()
		fill(b, "re-authenticate with the password and the app's code", `form[data-authport-reauth-password]`, "password", pass, "code", clock.code(t, key))
		b.waitPath("/auth/account/security")
		b.run("make the passkey a second factor, fresh", chromedp.Click(chromedp.CSS(passkeyAddForm+` button`), chromedp.NodeVisible))
		b.waitURL("the security page with done=passkey", func(u *url.URL) bool {
			return u.Path == "/auth/account/security" && u.Query().Get("done") == "passkey"
		})
		if got := factorTypes(t, a, user.ID); !containsAll(got, core.FactorPasskey) {
			t.Fatalf("stored factors %v, want a passkey among them", got)
		}
		signOut(t, b, a, l.origin)

		// Password, then the app's code.
		clock.nextStep()
		passwordSignIn(t, b, a, l.origin, email, pass)
		checkThemes(t, b, "two-factor-"+be.name)
		code := clock.code(t, key)
		fill(b, "type the app's code", factorCodeForm, "code", code)
		signedInHome(t, b, a, email, "the TOTP code")
		signOut(t, b, a, l.origin)

		// The same code again: refused, no session; the next step's works.
		passwordSignIn(t, b, a, l.origin, email, pass)
		fill(b, "type the same code again", factorCodeForm, "code", code)
		b.waitURL("the challenge page with error=SecondFactor", func(u *url.URL) bool {
			return u.Path == "/auth/two-factor" && u.Query().Get("error") == "SecondFactor"
		})
		if got := b.text(); !strings.Contains(got, "not right, or was used already") {
			b.fatalf("the replayed code's refusal says %q", got)
		}
		if b.cookie("authjs.session-token") != "" {
			b.fatalf("a replayed code made a session")
		}
		clock.nextStep()
		fill(b, "type the next step's code", factorCodeForm, "code", clock.code(t, key))
		signedInHome(t, b, a, email, "the next TOTP code")
		signOut(t, b, a, l.origin)

		// Password, then the passkey.
		clock.later()
		passwordSignIn(t, b, a, l.origin, email, pass)
		b.run("use the passkey", chromedp.Click(chromedp.CSS(passkeyForm+` button`), chromedp.NodeVisible))
		signedInHome(t, b, a, email, "the passkey as second factor")
		signOut(t, b, a, l.origin)

		// A recovery code, once.
		clock.later()
		useRecovery := func(what string) {
			passwordSignIn(t, b, a, l.origin, email, pass)
			b.run("open Use a recovery code", chromedp.Click(chromedp.Search(`//summary[contains(., "Use a recovery code")]`), chromedp.NodeVisible))
			fill(b, what, recoveryForm, "code", recovery[0])
		}
		useRecovery("type a recovery code")
		signedInHome(t, b, a, email, "a recovery code")
		signOut(t, b, a, l.origin)
		useRecovery("type the same recovery code again")
		b.waitURL("the challenge page with error=SecondFactor", func(u *url.URL) bool {
			return u.Path == "/auth/two-factor" && u.Query().Get("error") == "SecondFactor"
		})
		if b.cookie("authjs.session-token") != "" {
			b.fatalf("a used recovery code made a session")
		}
	})
}

// containsAll reports whether got holds each of want.
func containsAll(got []core.FactorType, want ...core.FactorType) bool {
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}
