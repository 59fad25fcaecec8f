package handler_test

import (
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// The built-in second-factor pages, read as a browser reads them (forms
// posted with the values the page holds): their structure, their CSRF
// fields and their escaping. No golden files: each test names what it
// needs of the page.

var (
	fpFormRE   = regexp.MustCompile(`(?s)<form\b([^>]*)>(.*?)</form>`)
	fpActionRE = regexp.MustCompile(`action="([^"]*)"`)
	fpInputRE  = regexp.MustCompile(`<input\b[^>]*>`)
	fpAttrRE   = regexp.MustCompile(`\b([a-zA-Z-]+)(?:="([^"]*)")?`)
)

// factorForm is a form of a page: where it posts, its attributes and its
// inputs (name → value, the last of a name).
type factorForm struct {
	action string
	attrs  string
	body   string
	values url.Values
}

// forms returns the page's forms, failing t for a POST form without a
// CSRF token or callbackUrl field.
func factorForms(t *testing.T, page string) []factorForm {
	t.Helper()
	var out []factorForm
	for _, m := range fpFormRE.FindAllStringSubmatch(page, -1) {
		f := factorForm{attrs: m[1], body: m[2], values: url.Values{}}
		if a := fpActionRE.FindStringSubmatch(m[1]); a != nil {
			f.action = html.UnescapeString(a[1])
		}
		for _, in := range fpInputRE.FindAllString(m[2], -1) {
			attrs := map[string]string{}
			for _, a := range fpAttrRE.FindAllStringSubmatch(in[len("<input"):], -1) {
				attrs[a[1]] = html.UnescapeString(a[2])
			}
			if name := attrs["name"]; name != "" && attrs["type"] != "checkbox" {
				f.values.Set(name, attrs["value"])
			}
		}
		if strings.Contains(m[1], `method="post"`) {
			if f.values.Get("csrfToken") == "" {
				t.Errorf("the form to %s has no CSRF token: %s", f.action, m[0])
			}
			if _, ok := f.values["callbackUrl"]; !ok {
				t.Errorf("the form to %s has no callbackUrl field: %s", f.action, m[0])
			}
		}
		out = append(out, f)
	}
	return out
}

// formWith returns the page's form carrying the data attribute, failing t
// when there is none.
func formWith(t *testing.T, page, attr string) factorForm {
	t.Helper()
	for _, f := range factorForms(t, page) {
		if strings.Contains(f.attrs, attr) {
			return f
		}
	}
	t.Fatalf("the page has no form[%s]:\n%s", attr, page)
	return factorForm{}
}

// submit posts the form as the browser would, with fields set over the
// values the page gave it.
func (b *browser) submit(f factorForm, fields ...string) response {
	b.m.t.Helper()
	v := url.Values{}
	for k, vs := range f.values {
		v[k] = append([]string(nil), vs...)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		v.Set(fields[i], fields[i+1])
	}
	req, _ := http.NewRequest("POST", b.m.abs(f.action), strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	return b.m.do(b.c, req)
}

// page GETs path as a browser page, failing t unless it answers 200 HTML.
func (b *browser) page(path string) string {
	b.m.t.Helper()
	res := b.get(path, "Accept", "text/html")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		b.m.t.Fatalf("GET %s: %d %s %s", path, res.StatusCode, res.Header.Get("Location"), res.body)
	}
	return res.body
}

// codeInput checks that the page's input id is a code field: labelled,
// numeric keyboard, one-time-code autofill.
func codeInput(t *testing.T, page, id string) {
	t.Helper()
	if !strings.Contains(page, `<label for="`+id+`">`) {
		t.Errorf("no label for #%s", id)
	}
	for _, in := range fpInputRE.FindAllString(page, -1) {
		if strings.Contains(in, `id="`+id+`"`) {
			if !strings.Contains(in, `inputmode="numeric"`) || !strings.Contains(in, `autocomplete="one-time-code"`) || !strings.Contains(in, `name="code"`) {
				t.Errorf("#%s is not a one-time-code field: %s", id, in)
			}
			return
		}
	}
	t.Errorf("no input #%s", id)
}

// TestPagesTwoFactorEnrolment walks the security page's "add an
// authenticator app", the enrolment page (QR code, the key as text, the
// confirmation form, each posted with the values the page holds) and the
// recovery codes shown once, with a download of them.
func TestPagesTwoFactorEnrolment(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	b := m.browser()
	if res := b.signIn(); res.StatusCode != 200 {
		t.Fatalf("sign-in: %d %s", res.StatusCode, res.body)
	}
	sec := b.page(m.base + "/account/security")
	if !strings.Contains(sec, "None yet") || strings.Contains(sec, "data-authport-recovery-new") || strings.Contains(sec, "data-authport-devices-revoke") {
		t.Errorf("the security page of a user without factors:\n%s", sec)
	}
	start := formWith(t, sec, "data-authport-totp-start")
	if !strings.Contains(sec, `<label for="totp-name">`) {
		t.Error("the authenticator's name has no label")
	}
	res := b.submit(start, "name", `<b>phone</b>`)
	if res.StatusCode != 200 {
		t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	enrol := res.body
	if strings.Contains(enrol, "<b>phone</b>") {
		t.Error("the enrolment page shows the name unescaped")
	}
	if !regexp.MustCompile(`<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="[^"]+"`).MatchString(enrol) {
		t.Errorf("no QR code image with alt text:\n%s", enrol)
	}
	key := regexp.MustCompile(`id="totp-key" type="text" value="([A-Z2-7]+)" readonly`).FindStringSubmatch(enrol)
	if key == nil || !strings.Contains(enrol, `<label for="totp-key">`) {
		t.Fatalf("no labelled, read-only text key:\n%s", enrol)
	}
	if !strings.Contains(enrol, `href="otpauth://totp/`) {
		t.Error("no otpauth:// link for an app on this device")
	}
	codeInput(t, enrol, "code")
	confirm := formWith(t, enrol, "data-authport-totp-confirm")
	if confirm.values.Get("enrollment") == "" || !strings.HasSuffix(confirm.action, "/two-factor/totp/confirm") {
		t.Fatalf("the confirmation form: %+v", confirm)
	}
	if strings.Contains(enrol, `name="trustDevice"`) {
		t.Error("a signed-in enrolment offers to trust the browser")
	}
	// A wrong code: back to the security page with the error, nothing stored.
	res = b.submit(confirm, "code", totpCode(t, key[1], m.clock.Now().Add(time.Hour)))
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "error=SecondFactor") || len(m.factors()) != 0 {
		t.Fatalf("wrong code: %d %s %+v", res.StatusCode, loc, m.factors())
	}
	if p := b.page(res.Header.Get("Location")); !strings.Contains(p, `role="alert"`) || !strings.Contains(p, "not right") {
		t.Errorf("the refusal is not shown:\n%s", p)
	}
	res = b.submit(confirm, "code", totpCode(t, key[1], m.clock.Now()))
	if res.StatusCode != 200 {
		t.Fatalf("confirm: %d %s", res.StatusCode, res.body)
	}
	codesPage := res.body
	if !strings.Contains(codesPage, "Save these recovery codes now") || !strings.Contains(codesPage, "shown only this once") {
		t.Errorf("the recovery codes page does not say to save them now:\n%s", codesPage)
	}
	list := regexp.MustCompile(`(?s)<ul data-authport-recovery-codes[^>]*>(.*?)</ul>`).FindStringSubmatch(codesPage)
	if list == nil {
		t.Fatalf("no list of recovery codes:\n%s", codesPage)
	}
	codes := regexp.MustCompile(`<li>([^<]+)</li>`).FindAllStringSubmatch(list[1], -1)
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes, want 10:\n%s", len(codes), list[1])
	}
	dl := regexp.MustCompile(`<a href="data:text/plain;charset=utf-8;base64,([A-Za-z0-9+/=]+)" download="recovery-codes.txt"`).FindStringSubmatch(codesPage)
	if dl == nil {
		t.Fatalf("no download of the codes:\n%s", codesPage)
	}
	file, err := base64.StdEncoding.DecodeString(dl[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range codes {
		if !strings.Contains(string(file), c[1]+"\r\n") || !strings.Contains(codesPage, c[1]+"\n") {
			t.Errorf("code %s is missing from the download or the text to copy", c[1])
		}
	}
	// The codes shown work, once.
	other := m.browser()
	other.signIn()
	if res := other.postJSON("/two-factor/verify", map[string]string{"type": "recovery", "code": codes[3][1]}); res.StatusCode != 200 || !other.signedIn() {
		t.Fatalf("a recovery code from the page: %d %s", res.StatusCode, res.body)
	}

	// The security page lists the factor, escaped, with its dates.
	sec = b.page(m.base + "/account/security")
	if strings.Contains(sec, "<b>phone</b>") || !strings.Contains(sec, "&lt;b&gt;phone&lt;/b&gt;") {
		t.Errorf("the factor's name is not escaped:\n%s", sec)
	}
	if !strings.Contains(sec, "Authenticator app") || !strings.Contains(sec, "Recovery codes") || !strings.Contains(sec, "(9 left)") ||
		!strings.Contains(sec, "last used "+m.clock.Now().UTC().Format("2 Jan 2006")) || !strings.Contains(sec, "Added "+m.clock.Now().UTC().Format("2 Jan 2006")) {
		t.Errorf("the security page's factors:\n%s", sec)
	}
	// Removing asks first (a <details> around the form), then removes.
	var remove factorForm
	for _, f := range factorForms(t, sec) {
		if strings.Contains(f.attrs, "data-authport-remove") && strings.Contains(f.body, "Authenticator app") {
			remove = f
		}
	}
	if remove.values.Get("id") == "" || !regexp.MustCompile(`<details><summary>Remove…</summary>\s*<form action="[^"]*/two-factor/remove"`).MatchString(sec) {
		t.Fatalf("no remove form behind a confirmation:\n%s", sec)
	}
	regen := formWith(t, sec, "data-authport-recovery-new")
	if !strings.Contains(regen.body, "stop working") {
		t.Errorf("regenerating the codes does not say the old ones stop working: %s", regen.body)
	}
	// Removing a factor needs a session that proved a second factor
	// lately (a stolen session and the password are not enough): the
	// password alone sends the browser to re-authenticate, the password
	// with a code lets it remove.
	if res := b.submit(remove); res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "/reauth") {
		t.Fatalf("remove after a password-only sign-in: %d %s, want the re-authentication page", res.StatusCode, res.Header.Get("Location"))
	}
	m.clock.Add(30 * time.Second)
	if res := b.postJSON("/reauth", map[string]string{"password": mfaPassword, "type": "totp", "code": totpCode(t, key[1], m.clock.Now())}); res.StatusCode != 200 {
		t.Fatalf("reauth with the password and a code: %d %s", res.StatusCode, res.body)
	}
	res = b.submit(remove)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "done=removed") {
		t.Fatalf("remove: %d %s", res.StatusCode, loc)
	}
	if slicesContainsType(m.factors(), core.FactorTOTP) {
		t.Fatal("the remove form left the factor")
	}
	if p := b.page(res.Header.Get("Location")); !strings.Contains(p, `<p role="status">The factor was removed.</p>`) {
		t.Errorf("no notice of the removal:\n%s", p)
	}
}

