package main

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// authenticators returns the adapter's authenticators of the user with
// email.
func authenticators(t *testing.T, a *app, email string) []core.Authenticator {
	t.Helper()
	u := userByEmail(t, a, email)
	if u == nil {
		t.Fatalf("no user %s in the adapter", email)
	}
	list, err := a.store.adapter.(core.AuthenticatorsByUserLister).ListAuthenticatorsByUserID(context.Background(), u.ID)
	if err != nil {
		t.Fatalf("ListAuthenticatorsByUserID: %v", err)
	}
	return list
}

// passkeyRegisterAndSignIn signs in by e-mail, registers a passkey on the
// sign-in page (signed in, without one: Auth.js registers), signs out, and
// signs in with the passkey alone.
func passkeyRegisterAndSignIn(t *testing.T, b *tab, a *app, box *mailbox, origin, email, backendName string, authID webauthn.AuthenticatorID) {
	t.Helper()
	signInByEmail(t, b, a, box, origin, email, 0)
	b.run("open the sign-in page", chromedp.Navigate(origin+"/auth/signin"))
	b.run("register a passkey",
		chromedp.WaitVisible(chromedp.CSS(passkeyForm+` button`)),
		chromedp.Click(chromedp.CSS(passkeyForm+` button`)),
	)
	b.waitPath("/")
	registered := authenticators(t, a, email)
	if len(registered) != 1 {
		b.fatalf("after registering, the user has %d authenticators, want 1", len(registered))
	}
	creds := virtualCredentials(t, b, authID)
	if len(creds) != 1 || !creds[0].IsResidentCredential {
		t.Fatalf("the virtual authenticator holds %d credentials (%+v), want 1 resident", len(creds), creds)
	}
	signOut(t, b, a, origin)

	b.run("open the sign-in page", chromedp.Navigate(origin+"/auth/signin"))
	b.run("sign in with the passkey",
		chromedp.WaitVisible(chromedp.CSS(passkeyForm+` button`)),
		chromedp.Click(chromedp.CSS(passkeyForm+` button`)),
	)
	b.waitPath("/")
	if got := b.text(); !strings.Contains(got, "Signed in as") || !strings.Contains(got, email) {
		b.fatalf("after the passkey, the home page does not show %s: %q", email, got)
	}
	b.screenshot("passkey-" + backendName)
	after := authenticators(t, a, email)
	if len(after) != 1 || after[0].CredentialID != registered[0].CredentialID {
		t.Fatalf("authenticators after sign-in %+v, want the registered one %+v", after, registered)
	}
	t.Logf("stored counter: %d after registering, %d after signing in", registered[0].Counter, after[0].Counter)
	if after[0].Counter <= registered[0].Counter {
		t.Errorf("the stored counter went from %d to %d: it must increase", registered[0].Counter, after[0].Counter)
	}
	if creds := virtualCredentials(t, b, authID); len(creds) == 1 && int64(creds[0].SignCount) != after[0].Counter {
		t.Errorf("stored counter %d, the authenticator's %v", after[0].Counter, creds[0].SignCount)
	}
	if s := sessionJSON(t, b, origin); sessionEmail(s) != email {
		t.Errorf("/auth/session after the passkey = %v", s)
	}
}

func virtualCredentials(t *testing.T, b *tab, id webauthn.AuthenticatorID) []*webauthn.Credential {
	t.Helper()
	res := get(b, "read the virtual authenticator", func(ctx context.Context, t *chromedp.Target) (webauthn.GetCredentialsResult, error) {
		return cdp.Call(ctx, t, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: id})
	})
	return res.Credentials
}

// csrfAndRedirects: the e-mail form without its csrfToken is refused and
// sends nothing; a forged sign-out POST leaves the session; a callbackUrl
// on another origin ends on the app's own.
func csrfAndRedirects(t *testing.T, b *tab, a *app, box *mailbox, origin string) {
	t.Helper()
	b.run("open the sign-in page", chromedp.Navigate(origin+"/auth/signin"))
	b.run("remove the CSRF token and send the e-mail form",
		chromedp.WaitVisible(chromedp.CSS(emailForm+` input[name="email"]`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('`+emailForm+` input[name="csrfToken"]').forEach(e => e.remove())`),
		chromedp.SendKeys(chromedp.CSS(emailForm+` input[name="email"]`), "mallory@example.com"),
		chromedp.Click(chromedp.CSS(emailForm+` button`)),
	)
	// Auth.js answers a form POST without the token with a redirect
	// carrying error=MissingCSRF (to the sign-in page); never the
	// verify-request page.
	b.waitURL("a page with error=MissingCSRF", func(u *url.URL) bool {
		if u.Path == "/auth/verify-request" {
			b.fatalf("a POST without the CSRF token sent the link: %s", u)
		}
		return u.Query().Get("error") == "MissingCSRF"
	})
	if u := userByEmail(t, a, "mallory@example.com"); u != nil {
		t.Errorf("a refused POST created the user %+v", u)
	}

	// The open redirects: each sign-in ends on the app's origin.
	seen := 0
	for _, evil := range []string{"https://evil.example/", "//evil.example/x", `/\evil.example`} {
		email := randomName("eve.") + "@example.com"
		b.run("open the sign-in page", chromedp.Navigate(origin+"/auth/signin?callbackUrl="+url.QueryEscape(evil)))
		var landed *url.URL
		seen, landed = sendEmailForm(t, b, box, origin, email, seen)
		t.Logf("callbackUrl %s: the link led to %s", evil, landed)

		// Signed in: a sign-out POST with a forged token is refused and
		// leaves the session.
		token := b.cookie("authjs.session-token")
		type answer struct {
			Status int    `json:"status"`
			URL    string `json:"url"`
		}
		res := get(b, "POST /auth/signout with a forged token", chromedp.Evaluate[answer](`fetch('/auth/signout', {method: 'POST',
			headers: {'Content-Type': 'application/x-www-form-urlencoded'},
			body: 'csrfToken=forged&callbackUrl=%2F'}).then(r => ({status: r.status, url: r.url}))`, awaitPromise))
		if res.Status == 200 && !strings.Contains(res.URL, "error=MissingCSRF") {
			t.Errorf("a forged sign-out POST answered %d at %s, want a refusal", res.Status, res.URL)
		}
		if sessionOf(t, a, token) == nil {
			t.Errorf("a forged sign-out POST removed the session")
		}
		signOut(t, b, a, origin)
	}
	if n := box.count(); n != seen {
		t.Errorf("the SMTP server received %d messages, want %d (none for the refused POST)", n, seen)
	}
}

func awaitPromise(p *runtime.EvaluateParams) { p.AwaitPromise = new(true) }
