package handler_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// pagesMailbox keeps the mails of the password and e-mail providers.
type pagesMailbox struct {
	mu    sync.Mutex
	mails []provider.VerificationRequest
}

func (m *pagesMailbox) send(_ context.Context, r provider.VerificationRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mails = append(m.mails, r)
	return nil
}

// last returns the last mail to email of the purpose.
func (m *pagesMailbox) last(t *testing.T, email string, purpose provider.Purpose) provider.VerificationRequest {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.mails) - 1; i >= 0; i-- {
		if r := m.mails[i]; r.Identifier == email && r.Purpose == purpose {
			return r
		}
	}
	t.Fatalf("no %q mail to %s among %d", purpose, email, len(m.mails))
	return provider.VerificationRequest{}
}

// count returns how many mails were sent.
func (m *pagesMailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mails)
}

// pagesEnv is a handler with a password provider (codes on; usernames
// when asked) and an e-mail provider with codes, a cheap hasher, and no
// rate limits.
func pagesEnv(t *testing.T, usernames bool) (*env, *pagesMailbox) {
	t.Helper()
	box := &pagesMailbox{}
	hasher, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{
		providers: func(*testing.T, string) []provider.Provider {
			pc := provider.Password("auth@example.com", box.send)
			pc.Codes, pc.Usernames, pc.Hasher = true, usernames, hasher
			ec := provider.Email("auth@example.com", box.send)
			ec.Codes = true
			return []provider.Provider{ec, pc}
		},
		config: func(c *handler.Config) { c.RateLimit.Disabled = true },
	})
	return e, box
}

var (
	formRE   = regexp.MustCompile(`(?s)<form\b([^>]*)>(.*?)</form>`)
	attrRE   = regexp.MustCompile(`\b(action|method)="([^"]*)"`)
	inputRE  = regexp.MustCompile(`<input\b[^>]*>`)
	nameRE   = regexp.MustCompile(`\bname="([^"]*)"`)
	valueRE  = regexp.MustCompile(`\bvalue="([^"]*)"`)
	typeRE   = regexp.MustCompile(`\btype="([^"]*)"`)
	hrefRE   = regexp.MustCompile(`\bhref="([^"]*)"`)
	anchorRE = regexp.MustCompile(`<a\b[^>]*>`)
)

// pageForm is one form of a page: where it posts, and its fields with
// the values the page gave them.
type pageForm struct {
	action string
	fields url.Values
	types  map[string]string
}

// formsOf returns the page's forms.
func formsOf(body string) []pageForm {
	var out []pageForm
	for _, m := range formRE.FindAllStringSubmatch(body, -1) {
		f := pageForm{fields: url.Values{}, types: map[string]string{}}
		for _, a := range attrRE.FindAllStringSubmatch(m[1], -1) {
			if a[1] == "action" {
				f.action = html.UnescapeString(a[2])
			}
		}
		for _, in := range inputRE.FindAllString(m[2], -1) {
			n := nameRE.FindStringSubmatch(in)
			if n == nil {
				continue
			}
			v := ""
			if m := valueRE.FindStringSubmatch(in); m != nil {
				v = html.UnescapeString(m[1])
			}
			f.fields.Set(n[1], v)
			if m := typeRE.FindStringSubmatch(in); m != nil {
				f.types[n[1]] = m[1]
			}
		}
		out = append(out, f)
	}
	return out
}

// formTo returns the page's form posting to action, failing t without
// one; every form must carry its CSRF token.
func formTo(t *testing.T, page response, action string) pageForm {
	t.Helper()
	for _, f := range formsOf(page.body) {
		if f.action == action {
			if f.fields.Get("csrfToken") == "" {
				t.Fatalf("the form posting to %s has no CSRF token:\n%s", action, page.body)
			}
			return f
		}
	}
	t.Fatalf("%s: no form posting to %s:\n%s", page.Request.URL, action, page.body)
	return pageForm{}
}

// submit posts the form with its own fields and the ones given.
func (e *env) submit(f pageForm, fields ...string) response {
	e.t.Helper()
	v := url.Values{}
	for k, vs := range f.fields {
		v[k] = vs
	}
	for i := 0; i+1 < len(fields); i += 2 {
		v.Set(fields[i], fields[i+1])
	}
	return e.post(f.action, v)
}

