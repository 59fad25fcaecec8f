package handler_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// E-mail sign-in end to end: the form posts, the mail module sends the link
// through a real SMTP exchange, the link signs the browser in with a
// database session, which /session extends per updateAge.
func TestEmailSignInDatabaseSessions(t *testing.T) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{maxAge: 24 * time.Hour, updateAge: ptr(time.Hour), providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t)}
	}})
	page := e.get("/auth/signin?callbackUrl=%2Fafter")
	wantStatus(t, page, 200)
	if !strings.Contains(page.body, `action="`+e.base+`/signin/email"`) || !strings.Contains(page.body, `type="email" name="email"`) {
		t.Fatalf("sign-in page has no e-mail form:\n%s", page.body)
	}
	if c := setCookie(page, "authjs.callback-url"); c == nil || c.Value != url.QueryEscape(e.srv.URL+"/after") || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("callback-url cookie %v, want %s/after percent-encoded (as Auth.js writes it), HttpOnly, Lax", c, e.srv.URL)
	}
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {" Ada@Example.com "}})
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/verify-request", "provider", "email", "type", "email")
	verify := e.get(res.Header.Get("Location"))
	wantStatus(t, verify, 200)
	if !strings.Contains(verify.body, "Check your email") {
		t.Errorf("verify-request page:\n%s", verify.body)
	}
	var to []string
	for _, m := range smtp.Messages() {
		to = append(to, m.To...)
	}
	if len(to) == 0 || to[0] != "ada@example.com" {
		t.Errorf("mail sent to %v, want the normalised address", to)
	}
	link := smtp.link(t)
	if !strings.HasPrefix(link, e.base+"/callback/email?") {
		t.Fatalf("link %s does not point at the handler's callback", link)
	}
	res = e.get(link)
	wantStatus(t, res, http.StatusFound)
	wantLocation(t, e, res, "/after")
	c := setCookie(res, "authjs.session-token")
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.MaxAge != 24*3600 {
		t.Fatalf("session cookie %v: want HttpOnly, Lax, 24 h", c)
	}
	snap := e.store.Snapshot()
	if len(snap.Sessions) != 1 || snap.Sessions[0].SessionToken != c.Value {
		t.Fatalf("stored sessions %v, want the cookie's", snap.Sessions)
	}
	s := e.session()
	if u := s["user"].(map[string]any); u["email"] != "ada@example.com" || u["name"] != nil || u["image"] != nil || len(u) != 3 {
		t.Errorf("session user %v, want email ada@example.com, name and image null", u)
	}
	if s["expires"] != snap.Sessions[0].Expires.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("expires %v, want the stored %v", s["expires"], snap.Sessions[0].Expires)
	}
	// The link works once.
	again := e.newClient()
	req, _ := http.NewRequest("GET", link, nil)
	res = e.do(again, req)
	wantLocation(t, e, res, "/auth/error", "error", "Verification")

	// Before updateAge: no extension, no cookie.
	e.clock.Add(30 * time.Minute)
	res = e.get("/auth/session")
	if setCookie(res, "authjs.session-token") != nil || !e.store.Snapshot().Sessions[0].Expires.Equal(snap.Sessions[0].Expires) {
		t.Error("session extended before updateAge")
	}
	// After updateAge: extended in the store and in the cookie.
	e.clock.Add(31 * time.Minute)
	res = e.get("/auth/session")
	want := e.clock.Now().Add(24 * time.Hour)
	if got := e.store.Snapshot().Sessions[0].Expires; !got.Equal(want) {
		t.Errorf("stored expiry %v after updateAge, want %v", got, want)
	}
	if c := setCookie(res, "authjs.session-token"); c == nil || c.MaxAge != 24*3600 || !c.Expires.Equal(want) {
		t.Errorf("refreshed cookie %v, want Max-Age 86400 and Expires %v", c, want)
	}
	if !strings.Contains(res.body, want.Format("2006-01-02T15:04:05.000Z")) {
		t.Errorf("/session %s, want expires %v", res.body, want)
	}

	// Sign out: the confirmation page, then the POST.
	page = e.get("/auth/signout")
	wantStatus(t, page, 200)
	if !strings.Contains(page.body, `action="`+e.base+`/signout" method="post"`) || !strings.Contains(page.body, `name="csrfToken" value="`+e.csrf()+`"`) {
		t.Errorf("sign-out page:\n%s", page.body)
	}
	res = e.post("/auth/signout", url.Values{"csrfToken": {e.csrf()}, "callbackUrl": {"/bye"}})
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/bye")
	if c := setCookie(res, "authjs.session-token"); c == nil || c.MaxAge >= 0 {
		t.Errorf("sign-out did not clear the cookie: %v", res.Header["Set-Cookie"])
	}
	if n := len(e.store.Snapshot().Sessions); n != 0 {
		t.Errorf("%d sessions left after sign-out", n)
	}
	if s := e.session(); s != nil {
		t.Errorf("session after sign-out: %v", s)
	}
}

func TestEmailSignInErrors(t *testing.T) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t)}
	}})
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"not an address"}})
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/signin", "error", "EmailSignin")
	if len(smtp.Messages()) != 0 {
		t.Error("mail sent to an invalid address")
	}
	for _, q := range []string{"", "?token=x&email=ada%40example.com", "?email=ada%40example.com"} {
		res = e.get("/auth/callback/email" + q)
		wantLocation(t, e, res, "/auth/error", "error", "Verification")
		if setCookie(res, "authjs.session-token") != nil {
			t.Errorf("callback %q set a session cookie", q)
		}
	}
	// An unknown provider id is the client's mistake: 404, not a 500
	// Configuration page (bad input is a 4xx, and a 5xx would page the
	// operator for anyone's typo).
	res = e.post("/auth/signin/nope", url.Values{"csrfToken": {e.csrf()}})
	wantStatus(t, res, 404)
	res = e.get("/auth/callback/nope")
	wantStatus(t, res, 404)
	_ = auth.StrategyDatabase
}

// With JWT sessions the e-mail link still creates the user and its
// account, but no session: the cookie is a JWT whose sub is the user's id.
func TestEmailSignInJWT(t *testing.T) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t)}
	}})
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"jo@example.com"}, "callbackUrl": {e.srv.URL + "/in"}})
	wantStatus(t, res, http.StatusSeeOther)
	res = e.get(smtp.link(t))
	wantLocation(t, e, res, "/in")
	c := setCookie(res, "authjs.session-token")
	if c == nil {
		t.Fatal("no session cookie")
	}
	snap := e.store.Snapshot()
	if len(snap.Users) != 1 || len(snap.Sessions) != 0 || len(snap.Accounts) != 1 || snap.Users[0].EmailVerified == nil {
		t.Fatalf("stored users %v, sessions %d, accounts %d: want one verified user, its account, no session", snap.Users, len(snap.Sessions), len(snap.Accounts))
	}
	s, err := e.h.Session(requestWith(c))
	if err != nil || s == nil || s.User.ID != snap.Users[0].ID || *s.User.Email != "jo@example.com" {
		t.Errorf("Handler.Session on the JWT: %+v, %v", s, err)
	}
}

func requestWith(cookies ...*http.Cookie) *http.Request {
	r, _ := http.NewRequest("GET", "http://x/", nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	return r
}
