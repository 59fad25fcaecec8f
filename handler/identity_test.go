package handler_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/mail"
	"github.com/authport/authport/mail/mailtest"
	"github.com/authport/authport/oauth/oauthtest"
)

// E-mail identity over real HTTP against the handler: e-mail addresses in
// one normal form whichever way they enter, an address the provider says it
// has not verified claims nothing, and no token is left behind for a link
// the mailer refused.

// signIn signs the env's browser in with the provider id, the fake
// answering with profile, and returns the callback's response.
func fakeSignIn(t *testing.T, f *oauthtest.Fake, e *env, id string, profile map[string]any) response {
	t.Helper()
	f.SetProfile(profile)
	res := e.post("/auth/signin/"+id, url.Values{"csrfToken": {e.csrf()}})
	wantStatus(t, res, http.StatusSeeOther)
	authorize := res.Header.Get("Location")
	if !strings.HasPrefix(authorize, f.URL+"/authorize") {
		t.Fatalf("redirected to %s, want the fake's authorization endpoint", authorize)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noRedirect.Get(authorize)
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Body.Close()
	return e.get(r.Header.Get("Location"))
}

// signInByEmail signs the env's browser in with an e-mail link sent to
// address through smtp, and returns the session's user.
func signInByEmail(t *testing.T, e *env, smtp *smtpServer, address string) map[string]any {
	t.Helper()
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {address}})
	wantStatus(t, res, http.StatusSeeOther)
	res = e.get(smtp.link(t))
	wantStatus(t, res, http.StatusFound)
	u, _ := e.session()["user"].(map[string]any)
	if u == nil {
		t.Fatalf("not signed in by the e-mail link for %s", address)
	}
	return u
}

// One e-mail identity: an OAuth profile's address in any spelling finds the user of
// the address: OAuthAccountNotLinked, as for the exact address, instead of
// a second user.
func TestOAuthAddressSpellingsAreOneUser(t *testing.T) {
	fake := oauthtest.StartFake(t)
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t), fake.Provider("fake")}
	}})
	signInByEmail(t, e, smtp, "victim@example.com")
	e.client = e.newClient() // the attacker's browser, not signed in
	for i, spelling := range []string{"victim@example.com", "Victim@Example.COM", " victim@example.com", "VICTIM@example.com\t"} {
		res := fakeSignIn(t, fake, e, "fake", map[string]any{"id": "attacker-" + string(rune('a'+i)), "email": spelling})
		wantLocation(t, e, res, "/auth/signin", "error", "OAuthAccountNotLinked")
	}
	if snap := e.store.Snapshot(); len(snap.Users) != 1 || len(snap.Accounts) != 1 {
		t.Errorf("%d users, %d accounts after the OAuth sign-ins: want only the e-mail user: %+v", len(snap.Users), len(snap.Accounts), snap.Users)
	}
}

// One e-mail identity: bücher.example and its punycode form, composed and decomposed
// josé, are one address each, whichever provider gives them.
func TestInternationalAddressesAreOneUser(t *testing.T) {
	fake := oauthtest.StartFake(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{fake.Provider("one"), fake.Provider("two")}
	}})
	for _, pair := range [][2]string{
		{"ada@bücher.example", "ada@xn--bcher-kva.example"},
		{"jos\u00e9@example.com", "jose\u0301@example.com"},
	} {
		e.client = e.newClient()
		res := fakeSignIn(t, fake, e, "one", map[string]any{"id": "one-" + pair[0], "email": pair[0]})
		wantStatus(t, res, http.StatusFound)
		e.client = e.newClient()
		res = fakeSignIn(t, fake, e, "two", map[string]any{"id": "two-" + pair[0], "email": pair[1]})
		wantLocation(t, e, res, "/auth/signin", "error", "OAuthAccountNotLinked")
	}
	snap := e.store.Snapshot()
	emails := map[string]bool{}
	for _, u := range snap.Users {
		emails[u.Email] = true
	}
	if len(snap.Users) != 2 || !emails["ada@xn--bcher-kva.example"] || !emails["jos\u00e9@example.com"] {
		t.Errorf("users %+v: want ada@xn--bcher-kva.example and josé (NFC)", snap.Users)
	}
}