// follow opens a redirect's target.
func (e *env) follow(res response) response {
	e.t.Helper()
	loc := res.Header.Get("Location")
	if loc == "" {
		e.t.Fatalf("%s %s: %d without Location; body %s", res.Request.Method, res.Request.URL, res.StatusCode, res.body)
	}
	return e.get(loc)
}

// wantAlert checks that the page shows the message in its alert.
func wantAlert(t *testing.T, page response, message string) {
	t.Helper()
	if !strings.Contains(page.body, `<div class="error" role="alert"><p>`+html.EscapeString(message)) {
		t.Errorf("%s does not say %q:\n%s", page.Request.URL, message, page.body)
	}
}

// The whole password journey through the built-in pages, as a browser
// posts their forms: the sign-in page's links, sign-up (the same answer
// for a taken address), the verification code typed on the
// verify-request page, sign-in, forgot password (the same answer for an
// unknown address), the reset link's form (a short password sent back
// with the reason, the link refused once used), sign-in with the new
// password and not the old one.
func TestPasswordPages(t *testing.T) {
	e, box := pagesEnv(t, false)
	email := "pat@example.com"

	signin := e.get("/auth/signin?callbackUrl=%2Fdashboard")
	wantStatus(t, signin, 200)
	pw := formTo(t, signin, e.base+"/callback/password")
	if pw.types["email"] != "email" || pw.types["password"] != "password" || pw.fields.Get("callbackUrl") != e.srv.URL+"/dashboard" {
		t.Errorf("the sign-in page's password form: fields %v types %v", pw.fields, pw.types)
	}
	for _, link := range []string{e.base + "/password/forgot", e.base + "/password/signup"} {
		if !strings.Contains(signin.body, `href="`+link+`"`) {
			t.Errorf("the sign-in page does not link to %s", link)
		}
	}
	formTo(t, signin, e.base+"/email-code/email") // the e-mail provider has codes

	signup := e.get("/auth/password/signup")
	wantStatus(t, signup, 200)
	res := e.submit(formTo(t, signup, e.base+"/password/signup"), "email", email, "name", "Pat", "password", "correct horse battery")
	wantStatus(t, res, http.StatusSeeOther)
	loc := wantLocation(t, e, res, "/auth/verify-request", "type", "verify-email")
	if loc.Query().Has("email") {
		t.Errorf("the address is in the URL %s", loc)
	}

	// Another browser signing up with the taken address gets the same
	// answer, byte for byte; the owner is told by mail.
	other := e.newClient()
	req, _ := http.NewRequest("GET", e.base+"/password/signup", nil)
	otherPage := e.do(other, req)
	f := formTo(t, otherPage, e.base+"/password/signup")
	f.fields.Set("email", email)
	f.fields.Set("password", "another password entirely")
	req, _ = http.NewRequest("POST", f.action, strings.NewReader(f.fields.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	taken := e.do(other, req)
	if taken.StatusCode != res.StatusCode || taken.Header.Get("Location") != res.Header.Get("Location") || taken.body != res.body {
		t.Errorf("sign-up with a taken address: %d %q %q; a new one: %d %q %q",
			taken.StatusCode, taken.Header.Get("Location"), taken.body, res.StatusCode, res.Header.Get("Location"), res.body)
	}
	box.last(t, email, provider.PurposeAccountExists)

	verify := e.get(loc.String())
	wantStatus(t, verify, 200)
	code := formTo(t, verify, e.base+"/password/verify")
	if code.fields.Get("email") != email || code.types["code"] != "text" {
		t.Errorf("the verification code form: %v %v", code.fields, code.types)
	}
	// A wrong code comes back to the form, which says so.
	mail := box.last(t, email, provider.PurposeVerifyEmail)
	wrong := "000000"
	if mail.Code == wrong {
		wrong = "000001"
	}
	res = e.submit(code, "code", wrong)
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/verify-request", "type", "verify-email", "error", "Verification")
	wantAlert(t, e.follow(res), "The link or code is no longer valid")
	res = e.submit(code, "code", mail.Code)
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/dashboard")
	if s := e.session(); s == nil || s["user"].(map[string]any)["email"] != email {
		t.Fatalf("after the code, the session is %v", s)
	}

	// Forgot password, in a new browser: the same answer for an unknown
	// address.
	e.client = e.newClient()
	forgot := e.get("/auth/password/forgot")
	wantStatus(t, forgot, 200)
	ff := formTo(t, forgot, e.base+"/password/forgot")
	res = e.submit(ff, "email", email)
	wantStatus(t, res, http.StatusSeeOther)
	loc = wantLocation(t, e, res, "/auth/verify-request", "type", "reset-password")
	e.a.Wait() // the reset e-mail is sent in the background
	before := box.count()
	unknown := e.submit(ff, "email", "nobody@example.com")
	e.a.Wait()
	if unknown.StatusCode != res.StatusCode || unknown.Header.Get("Location") != res.Header.Get("Location") || unknown.body != res.body {
		t.Errorf("forgot for an unknown address: %d %q; a known one: %d %q", unknown.StatusCode, unknown.Header.Get("Location"), res.StatusCode, res.Header.Get("Location"))
	}
	if box.count() != before {
		t.Errorf("forgot for an unknown address sent a mail")
	}
	e.submit(ff, "email", email) // the browser's last request, whose address the page shows
	e.a.Wait()
	page := e.get(loc.String())
	formTo(t, page, e.base+"/password/reset") // reset by code, checked in TestPasswordResetByCode
	if !strings.Contains(page.body, "If "+email+" belongs to an account with a password") {
		t.Errorf("the reset verify-request page:\n%s", page.body)
	}

	link := box.last(t, email, provider.PurposeResetPassword).URL
	if !strings.HasPrefix(link, e.base+"/password/reset?") {
		t.Fatalf("the reset link %s", link)
	}
	form := e.get(link)
	wantStatus(t, form, 200)
	if form.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the reset form, which holds the token, has Referrer-Policy %q", form.Header.Get("Referrer-Policy"))
	}
	rf := formTo(t, form, e.base+"/password/reset")
	res = e.submit(rf, "password", "short")
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/password/reset", "error", "BadRequest", "reason", "password-length", "token", rf.fields.Get("token"))
	wantAlert(t, e.follow(res), "The password must be 8 to 128 characters long.")
	res = e.submit(rf, "password", "a brand new passphrase")
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/signin")
	// The link is spent: its form comes back saying so, without a form.
	res = e.submit(formTo(t, e.get(link), e.base+"/password/reset"), "password", "yet another passphrase")
	wantLocation(t, e, res, "/auth/password/reset", "error", "Verification")
	spent := e.follow(res)
	wantAlert(t, spent, "The link or code is no longer valid")
	if len(formsOf(spent.body)) != 0 || !strings.Contains(spent.body, `href="`+e.base+`/password/forgot"`) {
		t.Errorf("the spent link's page shows a form, or no way to ask again:\n%s", spent.body)
	}

	// The old password is refused, the new one signs in.
	pw = formTo(t, e.get("/auth/signin"), e.base+"/callback/password")
	res = e.submit(pw, "email", email, "password", "correct horse battery")
	wantLocation(t, e, res, "/auth/signin", "error", "CredentialsSignin")
	wantAlert(t, e.follow(res), "Sign in failed. Check the details you provided are correct.")
	res = e.submit(pw, "email", email, "password", "a brand new passphrase")
	wantStatus(t, res, http.StatusSeeOther)
	if s := e.session(); s == nil || s["user"].(map[string]any)["email"] != email {
		t.Fatalf("after signing in with the new password, the session is %v", s)
	}
}

// Reset by code on the verify-request page: the code, the e-mail and the
// new password in one form, in the browser that asked.
func TestPasswordResetByCode(t *testing.T) {
	e, box := pagesEnv(t, false)
	email := "quinn@example.com"
	signUpVerified(t, e, box, email, "first passphrase")
	e.client = e.newClient()
	res := e.submit(formTo(t, e.get("/auth/password/forgot"), e.base+"/password/forgot"), "email", email)
	page := e.follow(res)
	f := formTo(t, page, e.base+"/password/reset")
	if f.fields.Get("email") != email || f.types["password"] != "password" || f.fields.Has("token") {
		t.Fatalf("the reset code form: %v %v", f.fields, f.types)
	}
	e.a.Wait() // the reset e-mail is sent in the background
	code := box.last(t, email, provider.PurposeResetPassword).Code
	// Another browser cannot use the code.
	stranger := e.client
	e.client = e.newClient()
	res = e.submit(formTo(t, e.get(page.Request.URL.String()), e.base+"/password/reset"), "email", email, "code", code, "password", "stolen passphrase")
	wantLocation(t, e, res, "/auth/verify-request", "type", "reset-password", "error", "Verification")
	e.client = stranger
	res = e.submit(f, "code", code, "password", "second passphrase")
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/signin")
	res = e.submit(formTo(t, e.get("/auth/signin"), e.base+"/callback/password"), "email", email, "password", "second passphrase")
	if loc := res.Header.Get("Location"); strings.Contains(loc, "error") {
		t.Errorf("sign-in with the reset password: %s", loc)
	}
}

// signUpVerified signs email up through the pages and verifies it with
// the mailed link.
func signUpVerified(t *testing.T, e *env, box *pagesMailbox, email, pass string) {
	t.Helper()
	res := e.submit(formTo(t, e.get("/auth/password/signup"), e.base+"/password/signup"), "email", email, "password", pass)
	wantLocation(t, e, res, "/auth/verify-request", "type", "verify-email")
	page := e.get(box.last(t, email, provider.PurposeVerifyEmail).URL)
	wantStatus(t, page, 200)
	res = e.submit(formTo(t, page, e.base+"/password/verify"))
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || strings.Contains(loc, "error") {
		t.Fatalf("the verification link confirmed in the sign-up's browser: %d %s", res.StatusCode, loc)
	}
}

// The verification link opens a page that verifies nothing (mail scanners
// open links; someone may have signed up with the address of whoever
// clicks): its form, posted with CSRF, verifies in the browser that signed
// up, and elsewhere only with the account's password; every failure comes
// back to the page with the same refusal.
func TestPasswordVerificationLinkConfirmation(t *testing.T) {
	e, box := pagesEnv(t, false)
	email, pass := "val@example.com", "correct horse battery"
	res := e.submit(formTo(t, e.get("/auth/password/signup"), e.base+"/password/signup"), "email", email, "password", pass)
	wantLocation(t, e, res, "/auth/verify-request", "type", "verify-email")
	link := box.last(t, email, provider.PurposeVerifyEmail).URL

	// A scanner's GET (a new browser, no cookies): a page, no session,
	// nothing verified; the link still works afterwards.
	e.client = e.newClient()
	page := e.get(link)
	wantStatus(t, page, 200)
	if page.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the confirmation page, which holds the token, has Referrer-Policy %q", page.Header.Get("Referrer-Policy"))
	}
	if !strings.Contains(page.body, "<h1>Confirm your e-mail address</h1>") {
		t.Errorf("the confirmation page:\n%s", page.body)
	}
	f := formTo(t, page, e.base+"/password/verify")
	if f.fields.Get("token") == "" || f.fields.Get("email") != email || f.fields.Get("csrfToken") == "" || f.types["password"] != "password" {
		t.Fatalf("the confirmation form: %v %v", f.fields, f.types)
	}
	if e.session() != nil {
		t.Fatal("opening the verification link signed in")
	}
	// Posted from another browser: without the password, or with a wrong
	// one, the same refusal, back on the page.
	for _, pw := range []string{"", "wrong passphrase here"} {
		res := e.submit(f, "password", pw)
		loc := wantLocation(t, e, res, "/auth/password/verify", "error", "Verification", "token", f.fields.Get("token"))
		if e.session() != nil {
			t.Fatalf("the link posted from another browser with password %q signed in", pw)
		}
		wantAlert(t, e.get(loc.String()), "The link is no longer valid, or the password is not correct.")
	}
	// Without CSRF: refused.
	noCSRF := pageForm{action: f.action, fields: url.Values{"email": {email}, "token": {f.fields.Get("token")}, "password": {pass}}}
	if res := e.submit(noCSRF); !strings.Contains(res.Header.Get("Location"), "MissingCSRF") {
		t.Errorf("the confirmation without CSRF: %d %s; want MissingCSRF", res.StatusCode, res.Header.Get("Location"))
	}
	// With the password, another browser verifies and signs in.
	res = e.submit(f, "password", pass)
	wantStatus(t, res, http.StatusSeeOther)
	if s := e.session(); s == nil || s["user"].(map[string]any)["email"] != email {
		t.Fatalf("after confirming with the password, the session is %v", s)
	}
	// Used: refused, even with the password.
	res = e.submit(f, "password", pass)
	wantLocation(t, e, res, "/auth/password/verify", "error", "Verification")
}