// TestPagesTwoFactorChallenge: the challenge page a form sign-in lands
// on, its code and recovery forms posted with the page's own values, the
// trusted browser on the security page.
func TestPagesTwoFactorChallenge(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	key, recovery := m.enrolled()
	m.nextStep()
	b := m.browser()
	cb := `/after?x="><script>alert(1)</script>`
	res := b.postForm("/callback/password", map[string]string{"email": mfaEmail, "password": mfaPassword, "callbackUrl": cb})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", res.StatusCode, res.body)
	}
	page := b.page(res.Header.Get("Location"))
	if strings.Contains(page, "<script>alert") {
		t.Fatalf("the callbackUrl is not escaped:\n%s", page)
	}
	codeInput(t, page, "code")
	code := formWith(t, page, "data-authport-factor")
	if code.values.Get("type") != "totp" || !strings.Contains(code.body, `name="trustDevice"`) || !strings.HasSuffix(code.action, "/two-factor/verify") {
		t.Errorf("the code form: %+v", code)
	}
	if got, _ := url.QueryUnescape(code.values.Get("callbackUrl")); !strings.HasSuffix(got, `/after?x="><script>alert(1)</script>`) {
		t.Errorf("the code form carries callbackUrl %q", got)
	}
	rec := formWith(t, page, "data-authport-recovery")
	if rec.values.Get("type") != "recovery" || !strings.Contains(page, `<label for="recovery-code">`) {
		t.Errorf("the recovery form: %+v", rec)
	}
	if strings.Contains(page, "passkey.js") || strings.Contains(page, "data-authport-passkey") {
		t.Error("the challenge offers a passkey without a passkey provider")
	}
	if strings.Contains(page, "data-authport-send-code") || strings.Contains(page, "data-authport-email-factor") {
		t.Error("the challenge offers e-mail codes to a user who has not added them")
	}
	// A wrong recovery code: the page again with the error.
	res = b.submit(rec, "code", "nope-nope")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "error=SecondFactor") {
		t.Fatalf("wrong recovery code: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	again := b.page(res.Header.Get("Location"))
	if !strings.Contains(again, `<div class="error" role="alert"><p>That code is not right, or was used already.`) {
		t.Errorf("the refusal is not shown:\n%s", again)
	}
	// The code form as the page gives it, trusting this browser.
	res = b.submit(formWith(t, again, "data-authport-factor"), "code", totpCode(t, key, m.clock.Now()), "trustDevice", "1")
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, m.srv.URL+"/after") || !b.signedIn() {
		t.Fatalf("the code: %d %s", res.StatusCode, loc)
	}
	if setCookie(res, "authport.trusted-device") == nil {
		t.Fatal("trust this browser set no cookie")
	}
	sec := b.page(m.base + "/account/security")
	if !strings.Contains(sec, "Trusted browsers") || !strings.Contains(sec, "1 browser skips") {
		t.Errorf("the trusted browser is not shown:\n%s", sec)
	}
	if res := b.submit(formWith(t, sec, "data-authport-devices-revoke")); res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "done=devices") {
		t.Fatalf("forget the browsers: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if slicesContainsType(m.factors(), core.FactorTrustedDevice) {
		t.Error("the trusted browser survived its revocation")
	}
	_ = recovery
}

