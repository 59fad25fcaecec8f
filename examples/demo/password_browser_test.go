package main

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/chromedp/chromedp"
)

// Selectors of the handler's password pages.
const (
	signUpForm   = `form[data-authport-signup]`
	codeForm     = `form[data-authport-code]`
	forgotForm   = `form[data-authport-forgot]`
	passwordForm = `form[data-authport-password]`
	resetForm    = `form[action$="/password/reset"]`
)

// fill types value into the field name of the form sel, then clicks the
// form's button.
func fill(b *tab, what, sel string, fields ...string) {
	b.t.Helper()
	steps := []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.CSS(sel + ` button`))}
	for i := 0; i+1 < len(fields); i += 2 {
		field := chromedp.CSS(sel + ` input[name="` + fields[i] + `"]`)
		steps = append(steps, chromedp.Clear(field), chromedp.SendKeys(field, fields[i+1]))
	}
	b.run(what, append(steps, chromedp.Click(chromedp.CSS(sel+` button`)))...)
}

// waitMail waits for the mailbox's message number n and checks that it
// went to email with a link to path and a code.
func waitMail(t *testing.T, b *tab, box *mailbox, n int, email, origin, path string) (link, code string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	to, link, code, err := box.waitMail(ctx, n)
	if err != nil {
		b.fatalf("mail %d: %v", n, err)
	}
	u, err := url.Parse(link)
	if len(to) != 1 || to[0] != email || err != nil || u.Scheme+"://"+u.Host != origin || u.Path != path || len(code) != 6 {
		t.Fatalf("mail %d went to %v with link %q and code %q; want %s, a link to %s%s and a 6-digit code", n, to, link, code, email, origin, path)
	}
	return link, code
}

// passwordHash returns the stored hash of the user's password account.
func passwordHash(t *testing.T, a *app, userID string) string {
	t.Helper()
	acc := lookUp(t, a, "GetAccount", func(g core.AccountGetter) (*core.Account, error) {
		return g.GetAccount(context.Background(), userID, core.PasswordProvider)
	})
	if acc == nil || acc.PasswordHash == nil {
		t.Fatalf("user %s has no password account", userID)
	}
	return *acc.PasswordHash
}

// TestPasswordSignUpAndReset: sign up with an e-mail address and a
// password, type the verification code the real SMTP exchange delivered,
// sign out, "forgot your password", open the mailed reset link, choose a
// new password, and sign in with it; the old password is refused, and
// the reset link, used once, is refused the second time.
func TestPasswordSignUpAndReset(t *testing.T) {
	eachBackendInBrowser(t, func(t *testing.T, be backend, browser context.Context) {
		box, l, a, b := mailApp(t, browser, be)
		if !a.passwords {
			t.Skipf("the %s adapter keeps no password hashes in this build (swapPasswordHash, deleteSessionsByUserId): the demo has password sign-up off", be.name)
		}
		email := randomName("pat.") + "@example.com"
		oldPass, newPass := "correct horse battery staple", "a new passphrase for "+email

		b.run("open the home page", chromedp.Navigate(l.origin+"/"))
		b.run("go to the sign-up page", clickText("Create an account"))
		b.waitPath("/auth/password/signup")
		checkThemes(t, b, "password-signup-"+be.name)
		fill(b, "sign up", signUpForm, "email", email, "password", oldPass)
		b.waitPath("/auth/verify-request")
		if got := b.text(); !strings.Contains(got, "We sent an e-mail to confirm your address ("+email+")") {
			b.fatalf("the verify-request page after sign-up says %q", got)
		}
		_, code := waitMail(t, b, box, 0, email, l.origin, "/auth/password/verify")
		if u := userByEmail(t, a, email); u == nil || u.EmailVerified != nil {
			t.Fatalf("after sign-up the adapter's user is %+v, want %s not yet verified", u, email)
		}
		b.screenshot("password-verify-" + be.name)
		fill(b, "type the verification code", codeForm, "code", code)
		b.waitPath("/")
		if got := b.text(); !strings.Contains(got, "Signed in as") || !strings.Contains(got, email) {
			b.fatalf("after the code the home page does not show %s: %q", email, got)
		}
		user := userByEmail(t, a, email)
		if user == nil || user.EmailVerified == nil {
			t.Fatalf("after the code the adapter's user is %+v, want %s verified", user, email)
		}
		signOut(t, b, a, l.origin)

		b.run("open the sign-in page", chromedp.Navigate(l.origin+"/auth/signin?callbackUrl=%2F"))
		b.run("follow Forgot your password?", clickText("Forgot your password?"))
		b.waitPath("/auth/password/forgot")
		fill(b, "ask for a reset", forgotForm, "email", email)
		b.waitPath("/auth/verify-request")
		link, _ := waitMail(t, b, box, 1, email, l.origin, "/auth/password/reset")
		b.navigate(link)
		b.waitPath("/auth/password/reset")
		b.screenshot("password-reset-" + be.name)
		fill(b, "choose a new password", resetForm, "password", newPass)
		b.waitPath("/auth/signin")

		fill(b, "sign in with the old password", passwordForm, "email", email, "password", oldPass)
		b.waitURL("the sign-in page with error=CredentialsSignin", func(u *url.URL) bool {
			return u.Path == "/auth/signin" && u.Query().Get("error") == "CredentialsSignin"
		})
		if got := b.text(); !strings.Contains(got, "Sign in failed") {
			b.fatalf("the old password's refusal says %q", got)
		}
		fill(b, "sign in with the new password", passwordForm, "email", email, "password", newPass)
		b.waitPath("/")
		if got := b.text(); !strings.Contains(got, "Signed in as") || !strings.Contains(got, email) {
			b.fatalf("after signing in with the new password the home page says %q", got)
		}
		if s := sessionJSON(t, b, l.origin); sessionEmail(s) != email {
			t.Errorf("/auth/session = %v, want the user %s", s, email)
		}

		// The spent link: its form comes back refused, the password stays.
		hash := passwordHash(t, a, user.ID)
		b.navigate(link)
		fill(b, "reuse the reset link", resetForm, "password", "an attacker's passphrase")
		b.waitURL("the reset page with error=Verification", func(u *url.URL) bool {
			return u.Path == "/auth/password/reset" && u.Query().Get("error") == "Verification"
		})
		if got := b.text(); !strings.Contains(got, "no longer valid") {
			b.fatalf("the reused link's page says %q", got)
		}
		b.screenshot("password-reset-reused-" + be.name)
		if passwordHash(t, a, user.ID) != hash {
			t.Error("the reused reset link changed the password")
		}
		if n := box.count(); n != 2 {
			t.Errorf("the mailbox got %d messages, want 2 (verification, reset)", n)
		}
	})
}