// Refused sign-ups come back to the sign-up page with the reason; none
// says whether an address has an account.
func TestPasswordSignUpRefusals(t *testing.T) {
	e, box := pagesEnv(t, true)
	page := e.get("/auth/password/signup")
	f := formTo(t, page, e.base+"/password/signup")
	if f.types["username"] != "text" || f.types["email"] != "email" || f.types["password"] != "password" {
		t.Errorf("the sign-up form with usernames: %v", f.types)
	}
	for _, c := range []struct {
		fields  []string
		reason  string
		message string
	}{
		{[]string{"email", "rae@example.com", "password", "short"}, "password-length", "The password must be 8 to 128 characters long."},
		{[]string{"email", "not an address", "password", "long enough passphrase"}, "", "Check the e-mail address or username you entered."},
		{[]string{"email", "rae@example.com", "password", "bad\x00passphrase"}, "password", "This password cannot be used"},
	} {
		res := e.submit(f, c.fields...)
		loc := wantLocation(t, e, res, "/auth/password/signup", "error", "BadRequest", "reason", c.reason)
		wantAlert(t, e.get(loc.String()), c.message)
	}
	if n := box.count(); n != 0 {
		t.Errorf("refused sign-ups sent %d mails", n)
	}
	// A username-only sign-up signs in at once; the name is then taken.
	res := e.submit(f, "username", "rae", "password", "long enough passphrase")
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || strings.Contains(loc, "error") {
		t.Fatalf("username sign-up: %d %s", res.StatusCode, loc)
	}
	e.client = e.newClient()
	res = e.submit(formTo(t, e.get("/auth/password/signup"), e.base+"/password/signup"), "username", "RAE", "password", "long enough passphrase")
	loc := wantLocation(t, e, res, "/auth/password/signup", "error", "BadRequest", "reason", "username-taken")
	wantAlert(t, e.get(loc.String()), "This username is taken.")
	// The sign-in form takes an e-mail address or a username.
	pw := formTo(t, e.get("/auth/signin"), e.base+"/callback/password")
	if pw.types["username"] != "text" || pw.fields.Has("email") {
		t.Errorf("the password form with usernames: %v", pw.types)
	}
	res = e.submit(pw, "username", "rae", "password", "long enough passphrase")
	if loc := res.Header.Get("Location"); strings.Contains(loc, "error") {
		t.Errorf("sign-in by username: %s", loc)
	}
}

