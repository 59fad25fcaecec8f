package handler_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
)

// signInTOTP signs the browser in with the password and the TOTP code of
// the current step, and moves the clock to the next step.
func (b *browser) signInTOTP(key string) {
	t := b.m.t
	t.Helper()
	if res := b.signIn(); !strings.Contains(res.body, `"twoFactorRequired":true`) {
		t.Fatalf("sign-in: %d %s", res.StatusCode, res.body)
	}
	if res := b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, b.m.clock.Now())}); res.StatusCode != 200 || !b.signedIn() {
		t.Fatalf("verify: %d %s", res.StatusCode, res.body)
	}
	b.m.nextStep()
}

// TestStepUpPasswordAndCode: /reauth takes a password and a TOTP code
// together (the page's password form has an optional code field), and
// the fresh session then proves both (amr pwd, otp and mfa); a wrong
// code with the right password is refused and refreshes nothing.
func TestStepUpPasswordAndCode(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			m := newMFA(t, strategy, nil)
			key, _ := m.enrolled()
			m.nextStep()
			b := m.browser()
			b.signInTOTP(key)
			m.clock.Add(handler.DefaultFactorFreshness + time.Minute)
			m.nextStep()

			page := b.get(m.base+"/reauth", "Accept", "text/html")
			form, _, _ := strings.Cut(page.body[strings.Index(page.body, "data-authport-reauth-password"):], "</form>")
			if page.StatusCode != 200 || !strings.Contains(form, `name="password"`) || !strings.Contains(form, `name="code"`) {
				t.Fatalf("the page's password form has no code field: %d %s", page.StatusCode, form)
			}
			wrong := totpCode(t, key, m.clock.Now().Add(time.Hour))
			if res := b.postJSON("/reauth", map[string]string{"password": mfaPassword, "type": "totp", "code": wrong}); res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("the password with a wrong code: %d %s", res.StatusCode, res.body)
			}
			if res := b.get(m.srv.URL+"/sensitive", "Accept", "application/json"); res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a refused re-authentication made the session fresh: %d %s", res.StatusCode, res.body)
			}
			res := b.postForm("/reauth", map[string]string{"password": mfaPassword, "type": "totp", "code": totpCode(t, key, m.clock.Now()), "callbackUrl": "/sensitive"})
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != m.srv.URL+"/sensitive" {
				t.Fatalf("reauth with the password and the code: %d %s", res.StatusCode, res.Header.Get("Location"))
			}
			if res := b.get(m.srv.URL + "/sensitive"); res.StatusCode != 200 || !strings.Contains(res.body, `"mfa"`) || !strings.Contains(res.body, `"pwd"`) || !strings.Contains(res.body, auth.LevelMultiFactor) {
				t.Fatalf("after the password and the code: %d %s", res.StatusCode, res.body)
			}
		})
	}
}

// TestFactorChangesNeedTheSecondFactor: for a user with a second factor,
// a session made fresh with the password alone (or an e-mail code the
// user never made a factor) cannot remove, add or replace factors or
// make recovery codes (401 with RFC 9470's challenge, nothing changed);
// once the fresh authentication includes the factor (the password and
// the TOTP code) it can. A user without a factor needs only a recent
// sign-in to enrol the first.
func TestFactorChangesNeedTheSecondFactor(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, func(o *auth.SecondFactorOptions) { o.TrustDevice = 0 })
	key, _ := m.enrolled() // the first enrolment: a password sign-in is enough
	m.nextStep()
	b := m.browser()
	b.signInTOTP(key)
	m.clock.Add(handler.DefaultFactorFreshness + time.Minute)

	before := m.factors()
	var totp string
	for _, f := range before {
		if f.Type == core.FactorTOTP {
			totp = f.ID
		}
	}
	if res := b.postJSON("/reauth", map[string]string{"password": mfaPassword}); res.StatusCode != 200 {
		t.Fatalf("reauth with the password: %d %s", res.StatusCode, res.body)
	}
	if res := b.postJSON("/two-factor/remove", map[string]string{"id": totp}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("remove after a password re-authentication: %d %s", res.StatusCode, res.body)
	}
	// The password and a code mailed to the address (not one of the
	// user's factors): level mfa, but no factor of theirs.
	n := m.mailCount()
	if res := b.postJSON("/reauth/email", map[string]string{}); res.StatusCode >= 300 && res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reauth e-mail: %d %s", res.StatusCode, res.body)
	}
	if res := b.postJSON("/reauth", map[string]string{"password": mfaPassword, "type": "email", "code": m.lastCode(t, n)}); res.StatusCode != 200 {
		t.Fatalf("reauth with the password and an e-mail code: %d %s", res.StatusCode, res.body)
	}
	if res := b.get(m.srv.URL + "/sensitive"); !strings.Contains(res.body, `"email"`) || strings.Contains(res.body, `"otp"`) {
		t.Errorf("the password and an e-mail code of a user without the e-mail factor: %s, want amr email, not otp", res.body)
	}
	for _, c := range []struct{ path, id string }{
		{"/two-factor/remove", totp}, {"/two-factor/totp/start", ""}, {"/two-factor/recovery-codes", ""}, {"/two-factor/email/add", ""},
	} {
		res := b.postJSON(c.path, map[string]string{"id": c.id})
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), "insufficient_user_authentication") {
			t.Errorf("%s after a re-authentication with the password and an e-mail code: %d %s", c.path, res.StatusCode, res.body)
		}
	}
	if after := m.factors(); len(after) != len(before) {
		t.Fatalf("the factors changed from %+v to %+v", before, after)
	}
	// Revoking trusted browsers only takes trust away: a fresh session is
	// enough.
	if res := b.postJSON("/two-factor/devices/revoke", map[string]string{}); res.StatusCode != 200 {
		t.Errorf("devices/revoke after a password re-authentication: %d %s", res.StatusCode, res.body)
	}
	m.nextStep()
	if res := b.postJSON("/reauth", map[string]string{"password": mfaPassword, "type": "totp", "code": totpCode(t, key, m.clock.Now())}); res.StatusCode != 200 {
		t.Fatalf("reauth with the password and the code: %d %s", res.StatusCode, res.body)
	}
	if res := b.postJSON("/two-factor/remove", map[string]string{"id": totp}); res.StatusCode != 200 || !strings.Contains(res.body, `"removed":true`) {
		t.Fatalf("remove after the second factor: %d %s", res.StatusCode, res.body)
	}
	// An id that is no factor of the user's is bad input, not a failure.
	if res := b.postJSON("/two-factor/remove", map[string]string{"id": totp}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("removing a removed factor again: %d %s", res.StatusCode, res.body)
	}
}
