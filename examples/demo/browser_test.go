package main

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/oauth/oauthtest"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// Selectors of the handler's default pages and of the demo's own.
const (
	emailForm   = `form[action$="/signin/email"]`
	passkeyForm = `form[data-authport-passkey]`
)

// byText finds the button or link showing text.
func byText(text string) chromedp.Search {
	return chromedp.Search(`//*[self::button or self::a][contains(normalize-space(.), "` + text + `")]`)
}

func clickText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(byText(text), chromedp.NodeVisible)
}

// signInByEmail fills the sign-in page's e-mail form from the demo's home
// page, opens the link the SMTP server received and checks that the home
// page shows the user. It returns the number of messages seen after it.
func signInByEmail(t *testing.T, b *tab, a *app, box *mailbox, origin, email string, seen int) int {
	t.Helper()
	b.run("open the home page", chromedp.Navigate(origin+"/"))
	if got := b.text(); !strings.Contains(got, "Not signed in") {
		b.fatalf("the home page of a new browser does not say Not signed in: %q", got)
	}
	b.run("go to the sign-in page", clickText("Sign in"))
	b.waitPath("/auth/signin")
	seen, landed := sendEmailForm(t, b, box, origin, email, seen)
	if landed.Path != "/" {
		t.Fatalf("signing in from the home page ended on %s, want the home page", landed)
	}
	return seen
}

// sendEmailForm fills the e-mail form of the sign-in page the tab shows,
// opens the link the SMTP server received, and checks that the home page
// shows the user. It returns the number of messages seen after it, and
// where the link led.
func sendEmailForm(t *testing.T, b *tab, box *mailbox, origin, email string, seen int) (int, *url.URL) {
	t.Helper()
	b.run("fill and send the e-mail form",
		chromedp.WaitVisible(chromedp.CSS(emailForm+` input[name="email"]`)),
		chromedp.SendKeys(chromedp.CSS(emailForm+` input[name="email"]`), email),
		chromedp.Click(chromedp.CSS(emailForm+` button`)),
	)
	b.waitPath("/auth/verify-request")
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	to, link, err := box.waitLink(ctx, seen)
	if err != nil {
		b.fatalf("%v", err)
	}
	if len(to) != 1 || to[0] != email {
		t.Errorf("the e-mail went to %v, want %s", to, email)
	}
	u, err := url.Parse(link)
	if err != nil || u.Scheme+"://"+u.Host != origin || u.Path != "/auth/callback/email" {
		t.Fatalf("the link %q does not point at %s/auth/callback/email", link, origin)
	}
	b.navigate(link)
	u = b.location()
	if u.Scheme+"://"+u.Host != origin {
		b.fatalf("the link led to %s, off the app's origin %s", u, origin)
	}
	if u.Path != "/" {
		// A callbackUrl the handler made same-origin (//evil.example/x
		// becomes the path /evil.example/x): signed in all the same.
		t.Logf("the link led to %s", u)
		b.run("open the home page", chromedp.Navigate(origin+"/"))
	}
	if got := b.text(); !strings.Contains(got, "Signed in as") || !strings.Contains(got, email) {
		b.fatalf("after the link, the home page does not show %s: %q", email, got)
	}
	return seen + 1, u
}

// sessionJSON reads /auth/session in the tab.
func sessionJSON(t *testing.T, b *tab, origin string) map[string]any {
	t.Helper()
	b.run("open /auth/session", chromedp.Navigate(origin+"/auth/session"))
	body := b.text()
	var s map[string]any
	if strings.TrimSpace(body) == "null" {
		return nil
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		b.fatalf("/auth/session is not JSON: %v: %q", err, body)
	}
	return s
}

// sessionEmail returns session.user.email of a /auth/session answer.
func sessionEmail(s map[string]any) string {
	user, _ := s["user"].(map[string]any)
	email, _ := user["email"].(string)
	return email
}