// The change page: signed out it sends the browser to sign in; signed in
// with a password it changes it (a wrong current password comes back with
// the reason); without one it sets one.
func TestPasswordChangePage(t *testing.T) {
	e, box := pagesEnv(t, false)
	res := e.get("/auth/password/change")
	wantStatus(t, res, http.StatusFound)
	wantLocation(t, e, res, "/auth/signin", "callbackUrl", e.base+"/password/change")

	email := "sam@example.com"
	signUpVerified(t, e, box, email, "first passphrase")
	page := e.get("/auth/password/change")
	wantStatus(t, page, 200)
	f := formTo(t, page, e.base+"/password/change")
	if f.types["currentPassword"] != "password" || !strings.Contains(page.body, "<h1>Change your password</h1>") {
		t.Fatalf("the change page:\n%s", page.body)
	}
	res = e.submit(f, "currentPassword", "wrong passphrase", "password", "second passphrase")
	loc := wantLocation(t, e, res, "/auth/password/change", "error", "CredentialsSignin")
	wantAlert(t, e.get(loc.String()), "The current password is not correct.")
	res = e.submit(f, "currentPassword", "first passphrase", "password", "second passphrase")
	wantStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); strings.Contains(loc, "error") {
		t.Fatalf("change: %s", loc)
	}

	// A user who signed in by e-mail code has no password: the page sets one.
	e.client = e.newClient()
	other := "tess@example.com"
	res = e.submit(formTo(t, e.get("/auth/signin"), e.base+"/email-code/email"), "email", other)
	loc = wantLocation(t, e, res, "/auth/verify-request", "provider", "email", "type", "email", "code", "1")
	verify := e.get(loc.String())
	cf := formTo(t, verify, e.base+"/email-code-verify/email")
	if cf.fields.Get("email") != other {
		t.Errorf("the e-mail code form: %v", cf.fields)
	}
	res = e.submit(cf, "code", "12")
	wantLocation(t, e, res, "/auth/verify-request", "provider", "email", "code", "1", "error", "Verification")
	res = e.submit(cf, "code", box.last(t, other, provider.PurposeSignIn).Code)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || strings.Contains(loc, "error") {
		t.Fatalf("e-mail code: %d %s", res.StatusCode, loc)
	}
	page = e.get("/auth/password/change")
	sf := formTo(t, page, e.base+"/password/set")
	if sf.fields.Has("currentPassword") || !strings.Contains(page.body, "<h1>Set a password</h1>") {
		t.Fatalf("the set page:\n%s", page.body)
	}
	res = e.submit(sf, "password", "tess passphrase")
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || strings.Contains(loc, "error") {
		t.Fatalf("set: %d %s", res.StatusCode, loc)
	}
	if !strings.Contains(e.get("/auth/password/change").body, "<h1>Change your password</h1>") {
		t.Error("after set, the page does not offer to change the password")
	}
}