// TestPagesReauth: the re-authentication page a stale session meets, and
// its password and code forms.
func TestPagesReauth(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	key, _ := m.enrolled()
	b := m.browser()
	b.signIn()
	m.nextStep()
	b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now())})
	if !b.signedIn() {
		t.Fatal("not signed in")
	}
	m.clock.Add(time.Hour)
	res := b.get(m.srv.URL+"/sensitive", "Accept", "text/html")
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, m.base+"/reauth?callbackUrl=") {
		t.Fatalf("stale session: %d %s", res.StatusCode, loc)
	}
	page := b.page(loc)
	pw := formWith(t, page, "data-authport-reauth-password")
	if !strings.Contains(pw.body, `autocomplete="current-password"`) || !strings.Contains(page, `<label for="password">`) {
		t.Errorf("the password form: %s", pw.body)
	}
	codeInput(t, page, "code")
	totp := formWith(t, page, "data-authport-reauth-totp")
	if totp.values.Get("type") != "totp" || !strings.HasSuffix(totp.values.Get("callbackUrl"), "/sensitive") {
		t.Errorf("the code form: %+v", totp.values)
	}
	m.nextStep()
	res = b.submit(totp, "code", totpCode(t, key, m.clock.Now()))
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "/sensitive") {
		t.Fatalf("re-authenticate: %d %s %s", res.StatusCode, loc, res.body)
	}
	if res := b.get(m.srv.URL+"/sensitive", "Accept", "text/html"); res.StatusCode != 200 || !strings.Contains(res.body, `"ok":true`) {
		t.Fatalf("after re-authentication: %d %s", res.StatusCode, res.body)
	}
}