// signOut signs out through the home page's link and the sign-out page's
// button, and checks that the session is gone from the adapter.
func signOut(t *testing.T, b *tab, a *app, origin string) {
	t.Helper()
	token := b.cookie("authjs.session-token")
	if token == "" {
		b.fatalf("no authjs.session-token cookie while signed in")
	}
	if sessionOf(t, a, token) == nil {
		t.Fatal("the adapter has no session for the browser's cookie while signed in")
	}
	b.run("open the home page", chromedp.Navigate(origin+"/"))
	b.run("sign out", clickText("Sign out"))
	b.waitPath("/auth/signout")
	b.run("confirm", chromedp.Click(chromedp.CSS(`form[action$="/signout"] button`), chromedp.NodeVisible))
	b.waitPath("/")
	if got := b.text(); !strings.Contains(got, "Not signed in") {
		b.fatalf("after signing out the home page says %q", got)
	}
	if s := sessionOf(t, a, token); s != nil {
		t.Errorf("the adapter still holds the session after sign-out: %+v", s.Session)
	}
	if b.cookie("authjs.session-token") != "" {
		t.Error("the session cookie survived sign-out")
	}
	if s := sessionJSON(t, b, origin); sessionEmail(s) != "" {
		t.Errorf("/auth/session after sign-out: %v", s)
	}
}

// TestEmailSignIn: the e-mail form, a real SMTP exchange, the link, the
// session, sign-out.
func TestEmailSignIn(t *testing.T) {
	eachBackendInBrowser(t, func(t *testing.T, be backend, browser context.Context) {
		box, l, a, b := mailApp(t, browser, be)
		email := randomName("ann.") + "@example.com"
		signInByEmail(t, b, a, box, l.origin, email, 0)
		b.screenshot("email-" + be.name)
		if s := sessionJSON(t, b, l.origin); sessionEmail(s) != email || s["expires"] == nil {
			t.Errorf("/auth/session = %v, want the user %s and expires", s, email)
		}
		if u := userByEmail(t, a, email); u == nil || u.EmailVerified == nil {
			t.Errorf("the adapter's user %+v, want %s with emailVerified set", u, email)
		}
		b.run("open the protected page", chromedp.Navigate(l.origin+"/protected"))
		if got := b.text(); !strings.Contains(got, email) {
			b.fatalf("the protected page does not show %s while signed in: %q", email, got)
		}
		signOut(t, b, a, l.origin)
		// Signed out, the protected page sends the browser to sign in.
		b.run("open the protected page", chromedp.Navigate(l.origin+"/protected"))
		b.waitPath("/auth/signin")
		if cb := b.location().Query().Get("callbackUrl"); !strings.HasSuffix(cb, "/protected") {
			t.Errorf("sign-in page for /protected has callbackUrl %q", cb)
		}
	})
}

// TestOIDCSignIn: "Sign in with Dex", dex's own login form in the
// browser, back signed in.
func TestOIDCSignIn(t *testing.T) {
	eachBackendInBrowser(t, func(t *testing.T, be backend, browser context.Context) {
		l := listen(t)
		d := oauthtest.Dex(t, oauthtest.DexConfig{
			Clients: []oauthtest.DexClient{{
				ID: "demo", Secret: "demo-secret", RedirectURIs: []string{l.origin + "/auth/callback/dex"},
			}},
		})
		if d == nil {
			return
		}
		a := serve(t, l, appConfig{DB: be.db(t), OIDC: oidcConfig{Issuer: d.Issuer, ClientID: "demo", ClientSecret: "demo-secret"}})
		b := newTab(t, browser)
		b.run("open the sign-in page", chromedp.Navigate(l.origin+"/auth/signin"))
		b.run("sign in with dex", clickText("Sign in with Dex"))
		// dex's login page (after its connector choice, if it shows one).
		dexLogin(t, b, d)
		b.waitPath("/")
		if got := b.text(); !strings.Contains(got, oauthtest.DefaultDexUserEmail) {
			b.fatalf("after dex the home page does not show %s: %q", oauthtest.DefaultDexUserEmail, got)
		}
		b.screenshot("oidc-" + be.name)
		if s := sessionJSON(t, b, l.origin); sessionEmail(s) != oauthtest.DefaultDexUserEmail {
			t.Errorf("/auth/session = %v", s)
		}
		u := userByEmail(t, a, oauthtest.DefaultDexUserEmail)
		if u == nil {
			t.Fatal("no user stored for dex's user")
		}
		if s := sessionOf(t, a, b.cookie("authjs.session-token")); s == nil || s.User.ID != u.ID {
			t.Errorf("the browser's session in the adapter is %+v, want one of user %s", s, u.ID)
		}
		signOut(t, b, a, l.origin)
	})
}