// Every form of the password pages carries the CSRF token and a post
// without it is refused; callbackUrl never leads off the site; every page
// follows the browser's light or dark preference.
func TestPasswordPagesCSRFRedirectsTheme(t *testing.T) {
	e, box := pagesEnv(t, false)
	pages := []string{"/auth/signin", "/auth/password/signup", "/auth/password/forgot",
		"/auth/verify-request?provider=password&type=verify-email",
		"/auth/verify-request?provider=password&type=reset-password", "/auth/verify-request?provider=email&type=email&code=1",
		"/auth/password/reset?email=a%40example.com&token=abc"}
	for _, p := range pages {
		page := e.get(p)
		wantStatus(t, page, 200)
		forms := formsOf(page.body)
		if len(forms) == 0 {
			t.Errorf("%s has no form", p)
		}
		for _, f := range forms {
			if f.fields.Get("csrfToken") == "" {
				t.Errorf("%s: the form posting to %s has no CSRF token", p, f.action)
			}
		}
		if !strings.Contains(page.body, `<meta name="color-scheme" content="light dark">`) || !strings.Contains(page.body, "@media (prefers-color-scheme:dark)") {
			t.Errorf("%s has no dark theme", p)
		}
		for _, a := range anchorRE.FindAllString(page.body, -1) {
			if h := hrefRE.FindStringSubmatch(a); h != nil && !strings.HasPrefix(html.UnescapeString(h[1]), e.srv.URL+"/") {
				t.Errorf("%s links off the site: %s", p, a)
			}
		}
	}
	f := formTo(t, e.get("/auth/password/signup"), e.base+"/password/signup")
	f.fields.Del("csrfToken")
	res := e.submit(f, "email", "uma@example.com", "password", "long enough passphrase")
	wantLocation(t, e, res, "/auth/signin", "error", "MissingCSRF")
	if box.count() != 0 {
		t.Error("a sign-up without its CSRF token sent a mail")
	}

	// A callbackUrl off the site: signed up and verified, the browser
	// stays on the site.
	for _, evil := range []string{"https://evil.example/", "//evil.example/x", `/\evil.example`} {
		e.client = e.newClient()
		email := "v" + strings.NewReplacer("/", "", ":", "", ".", "", `\`, "").Replace(evil) + "@example.com"
		page := e.get("/auth/password/signup?callbackUrl=" + url.QueryEscape(evil))
		res := e.submit(formTo(t, page, e.base+"/password/signup"), "email", email, "password", "long enough passphrase")
		verify := e.follow(res)
		res = e.submit(formTo(t, verify, e.base+"/password/verify"), "code", box.last(t, email, provider.PurposeVerifyEmail).Code)
		if loc, err := url.Parse(res.Header.Get("Location")); err != nil || loc.Scheme+"://"+loc.Host != e.srv.URL {
			t.Errorf("callbackUrl %q: the sign-in led to %q", evil, res.Header.Get("Location"))
		}
	}
}

// A username chosen beside the address is not stored at sign-up (that
// would tell a later sign-up with it whether the address was new): the
// verification e-mail carries it, and both the code form (its hidden
// field, from the sign-up's cookie) and the link's confirmation form post
// it back, so the verified user holds it and signs in with it.
func TestPasswordSignUpUsernameTravelsWithTheMail(t *testing.T) {
	e, box := pagesEnv(t, true)
	pass := "correct horse battery"
	signInByName := func(name string) response {
		e.client = e.newClient()
		return e.submit(formTo(t, e.get("/auth/signin"), e.base+"/callback/password"), "username", name, "password", pass)
	}
	signUp := func(email, name string) response {
		res := e.submit(formTo(t, e.get("/auth/password/signup"), e.base+"/password/signup"), "email", email, "username", name, "password", pass)
		wantLocation(t, e, res, "/auth/verify-request", "type", "verify-email")
		if res := signInByName(name); !strings.Contains(res.Header.Get("Location"), "CredentialsSignin") {
			t.Fatalf("signing in as %s before the address is verified: %d %s; want CredentialsSignin", name, res.StatusCode, res.Header.Get("Location"))
		}
		return res
	}

	// The code form, in the browser that signed up.
	e.client = e.newClient()
	res := e.submit(formTo(t, e.get("/auth/password/signup"), e.base+"/password/signup"), "email", "carol@example.com", "username", "carol", "password", pass)
	f := formTo(t, e.follow(res), e.base+"/password/verify")
	if f.fields.Get("username") != "carol" || f.fields.Get("email") != "carol@example.com" {
		t.Fatalf("the code form's fields: %v; want the address and the username carol", f.fields)
	}
	res = e.submit(f, "code", box.last(t, "carol@example.com", provider.PurposeVerifyEmail).Code)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || strings.Contains(loc, "error") || e.session() == nil {
		t.Fatalf("the code with its username: %d %s", res.StatusCode, loc)
	}
	if res := signInByName("carol"); res.StatusCode != http.StatusSeeOther || strings.Contains(res.Header.Get("Location"), "error") {
		t.Errorf("signing in as carol after verifying: %d %s", res.StatusCode, res.Header.Get("Location"))
	}

	// The link's confirmation form, in another browser with the password;
	// a changed username verifies nothing.
	signUp("dave@example.com", "dave")
	e.client = e.newClient()
	page := e.get(box.last(t, "dave@example.com", provider.PurposeVerifyEmail).URL)
	f = formTo(t, page, e.base+"/password/verify")
	if f.fields.Get("username") != "dave" {
		t.Fatalf("the confirmation form's fields: %v; want the username dave", f.fields)
	}
	res = e.submit(f, "password", pass, "username", "davey")
	wantLocation(t, e, res, "/auth/password/verify", "error", "Verification", "username", "davey")
	res = e.submit(f, "password", pass)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || strings.Contains(loc, "error") || e.session() == nil {
		t.Fatalf("the link with its username: %d %s", res.StatusCode, loc)
	}
	if res := signInByName("dave"); res.StatusCode != http.StatusSeeOther || strings.Contains(res.Header.Get("Location"), "error") {
		t.Errorf("signing in as dave after verifying: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}
