package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

// post posts fields (with a fresh CSRF token) as a form a browser sends,
// and returns the answer.
func (s *site) post(t *testing.T, c *http.Client, path string, fields url.Values, accept string) (*http.Response, string) {
	t.Helper()
	var csrf struct{ CSRFToken string }
	s.getJSON(t, c, "/auth/csrf", "", &csrf)
	fields.Set("csrfToken", csrf.CSRFToken)
	req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(fields.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", accept)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// page GETs path (or an absolute URL) as a browser does (Accept:
// text/html).
func (s *site) page(t *testing.T, c *http.Client, path string) (*http.Response, string) {
	t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = s.base + path
	}
	req, _ := http.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept", "text/html")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// TestSettingsNeedsAFreshSession: /settings lets a fresh session through;
// once it is older than FreshFor a browser is sent to /auth/reauth and an
// API client gets RFC 9470's challenge; the authenticator app's code on
// the re-authentication page gives a fresh session (a new token) and
// leads back to /settings.
func TestSettingsNeedsAFreshSession(t *testing.T) {
	s := start(t)
	c := s.signIn(t, "erin@example.com")
	if res, body := s.page(t, c, "/settings"); res.StatusCode != http.StatusOK || !strings.Contains(body, "Settings of erin@example.com") {
		t.Fatalf("GET /settings just after sign-in: %d %s", res.StatusCode, body)
	}

	// Erin adds an authenticator app (JSON, as a script would).
	res, body := s.post(t, c, "/auth/two-factor/totp/start", url.Values{"name": {"phone"}}, "application/json")
	var start struct{ Secret, Enrollment string }
	if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &start) != nil || start.Secret == "" {
		t.Fatalf("POST /auth/two-factor/totp/start: %d %s", res.StatusCode, body)
	}
	now := time.Now()
	code, _ := totp.GenerateCode(start.Secret, now)
	res, body = s.post(t, c, "/auth/two-factor/totp/confirm", url.Values{"enrollment": {start.Enrollment}, "code": {code}}, "application/json")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"recoveryCodes"`) {
		t.Fatalf("POST /auth/two-factor/totp/confirm: %d %s", res.StatusCode, body)
	}

	// The session goes stale.
	time.Sleep(testFreshFor + 1100*time.Millisecond)
	old := sessionToken(t, c, s.base)
	res, _ = s.page(t, c, "/settings")
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, s.base+"/auth/reauth?callbackUrl=") || !strings.Contains(loc, url.QueryEscape("/settings")) {
		t.Fatalf("GET /settings with a stale session: %d Location %q, want 303 to /auth/reauth and back", res.StatusCode, loc)
	}
	api := s.request(t, &http.Client{Timeout: 30 * time.Second}, "/settings", old)
	api.Body.Close()
	if challenge := api.Header.Get("WWW-Authenticate"); api.StatusCode != http.StatusUnauthorized ||
		!strings.Contains(challenge, `error="insufficient_user_authentication"`) || !strings.Contains(challenge, "max_age=2") {
		t.Fatalf("GET /settings with a stale bearer token: %d WWW-Authenticate %q", api.StatusCode, challenge)
	}

	// The re-authentication page offers the app's code; a wrong one is refused.
	res, body = s.page(t, c, loc)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-authport-reauth-totp`) {
		t.Fatalf("GET %s: %d %s", loc, res.StatusCode, body)
	}
	callback, _ := url.Parse(loc)
	back := callback.Query().Get("callbackUrl")
	res, _ = s.post(t, c, "/auth/reauth", url.Values{"type": {"totp"}, "code": {"000000"}, "callbackUrl": {back}}, "text/html")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "error=SecondFactor") {
		t.Fatalf("a wrong code: %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := s.page(t, c, "/settings"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a wrong code made the session fresh: GET /settings %d", res.StatusCode)
	}
	// The next time step's code (the enrolment used this step's).
	next, _ := totp.GenerateCode(start.Secret, now.Add(30*time.Second))
	res, body = s.post(t, c, "/auth/reauth", url.Values{"type": {"totp"}, "code": {next}, "callbackUrl": {back}}, "text/html")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != s.base+"/settings" {
		t.Fatalf("re-authenticate with the code: %d Location %q %s", res.StatusCode, res.Header.Get("Location"), body)
	}
	if res, body := s.page(t, c, "/settings"); res.StatusCode != http.StatusOK || !strings.Contains(body, "otp") {
		t.Fatalf("GET /settings after re-authenticating: %d %s", res.StatusCode, body)
	}
	if now := sessionToken(t, c, s.base); now == old {
		t.Error("re-authenticating kept the session token: it must be replaced")
	}
}