// dexLogin fills dex's login form with the default user.
func dexLogin(t *testing.T, b *tab, d *oauthtest.DexServer) {
	t.Helper()
	issuer, _ := url.Parse(d.Issuer)
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	for {
		u := b.location()
		if u.Host == issuer.Host {
			break
		}
		select {
		case <-ctx.Done():
			b.fatalf("the browser did not reach dex (%s)", d.Issuer)
		case <-time.After(100 * time.Millisecond):
		}
	}
	b.run("wait for dex's page", chromedp.WaitReady(chromedp.CSS("body")))
	nodes := get(b, "find dex's form", chromedp.Nodes(chromedp.CSSAll(`input[name="login"]`), chromedp.AtLeast(0)))
	if len(nodes) == 0 { // the connector list: take the e-mail one
		b.run("choose dex's e-mail connector", chromedp.Click(chromedp.CSS(`a[href*="/auth/local"]`)))
	}
	b.run("fill dex's login form",
		chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), oauthtest.DefaultDexUserEmail),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), oauthtest.DefaultDexUserPassword),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
}

// TestPasskey: register a passkey with CDP's virtual authenticator, sign
// out, sign in with it; the stored counter increases.
func TestPasskey(t *testing.T) {
	eachBackendInBrowser(t, func(t *testing.T, be backend, browser context.Context) {
		box, l, a, b := mailApp(t, browser, be)
		authID := addVirtualAuthenticator(b)
		email := randomName("pia.") + "@example.com"
		passkeyRegisterAndSignIn(t, b, a, box, l.origin, email, be.name, authID)
	})
}

// TestCSRFAndRedirects: a POST without the CSRF token is refused, and an
// open-redirect callbackUrl lands on the app's own origin.
func TestCSRFAndRedirects(t *testing.T) {
	eachBackendInBrowser(t, func(t *testing.T, be backend, browser context.Context) {
		box, l, a, b := mailApp(t, browser, be)
		csrfAndRedirects(t, b, a, box, l.origin)
	})
}

// eachBackendInBrowser runs f as a subtest on each backend with the
// browser; without a browser it does nothing (newBrowser skips the test).
func eachBackendInBrowser(t *testing.T, f func(t *testing.T, be backend, browser context.Context)) {
	browser := newBrowser(t)
	if browser == nil {
		return
	}
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) { f(t, be, browser) })
	}
}

// mailApp serves the demo on be with a mailbox of its own for its
// e-mail, and opens a tab.
func mailApp(t *testing.T, browser context.Context, be backend) (*mailbox, listener, *app, *tab) {
	box := startMailbox(t)
	l := listen(t)
	a := serve(t, l, appConfig{DB: be.db(t), SMTP: box.URL()})
	return box, l, a, newTab(t, browser)
}

// addVirtualAuthenticator gives the tab a CDP virtual authenticator: a
// platform one (CTAP 2.1) with resident keys and user verification that
// answers by itself.
func addVirtualAuthenticator(b *tab) webauthn.AuthenticatorID {
	return get(b, "add a virtual authenticator", func(ctx context.Context, t *chromedp.Target) (webauthn.AuthenticatorID, error) {
		if _, err := cdp.Call(ctx, t, webauthn.Enable, webauthn.EnableParams{EnableUI: new(false)}); err != nil {
			return "", err
		}
		res, err := cdp.Call(ctx, t, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{
				Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
				Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true,
				HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
			},
		})
		return res.AuthenticatorID, err
	})
}
