package handler_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

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