// Nobody claims an address first: a profile whose provider says
// email_verified false creates no user for the address, so the owner's later
// e-mail sign-in gets a user the OAuth account is not part of.
func TestOAuthUnverifiedAddressClaimsNothing(t *testing.T) {
	fake := oauthtest.StartFake(t)
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t), fake.Provider("fake")}
	}})
	res := fakeSignIn(t, fake, e, "fake", map[string]any{"id": "attacker", "email": "victim@example.com", "email_verified": false})
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthCallbackError")
	if snap := e.store.Snapshot(); len(snap.Users) != 0 || len(snap.Accounts) != 0 || len(snap.Sessions) != 0 {
		t.Fatalf("the unverified profile stored %+v", snap)
	}
	// The owner signs in by e-mail: a user of their own.
	e.client = e.newClient()
	owner := signInByEmail(t, e, smtp, "victim@example.com")
	snap := e.store.Snapshot()
	if len(snap.Accounts) != 1 || snap.Accounts[0].Provider != "email" || owner["email"] != "victim@example.com" {
		t.Errorf("accounts %+v: want only the owner's e-mail account", snap.Accounts)
	}
	// Now the address has a user: the unverified profile is refused as any
	// profile of it is, and "true" (or no claim) works as before for a new
	// address.
	e.client = e.newClient()
	res = fakeSignIn(t, fake, e, "fake", map[string]any{"id": "attacker", "email": "victim@example.com", "email_verified": "false"})
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthAccountNotLinked")
	e.client = e.newClient()
	res = fakeSignIn(t, fake, e, "fake", map[string]any{"id": "someone", "email": "someone@example.com", "email_verified": true})
	wantStatus(t, res, http.StatusFound)
	if n := len(e.store.Snapshot().Users); n != 2 {
		t.Errorf("%d users, want the owner and someone", n)
	}
}

// No token for a link that is never sent: an address the mail server
// refuses leaves no stored token; one it accepts leaves exactly one.
func TestRefusedAddressLeavesNoToken(t *testing.T) {
	s := mailtest.Start(t, mailtest.Options{RejectRcpt: "nobody@example.com"})
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		p, err := mail.SMTP(mail.Config{Host: s.Host, Port: s.Port, TLS: mail.TLSNone, From: "Auth <auth@example.com>", HELO: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		return []provider.Provider{p}
	}})
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"Nobody@Example.com"}})
	wantLocation(t, e, res, "/auth/signin", "error", "EmailSignin")
	if toks := e.store.Snapshot().VerificationTokens; len(toks) != 0 {
		t.Errorf("the refused address left %d stored tokens: %+v", len(toks), toks)
	}
	// A malformed address stores nothing and sends nothing either.
	res = e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"not an address"}})
	wantLocation(t, e, res, "/auth/signin", "error", "EmailSignin")
	res = e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"ada@example.com"}})
	wantStatus(t, res, http.StatusSeeOther)
	if toks := e.store.Snapshot().VerificationTokens; len(toks) != 1 || toks[0].Identifier != "ada@example.com" {
		t.Errorf("stored tokens %+v, want one for ada@example.com", toks)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}
}

// One e-mail identity for credentials: the address the application's Authorize
// returns reaches the session in the one normal form.
func TestCredentialsAddressNormalised(t *testing.T) {
	e := newEnv(t, envOpts{strategy: "jwt", providers: func(*testing.T, string) []provider.Provider {
		c := provider.Credentials(func(_ context.Context, req provider.AuthorizeRequest) (*provider.User, error) {
			if req.Credentials["username"] == "ada" && req.Credentials["password"] == "lovelace" {
				return &provider.User{ID: "user-ada", Email: " Ada@BÜCHER.example "}, nil
			}
			return nil, nil
		})
		c.Fields = []provider.CredentialField{{Name: "username", Label: "Username", Type: "text"}, {Name: "password", Label: "Password", Type: "password"}}
		return []provider.Provider{c}
	}})
	res := e.signInCredentials("ada", "lovelace", nil)
	wantStatus(t, res, http.StatusSeeOther)
	if u, _ := e.session()["user"].(map[string]any); u == nil || u["email"] != "ada@xn--bcher-kva.example" {
		t.Errorf("session user %v, want ada@xn--bcher-kva.example", u)
	}
}
