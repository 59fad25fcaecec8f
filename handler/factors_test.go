package handler_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// rfc6238 is an RFC 6238 TOTP (HMAC-SHA1, 30-second steps, six digits,
// one step of skew either way), as core/auth asks of one (auth.TOTP): the
// handler module takes no third-party dependency for its tests; the
// multi-backend tests (tests/handlersec) use github.com/pquerna/otp.
type rfc6238 struct{}

func (rfc6238) NewKey(issuer, account string) (auth.TOTPKey, error) {
	secret := make([]byte, 20)
	_, _ = rand.Read(secret)
	text := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret)
	uri := "otpauth://totp/" + url.PathEscape(issuer+":"+account) + "?secret=" + text + "&issuer=" + url.QueryEscape(issuer)
	return auth.TOTPKey{Secret: secret, Text: text, URI: uri, QRCode: []byte("\x89PNG\r\n\x1a\n")}, nil
}

func (rfc6238) Match(key []byte, code string, now time.Time) (int64, bool) {
	if len(code) != 6 {
		return 0, false
	}
	step := now.Unix() / 30
	for _, s := range []int64{step - 1, step, step + 1} {
		if subtle.ConstantTimeCompare([]byte(totpAt(key, s)), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// totpAt is the code of key at the time step.
func totpAt(key []byte, step int64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0xf
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

// totpCode is the code of the base32 key text at now.
func totpCode(t testing.TB, text string, now time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	return totpAt(key, now.Unix()/30)
}

// mfa is a handler with a password provider and second factors (TOTP,
// e-mail codes, trusted devices) on the memory adapter, with a route that
// needs a fresh session.
type mfa struct {
	*env
	mu    sync.Mutex
	mails []provider.VerificationRequest
}

const (
	mfaEmail    = "grace@example.com"
	mfaPassword = "correct horse battery"
)

// sensitive is the route of the mfa app that needs a session from the
// last five minutes: it answers the session's authentication.
func sensitive(app *http.ServeMux, h *handler.Handler) {
	app.Handle("/sensitive", h.RequireFresh(auth.StepUp{MaxAge: 5 * time.Minute})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := handler.FromContext(r.Context())
		au := s.Authentication()
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "authTime": au.Time.Unix(), "amr": au.Methods, "acr": au.Level})
	})))
}

func newMFA(t *testing.T, strategy auth.Strategy, change func(*auth.SecondFactorOptions)) *mfa {
	t.Helper()
	m := &mfa{}
	hasher, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	m.env = newEnv(t, envOpts{strategy: strategy,
		providers: func(*testing.T, string) []provider.Provider {
			pc := provider.Password("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
				m.mu.Lock()
				defer m.mu.Unlock()
				m.mails = append(m.mails, r)
				return nil
			})
			pc.Codes, pc.Hasher = true, hasher
			return []provider.Provider{pc}
		},
		authConfig: func(c *auth.Config) {
			c.SecondFactors = auth.SecondFactorOptions{Enabled: true, TOTP: rfc6238{}, EmailCode: true, TrustDevice: 24 * time.Hour}
			if change != nil {
				change(&c.SecondFactors)
			}
		},
		config: func(c *handler.Config) { c.RateLimit = handler.RateLimit{Disabled: true} },
		routes: sensitive,
	})
	ctx := context.Background()
	u, err := m.store.CreateUser(ctx, core.User{ID: "user-grace", Email: mfaEmail, EmailVerified: ptr(m.clock.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.a.Passwords().Set(ctx, u.ID, mfaPassword); err != nil {
		t.Fatal(err)
	}
	return m
}

// userID is the test user's id.
func (m *mfa) userID() string {
	m.t.Helper()
	u, err := m.store.GetUserByEmail(context.Background(), mfaEmail)
	if err != nil || u == nil {
		m.t.Fatalf("the user: %v %v", u, err)
	}
	return u.ID
}

// browser is one cookie jar on the mfa app.
type browser struct {
	m *mfa
	c *http.Client
}

func (m *mfa) browser() *browser { return &browser{m, m.newClient()} }

func (b *browser) csrf() string {
	b.m.t.Helper()
	req, _ := http.NewRequest("GET", b.m.base+"/csrf", nil)
	res := b.m.do(b.c, req)
	var body struct{ CSRFToken string }
	if err := json.Unmarshal([]byte(res.body), &body); err != nil {
		b.m.t.Fatalf("GET /csrf: %d %s", res.StatusCode, res.body)
	}
	return body.CSRFToken
}

// postJSON posts fields as JSON with the CSRF token (unless fields sets
// csrfToken itself).
func (b *browser) postJSON(path string, fields map[string]string) response {
	b.m.t.Helper()
	if _, ok := fields["csrfToken"]; !ok {
		fields["csrfToken"] = b.csrf()
	}
	body, _ := json.Marshal(fields)
	req, _ := http.NewRequest("POST", b.m.base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return b.m.do(b.c, req)
}

// postForm posts fields as a browser form with the CSRF token.
func (b *browser) postForm(path string, fields map[string]string) response {
	b.m.t.Helper()
	v := url.Values{"csrfToken": {b.csrf()}}
	for k, f := range fields {
		v.Set(k, f)
	}
	req, _ := http.NewRequest("POST", b.m.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	return b.m.do(b.c, req)
}

func (b *browser) get(path string, header ...string) response {
	b.m.t.Helper()
	req, _ := http.NewRequest("GET", b.m.abs(path), nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.m.do(b.c, req)
}

// signedIn reports whether GET /session answers a user.
func (b *browser) signedIn() bool {
	b.m.t.Helper()
	res := b.get(b.m.base + "/session")
	return strings.Contains(res.body, `"user"`)
}

// signIn posts the password as JSON and returns the answer.
func (b *browser) signIn() response {
	b.m.t.Helper()
	return b.postJSON("/password/signin", map[string]string{"email": mfaEmail, "password": mfaPassword})
}

// enrolTOTP enrols TOTP for the signed-in browser and returns the key's
// text and the recovery codes.
func (b *browser) enrolTOTP() (string, []string) {
	t := b.m.t
	t.Helper()
	res := b.postJSON("/two-factor/totp/start", map[string]string{"name": "phone"})
	var start struct{ Secret, URI, QRCode, Enrollment string }
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.body), &start) != nil || start.Secret == "" || start.Enrollment == "" {
		t.Fatalf("totp/start: %d %s", res.StatusCode, res.body)
	}
	if !strings.HasPrefix(start.QRCode, "data:image/png;base64,") || !strings.HasPrefix(start.URI, "otpauth://totp/") {
		t.Fatalf("totp/start: QR %q URI %q", start.QRCode, start.URI)
	}
	res = b.postJSON("/two-factor/totp/confirm", map[string]string{"enrollment": start.Enrollment, "code": totpCode(t, start.Secret, b.m.clock.Now())})
	var done struct {
		Factor        struct{ ID, Type string }
		RecoveryCodes []string
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.body), &done) != nil || done.Factor.Type != "totp" {
		t.Fatalf("totp/confirm: %d %s", res.StatusCode, res.body)
	}
	return start.Secret, done.RecoveryCodes
}

// factors is the user's factors through core/auth.
func (m *mfa) factors() []auth.FactorInfo {
	m.t.Helper()
	infos, err := m.a.Factors().List(context.Background(), m.userID())
	if err != nil {
		m.t.Fatal(err)
	}
	return infos
}

// nextStep moves the clock to the start of the next TOTP step, so that a
// new code differs from the last.
func (m *mfa) nextStep() {
	now := m.clock.Now()
	m.clock.Set(time.Unix((now.Unix()/30+1)*30, 0).UTC())
}

// enrolled is a browser signed in with TOTP enrolled, signed out again;
// it returns the key and recovery codes.
func (m *mfa) enrolled() (string, []string) {
	m.t.Helper()
	b := m.browser()
	if res := b.signIn(); res.StatusCode != 200 {
		m.t.Fatalf("sign-in: %d %s", res.StatusCode, res.body)
	}
	return b.enrolTOTP()
}

func TestTwoFactorEnrolment(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			m := newMFA(t, strategy, nil)
			b := m.browser()
			if res := b.signIn(); res.StatusCode != 200 || !b.signedIn() {
				t.Fatalf("sign-in before any factor: %d %s", res.StatusCode, res.body)
			}
			// A wrong code stores nothing.
			res := b.postJSON("/two-factor/totp/start", map[string]string{"name": "phone"})
			var start struct{ Secret, Enrollment string }
			if err := json.Unmarshal([]byte(res.body), &start); err != nil || res.StatusCode != 200 {
				t.Fatalf("totp/start: %d %s", res.StatusCode, res.body)
			}
			wrong := totpCode(t, start.Secret, m.clock.Now().Add(time.Hour))
			res = b.postJSON("/two-factor/totp/confirm", map[string]string{"enrollment": start.Enrollment, "code": wrong})
			if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.body, `"SecondFactor"`) {
				t.Fatalf("a wrong code: %d %s", res.StatusCode, res.body)
			}
			// (Within the attempt cap: auth.DefaultFactorAttempts.)
			for _, code := range []string{"12345", "abcdef"} {
				res = b.postJSON("/two-factor/totp/confirm", map[string]string{"enrollment": start.Enrollment, "code": code})
				if res.StatusCode < 400 || res.StatusCode >= 500 {
					t.Fatalf("code %q: %d %s", code, res.StatusCode, res.body)
				}
			}
			if got := m.factors(); len(got) != 0 {
				t.Fatalf("refused confirmations stored %+v", got)
			}
			// The right one enrols it, with ten recovery codes.
			res = b.postJSON("/two-factor/totp/confirm", map[string]string{"enrollment": start.Enrollment, "code": totpCode(t, start.Secret, m.clock.Now())})
			var done struct{ RecoveryCodes []string }
			if err := json.Unmarshal([]byte(res.body), &done); err != nil || res.StatusCode != 200 || len(done.RecoveryCodes) != 10 {
				t.Fatalf("totp/confirm: %d %s", res.StatusCode, res.body)
			}
			if strings.Contains(res.body, start.Secret) {
				t.Fatal("the confirmation answered the secret")
			}
			// GET /account/security lists it, never its secret.
			res = b.get(m.base+"/account/security", "Accept", "application/json")
			if res.StatusCode != 200 || !strings.Contains(res.body, `"totp"`) || strings.Contains(res.body, start.Secret) {
				t.Fatalf("security: %d %s", res.StatusCode, res.body)
			}
			page := b.get(m.base+"/account/security", "Accept", "text/html")
			if page.StatusCode != 200 || !strings.Contains(page.body, "/two-factor/remove") {
				t.Fatalf("security page: %d %s", page.StatusCode, page.body)
			}
		})
	}
}

func TestTwoFactorChallengeJSON(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			m := newMFA(t, strategy, nil)
			key, recovery := m.enrolled()
			m.nextStep()

			b := m.browser()
			res := b.signIn()
			var pending struct {
				TwoFactorRequired bool
				Factors           []string
				Enroll            bool
				URL               string
			}
			if err := json.Unmarshal([]byte(res.body), &pending); err != nil || !pending.TwoFactorRequired || !strings.Contains(strings.Join(pending.Factors, ","), "totp") {
				t.Fatalf("sign-in with TOTP: %d %s", res.StatusCode, res.body)
			}
			c := setCookie(res, "authport.pending")
			if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.MaxAge <= 0 || c.MaxAge > int(auth.DefaultPendingMaxAge/time.Second) {
				t.Fatalf("pending cookie: %+v", c)
			}
			if setCookie(res, "authjs.session-token") != nil || b.signedIn() {
				t.Fatal("a pending sign-in made a session")
			}
			// The challenge page offers the code and the recovery code.
			page := b.get(pending.URL, "Accept", "text/html")
			if page.StatusCode != 200 || !strings.Contains(page.body, `name="code"`) || !strings.Contains(page.body, `value="recovery"`) {
				t.Fatalf("challenge page: %d %s", page.StatusCode, page.body)
			}
			// A wrong code is refused and the pending sign-in stays.
			res = b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now().Add(-time.Hour))})
			if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.body, `"SecondFactor"`) || b.signedIn() {
				t.Fatalf("wrong code: %d %s", res.StatusCode, res.body)
			}
			code := totpCode(t, key, m.clock.Now())
			res = b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": code})
			if res.StatusCode != 200 || !strings.Contains(res.body, `"url"`) || !b.signedIn() {
				t.Fatalf("right code: %d %s", res.StatusCode, res.body)
			}
			if c := setCookie(res, "authport.pending"); c == nil || c.MaxAge >= 0 {
				t.Fatalf("the pending cookie stays: %+v", c)
			}
			// The same code in another sign-in (same step) is refused.
			other := m.browser()
			other.signIn()
			res = other.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": code})
			if res.StatusCode != http.StatusUnauthorized || other.signedIn() {
				t.Fatalf("replayed code: %d %s", res.StatusCode, res.body)
			}
			// A recovery code works once.
			res = other.postJSON("/two-factor/verify", map[string]string{"type": "recovery", "code": recovery[0]})
			if res.StatusCode != 200 || !other.signedIn() {
				t.Fatalf("recovery code: %d %s", res.StatusCode, res.body)
			}
			third := m.browser()
			third.signIn()
			res = third.postJSON("/two-factor/verify", map[string]string{"type": "recovery", "code": recovery[0]})
			if res.StatusCode != http.StatusUnauthorized || third.signedIn() {
				t.Fatalf("recovery code twice: %d %s", res.StatusCode, res.body)
			}
		})
	}
}

func TestTwoFactorChallengeForms(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	key, _ := m.enrolled()
	m.nextStep()
	b := m.browser()
	res := b.postForm("/callback/password", map[string]string{"email": mfaEmail, "password": mfaPassword, "callbackUrl": "/dashboard"})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, m.base+"/two-factor?callbackUrl=") || !strings.Contains(loc, url.QueryEscape(m.srv.URL+"/dashboard")) {
		t.Fatalf("form sign-in: %d %s", res.StatusCode, loc)
	}
	res = b.postForm("/two-factor/verify", map[string]string{"type": "totp", "code": "000000"})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != m.base+"/two-factor?error=SecondFactor" {
		t.Fatalf("wrong code form: %d %s", res.StatusCode, loc)
	}
	page := b.get(m.base+"/two-factor?error=SecondFactor", "Accept", "text/html")
	if !strings.Contains(page.body, "not right") {
		t.Fatalf("the page does not say the code was wrong: %s", page.body)
	}
	res = b.postForm("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now())})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != m.srv.URL+"/dashboard" || !b.signedIn() {
		t.Fatalf("right code form: %d %s", res.StatusCode, loc)
	}

	// An expired pending sign-in goes back to the sign-in page.
	late := m.browser()
	late.postForm("/callback/password", map[string]string{"email": mfaEmail, "password": mfaPassword})
	m.clock.Add(auth.DefaultPendingMaxAge + time.Second)
	res = late.postForm("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now())})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, m.base+"/signin?error=SecondFactor") || late.signedIn() {
		t.Fatalf("expired pending: %d %s", res.StatusCode, loc)
	}
	if page := late.get(m.base+"/two-factor", "Accept", "text/html"); page.StatusCode != http.StatusFound || !strings.Contains(page.Header.Get("Location"), "error=SecondFactor") {
		t.Fatalf("challenge page without a pending sign-in: %d %s", page.StatusCode, page.Header.Get("Location"))
	}
	// Another browser's pending token is not this browser's.
	thief := m.browser()
	res = thief.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now())})
	if res.StatusCode != http.StatusUnauthorized || thief.signedIn() {
		t.Fatalf("no pending cookie: %d %s", res.StatusCode, res.body)
	}
}

// TestTwoFactorEmailCode signs in with a code mailed as the second factor.
func TestTwoFactorEmailCode(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	b := m.browser()
	b.signIn()
	if res := b.postJSON("/two-factor/email/add", map[string]string{}); res.StatusCode != 200 {
		t.Fatalf("email/add: %d %s", res.StatusCode, res.body)
	}
	c := m.browser()
	if res := c.signIn(); !strings.Contains(res.body, `"email"`) {
		t.Fatalf("sign-in: %s", res.body)
	}
	before := m.mailCount()
	if res := c.postJSON("/two-factor/email", map[string]string{}); res.StatusCode != 200 {
		t.Fatalf("two-factor/email: %d %s", res.StatusCode, res.body)
	}
	code := m.lastCode(t, before)
	if res := c.postJSON("/two-factor/verify", map[string]string{"type": "email", "code": code}); res.StatusCode != 200 || !c.signedIn() {
		t.Fatalf("email code: %d %s", res.StatusCode, res.body)
	}
}

func (m *mfa) mailCount() int {
	m.a.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mails)
}

// lastCode is the code of the last mail after the first n.
func (m *mfa) lastCode(t *testing.T, n int) string {
	t.Helper()
	m.a.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.mails) - 1; i >= n; i-- {
		if m.mails[i].Code != "" && m.mails[i].Identifier == mfaEmail {
			return m.mails[i].Code
		}
	}
	t.Fatal("no code mailed")
	return ""
}

func TestTwoFactorTrustedDevice(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	key, _ := m.enrolled()
	m.nextStep()
	b := m.browser()
	b.signIn()
	res := b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now()), "trustDevice": "true"})
	tc := setCookie(res, "authport.trusted-device")
	if res.StatusCode != 200 || tc == nil || !tc.HttpOnly || tc.SameSite != http.SameSiteLaxMode || tc.MaxAge != int(24*time.Hour/time.Second) {
		t.Fatalf("trust (the cookie lasts as long as SecondFactorOptions.TrustDevice, 24h): %d %+v", res.StatusCode, tc)
	}
	// Signed out, the trusted browser signs in with the password alone.
	b.postJSON("/signout", map[string]string{})
	if res := b.signIn(); strings.Contains(res.body, "twoFactorRequired") || !b.signedIn() {
		t.Fatalf("trusted browser asked again: %s", res.body)
	}
	// Another browser is still asked.
	if res := m.browser().signIn(); !strings.Contains(res.body, "twoFactorRequired") {
		t.Fatalf("untrusted browser: %s", res.body)
	}
	// Signing out everywhere ends the trust.
	if res := b.postJSON("/sessions/revoke-all", map[string]string{}); res.StatusCode != 200 {
		t.Fatalf("revoke-all: %d %s", res.StatusCode, res.body)
	}
	if res := b.signIn(); !strings.Contains(res.body, "twoFactorRequired") {
		t.Fatalf("trust outlived the sessions: %s", res.body)
	}
}

func TestTwoFactorRemove(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	_, recovery := m.enrolled()
	infos := m.factors()
	if len(infos) == 0 {
		t.Fatal("no factor enrolled")
	}
	// Another user, signed in, cannot remove the first user's factor.
	ctx := context.Background()
	eve, err := m.store.CreateUser(ctx, core.User{ID: "user-eve", Email: "eve@example.com", EmailVerified: ptr(m.clock.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.a.Passwords().Set(ctx, eve.ID, mfaPassword); err != nil {
		t.Fatal(err)
	}
	e := m.browser()
	if res := e.postJSON("/password/signin", map[string]string{"email": "eve@example.com", "password": mfaPassword}); res.StatusCode != 200 {
		t.Fatalf("eve: %d %s", res.StatusCode, res.body)
	}
	for _, f := range infos {
		res := e.postJSON("/two-factor/remove", map[string]string{"id": f.ID})
		if res.StatusCode == 200 && strings.Contains(res.body, `"removed":true`) {
			// Remove may answer as for an unknown id; what counts is
			// that the factor is still there.
			t.Logf("remove of another user's factor answered %s", res.body)
		}
	}
	if got := m.factors(); len(got) != len(infos) {
		t.Fatalf("another user removed factors: %+v → %+v", infos, got)
	}
	// The user removes their own, signed in with a recovery code.
	b := m.browser()
	b.signIn()
	if res := b.postJSON("/two-factor/verify", map[string]string{"type": "recovery", "code": recovery[1]}); res.StatusCode != 200 {
		t.Fatalf("recovery: %d %s", res.StatusCode, res.body)
	}
	for _, f := range infos {
		if f.Type != core.FactorTOTP {
			continue
		}
		if res := b.postJSON("/two-factor/remove", map[string]string{"id": f.ID}); res.StatusCode != 200 || !strings.Contains(res.body, `"removed":true`) {
			t.Fatalf("remove: %d %s", res.StatusCode, res.body)
		}
	}
	for _, f := range m.factors() {
		if f.Type == core.FactorTOTP {
			t.Fatalf("TOTP still there: %+v", f)
		}
	}
}

// TestTwoFactorCSRF posts every state-changing second-factor and step-up
// route without the CSRF token: each refuses, and nothing changes.
func TestTwoFactorCSRF(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	key, _ := m.enrolled()
	b := m.browser()
	b.signIn() // pending
	before := len(m.factors())
	mails := m.mailCount()
	for _, path := range []string{
		"/two-factor/verify", "/two-factor/email", "/two-factor/passkey/options", "/two-factor/passkey", "/two-factor/enroll", "/two-factor/enroll/confirm",
		"/two-factor/totp/start", "/two-factor/totp/confirm", "/two-factor/recovery-codes", "/two-factor/email/add", "/two-factor/passkey/add",
		"/two-factor/remove", "/two-factor/devices/revoke", "/reauth", "/reauth/email", "/reauth/passkey/options", "/reauth/passkey",
	} {
		for _, token := range []string{"", "forged"} {
			res := b.postJSON(path, map[string]string{"csrfToken": token, "type": "totp", "code": totpCode(t, key, m.clock.Now()), "id": "x"})
			if res.StatusCode != http.StatusForbidden || !strings.Contains(res.body, "MissingCSRF") {
				t.Errorf("%s with csrfToken %q: %d %s", path, token, res.StatusCode, res.body)
			}
		}
	}
	if b.signedIn() || len(m.factors()) != before || m.mailCount() != mails {
		t.Fatal("a POST without its CSRF token changed something")
	}
}

func TestStepUp(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			m := newMFA(t, strategy, nil)
			b := m.browser()
			if res := b.get(m.srv.URL+"/sensitive", "Accept", "text/html"); res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "/signin") {
				t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
			}
			b.signIn()
			if res := b.get(m.srv.URL + "/sensitive"); res.StatusCode != 200 || !strings.Contains(res.body, `"pwd"`) {
				t.Fatalf("fresh: %d %s", res.StatusCode, res.body)
			}
			m.clock.Add(handler.DefaultFactorFreshness + time.Minute)
			res := b.get(m.srv.URL+"/sensitive?x=1", "Accept", "text/html")
			if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != m.base+"/reauth?callbackUrl="+url.QueryEscape("/sensitive?x=1") {
				t.Fatalf("stale browser: %d %s", res.StatusCode, loc)
			}
			res = b.get(m.srv.URL+"/sensitive", "Accept", "application/json")
			if wa := res.Header.Get("WWW-Authenticate"); res.StatusCode != http.StatusUnauthorized || !strings.Contains(wa, `error="insufficient_user_authentication"`) || !strings.Contains(wa, "max_age=300") {
				t.Fatalf("stale API: %d %q", res.StatusCode, wa)
			}
			// Changing factors needs a fresh session too.
			if res := b.postJSON("/two-factor/totp/start", map[string]string{}); res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), "insufficient_user_authentication") {
				t.Fatalf("stale enrolment: %d %s", res.StatusCode, res.body)
			}
			// The re-authentication page, then the password.
			page := b.get(m.base+"/reauth?callbackUrl=%2Fsensitive", "Accept", "text/html")
			if page.StatusCode != 200 || !strings.Contains(page.body, `name="password"`) {
				t.Fatalf("reauth page: %d %s", page.StatusCode, page.body)
			}
			if res := b.postJSON("/reauth", map[string]string{"password": "wrong password"}); res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("wrong password: %d %s", res.StatusCode, res.body)
			}
			res = b.postForm("/reauth", map[string]string{"password": mfaPassword, "callbackUrl": "/sensitive"})
			if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != m.srv.URL+"/sensitive" || setCookie(res, "authjs.session-token") == nil {
				t.Fatalf("reauth: %d %s", res.StatusCode, loc)
			}
			if res := b.get(m.srv.URL + "/sensitive"); res.StatusCode != 200 {
				t.Fatalf("fresh again: %d %s", res.StatusCode, res.body)
			}
		})
	}
}

// TestStepUpWithoutSecondFactors: without second factors there is no
// /reauth, so RequireFresh sends a stale browser session to the sign-in
// page, and signing in again there makes the session fresh.
func TestStepUpWithoutSecondFactors(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, func(o *auth.SecondFactorOptions) { *o = auth.SecondFactorOptions{} })
	b := m.browser()
	b.signIn()
	m.clock.Add(handler.DefaultFactorFreshness + time.Minute)
	res := b.get(m.srv.URL+"/sensitive?x=1", "Accept", "text/html")
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != m.base+"/signin?callbackUrl="+url.QueryEscape("/sensitive?x=1") {
		t.Fatalf("stale browser: %d %s", res.StatusCode, loc)
	}
	if res := b.get(m.base + "/reauth"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("/reauth without second factors: %d", res.StatusCode)
	}
	b.signIn()
	if res := b.get(m.srv.URL + "/sensitive"); res.StatusCode != 200 {
		t.Fatalf("signed in again: %d %s", res.StatusCode, res.body)
	}
}

// FuzzTwoFactorRoutes posts arbitrary answers and pending tokens to the
// second-factor routes of a user with TOTP: none panics, answers 5xx,
// redirects off the site or makes a session.
func FuzzTwoFactorRoutes(f *testing.F) {
	hasher, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		f.Fatal(err)
	}
	store := memoryStore()
	pc := provider.Password("auth@example.com", func(context.Context, provider.VerificationRequest) error { return nil })
	pc.Hasher = hasher
	a, err := auth.New(auth.Config{Adapter: store, Providers: []provider.Provider{pc}, Secrets: []string{secret}, BaseURL: "http://app.example/auth",
		SecondFactors: auth.SecondFactorOptions{Enabled: true, TOTP: rfc6238{}, EmailCode: true}})
	if err != nil {
		f.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if _, err := store.CreateUser(ctx, core.User{ID: "user-grace", Email: mfaEmail, EmailVerified: ptr(time.Now())}); err != nil {
		f.Fatal(err)
	}
	if err := a.Passwords().Set(ctx, "user-grace", mfaPassword); err != nil {
		f.Fatal(err)
	}
	e, err := a.Factors().StartTOTP(ctx, "user-grace", "", "phone")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := a.Factors().ConfirmTOTP(ctx, "user-grace", e.Token, totpCode(f, e.Key.Text, time.Now())); err != nil {
		f.Fatal(err)
	}
	si, err := a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: mfaEmail, Password: mfaPassword})
	if err != nil || si.Pending == nil {
		f.Fatalf("sign-in: %+v %v", si, err)
	}
	real := si.Pending.Token
	f.Add("verify", real, "totp", "000000")
	f.Add("verify", real, "recovery", "aaaa-bbbb")
	f.Add("verify", real[:len(real)/2], "totp", "123456")
	f.Add("verify", "x", "email", "１２３４５６")
	f.Add("enroll/confirm", real, "totp", "\x00\x00\x00\x00\x00\x00")
	f.Add("email", real+"A", "", "")
	f.Add("passkey", real, "", "{}")
	f.Add("enroll", "", "", "")
	f.Fuzz(func(t *testing.T, action, pending, typ, code string) {
		form := url.Values{"csrfToken": {"tok"}, "type": {typ}, "code": {code}, "enrollment": {code}, "trustDevice": {"1"}, "data": {code},
			"callbackUrl": {"//evil.example"}}
		u, err := url.Parse("/auth/two-factor/" + action)
		if err != nil {
			return
		}
		cookie := "authjs.csrf-token=tok|" + csrfHashOf("tok") + "; authport.pending=" + url.QueryEscape(pending)
		w := serveFuzzed(h, http.MethodPost, u, u.String(), form.Encode(), cookie)
		if w.Code >= 500 {
			t.Fatalf("%s: %d %s", action, w.Code, w.Body)
		}
		if loc := w.Header().Get("Location"); loc != "" && !strings.HasPrefix(loc, "http://app.example/") {
			t.Fatalf("%s redirected to %q", action, loc)
		}
		for _, c := range w.Result().Cookies() {
			if strings.HasPrefix(c.Name, "authjs.session-token") && c.Value != "" {
				t.Fatalf("%s made a session", action)
			}
		}
	})
}

// TestTwoFactorRequiredEnrolment: with second factors required, a user
// without one enrols TOTP to finish signing in.
func TestTwoFactorRequiredEnrolment(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, func(o *auth.SecondFactorOptions) { o.Required, o.EmailCode = true, false })
	b := m.browser()
	res := b.signIn()
	if !strings.Contains(res.body, `"enroll":true`) || b.signedIn() {
		t.Fatalf("sign-in without a factor: %d %s", res.StatusCode, res.body)
	}
	if page := b.get(m.base+"/two-factor", "Accept", "text/html"); !strings.Contains(page.body, "/two-factor/enroll") {
		t.Fatalf("challenge page: %s", page.body)
	}
	res = b.postJSON("/two-factor/enroll", map[string]string{})
	var start struct{ Secret, Enrollment string }
	if json.Unmarshal([]byte(res.body), &start) != nil || res.StatusCode != 200 || start.Enrollment == "" {
		t.Fatalf("enroll: %d %s", res.StatusCode, res.body)
	}
	if res := b.postJSON("/two-factor/enroll/confirm", map[string]string{"enrollment": start.Enrollment, "code": totpCode(t, start.Secret, m.clock.Now().Add(time.Hour))}); res.StatusCode != http.StatusUnauthorized || b.signedIn() {
		t.Fatalf("wrong enrolment code: %d %s", res.StatusCode, res.body)
	}
	res = b.postJSON("/two-factor/enroll/confirm", map[string]string{"enrollment": start.Enrollment, "code": totpCode(t, start.Secret, m.clock.Now())})
	var done struct {
		URL           string
		RecoveryCodes []string
	}
	if json.Unmarshal([]byte(res.body), &done) != nil || res.StatusCode != 200 || !b.signedIn() || done.URL == "" {
		t.Fatalf("enrolment code: %d %s", res.StatusCode, res.body)
	}
	if !slicesContainsType(m.factors(), core.FactorTOTP) {
		t.Fatal("the enrolment stored no TOTP factor")
	}
	// The recovery codes made with the factor are answered, and work.
	if len(done.RecoveryCodes) != 10 {
		t.Fatalf("the enrolling sign-in answered %d recovery codes: %s", len(done.RecoveryCodes), res.body)
	}
	c := m.browser()
	c.signIn()
	if res := c.postJSON("/two-factor/verify", map[string]string{"type": "recovery", "code": done.RecoveryCodes[3]}); res.StatusCode != 200 || !c.signedIn() {
		t.Fatalf("a recovery code of the enrolment: %d %s", res.StatusCode, res.body)
	}
}

// TestTwoFactorRequiredEnrolmentPage: a browser that enrols to finish
// signing in sees the recovery codes once, signed in, with a link on to
// its callbackUrl.
func TestTwoFactorRequiredEnrolmentPage(t *testing.T) {
	m := newMFA(t, auth.StrategyJWT, func(o *auth.SecondFactorOptions) { o.Required, o.EmailCode = true, false })
	b := m.browser()
	res := b.postForm("/callback/password", map[string]string{"email": mfaEmail, "password": mfaPassword, "callbackUrl": "/dashboard"})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, m.base+"/two-factor?") {
		t.Fatalf("form sign-in: %d %s", res.StatusCode, loc)
	}
	res = b.postJSON("/two-factor/enroll", map[string]string{})
	var start struct{ Secret, Enrollment string }
	if json.Unmarshal([]byte(res.body), &start) != nil || res.StatusCode != 200 {
		t.Fatalf("enroll: %d %s", res.StatusCode, res.body)
	}
	res = b.postForm("/two-factor/enroll/confirm", map[string]string{"enrollment": start.Enrollment, "code": totpCode(t, start.Secret, m.clock.Now())})
	if res.StatusCode != 200 || !b.signedIn() || !strings.Contains(res.body, "data-authport-recovery-codes") {
		t.Fatalf("enrolment confirmed from a form: %d %s", res.StatusCode, res.body)
	}
	if n := strings.Count(res.body, "<li>"); n != 10 {
		t.Fatalf("the page shows %d recovery codes: %s", n, res.body)
	}
	if want := `href="` + m.srv.URL + `/dashboard"`; !strings.Contains(res.body, want) {
		t.Fatalf("the page does not go on to the callbackUrl (%s): %s", want, res.body)
	}
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Fatalf("the recovery codes page may be stored: Cache-Control %q", cc)
	}
}

func slicesContainsType(infos []auth.FactorInfo, t core.FactorType) bool {
	for _, f := range infos {
		if f.Type == t {
			return true
		}
	}
	return false
}

// TestTwoFactorUserAttemptBudget: right answers do not spend the user's
// attempt budget (a user signs in more often than the cap within
// PendingMaxAge), while wrong answers spread over several pending
// sign-ins do, after which even the right answer is refused, unchecked
// (the recovery code offered then is not used up).
func TestTwoFactorUserAttemptBudget(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	key, recovery := m.enrolled()
	for i := range 2*auth.DefaultFactorAttempts + 1 {
		m.nextStep()
		b := m.browser()
		if res := b.signIn(); !strings.Contains(res.body, "twoFactorRequired") {
			t.Fatalf("sign-in %d: %d %s", i, res.StatusCode, res.body)
		}
		if res := b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now())}); res.StatusCode != 200 || !b.signedIn() {
			t.Fatalf("right answer %d refused: %d %s", i, res.StatusCode, res.body)
		}
	}
	// One wrong answer in each of Attempts pending sign-ins (each far
	// from its own cap) spends the user's budget.
	m.nextStep()
	wrong := totpCode(t, key, m.clock.Now().Add(-time.Hour))
	for i := range auth.DefaultFactorAttempts {
		b := m.browser()
		b.signIn()
		if res := b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": wrong}); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong answer %d: %d %s", i, res.StatusCode, res.body)
		}
	}
	remaining := func() int {
		for _, f := range m.factors() {
			if f.Type == core.FactorRecoveryCodes {
				return f.Remaining
			}
		}
		return 0
	}
	before := remaining()
	b := m.browser()
	b.signIn()
	for _, answer := range []map[string]string{{"type": "totp", "code": totpCode(t, key, m.clock.Now())}, {"type": "recovery", "code": recovery[0]}} {
		if res := b.postJSON("/two-factor/verify", answer); res.StatusCode != http.StatusUnauthorized || b.signedIn() {
			t.Fatalf("%s answer over the user's budget: %d %s", answer["type"], res.StatusCode, res.body)
		}
	}
	if after := remaining(); after != before {
		t.Fatalf("an answer refused for the budget used a recovery code: %d → %d", before, after)
	}
}

// TestTwoFactorTrustOff: with SecondFactorOptions.TrustDevice zero, the
// challenge and enrolment pages offer no "trust this browser", and asking
// for it anyway sets no cookie; with it set, they offer it.
func TestTwoFactorTrustOff(t *testing.T) {
	const checkbox = `name="trustDevice"`
	on := newMFA(t, auth.StrategyDatabase, nil)
	on.enrolled()
	b := on.browser()
	b.signIn()
	if page := b.get(on.base+"/two-factor", "Accept", "text/html"); page.StatusCode != 200 || !strings.Contains(page.body, checkbox) {
		t.Fatalf("challenge page with TrustDevice set: %d %s", page.StatusCode, page.body)
	}

	m := newMFA(t, auth.StrategyDatabase, func(o *auth.SecondFactorOptions) { o.TrustDevice = 0 })
	key, _ := m.enrolled()
	m.nextStep()
	b = m.browser()
	b.signIn()
	if page := b.get(m.base+"/two-factor", "Accept", "text/html"); page.StatusCode != 200 || !strings.Contains(page.body, `name="code"`) || strings.Contains(page.body, checkbox) {
		t.Fatalf("challenge page with TrustDevice zero: %d %s", page.StatusCode, page.body)
	}
	res := b.postJSON("/two-factor/verify", map[string]string{"type": "totp", "code": totpCode(t, key, m.clock.Now()), "trustDevice": "true"})
	if res.StatusCode != 200 || !b.signedIn() || setCookie(res, "authport.trusted-device") != nil {
		t.Fatalf("verify asking for trust with TrustDevice zero: %d %s", res.StatusCode, res.Header.Values("Set-Cookie"))
	}

	req := newMFA(t, auth.StrategyDatabase, func(o *auth.SecondFactorOptions) { o.TrustDevice, o.Required, o.EmailCode = 0, true, false })
	b = req.browser()
	b.signIn()
	res = b.postForm("/two-factor/enroll", map[string]string{})
	if res.StatusCode != 200 || !strings.Contains(res.body, `name="enrollment"`) || strings.Contains(res.body, checkbox) {
		t.Fatalf("enrolment page with TrustDevice zero: %d %s", res.StatusCode, res.body)
	}
}

// TestSecondFactorRoutesOff: with second factors off, their routes answer
// 404, though the adapter (memory) keeps factors.
func TestSecondFactorRoutesOff(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, func(o *auth.SecondFactorOptions) { *o = auth.SecondFactorOptions{} })
	b := m.browser()
	if res := b.signIn(); res.StatusCode != 200 || !b.signedIn() {
		t.Fatalf("sign-in: %d %s", res.StatusCode, res.body)
	}
	for _, path := range []string{"/two-factor", "/account/security", "/reauth"} {
		if res := b.get(m.base+path, "Accept", "text/html"); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
	for _, path := range []string{"/two-factor/verify", "/two-factor/totp/start", "/two-factor/recovery-codes", "/reauth"} {
		if res := b.postJSON(path, map[string]string{"code": "123456", "password": mfaPassword}); res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d %s, want 404", path, res.StatusCode, res.body)
		}
	}
}

// TestTwoFactorPasskeyUsedPending: a pending sign-in answered with a
// passkey cannot be answered again. auth.Factors.PasskeyCredentials only
// opens the token (it still lists the credential, as documented), but
// the assertion is refused, makes no session, and does not record a use
// of the factor.
func TestTwoFactorPasskeyUsedPending(t *testing.T) {
	m := newMFA(t, auth.StrategyDatabase, nil)
	ctx := context.Background()
	uid := m.userID()
	if _, err := m.store.LinkAccount(ctx, core.Account{UserID: uid, Provider: "passkey", Type: core.AccountTypeWebAuthn, ProviderAccountID: "cred-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.store.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "cred-1", UserID: uid,
		ProviderAccountID: "cred-1", CredentialPublicKey: "pk", CredentialDeviceType: "singleDevice", Transports: ptr("internal")}); err != nil {
		t.Fatal(err)
	}
	f := m.a.Factors()
	if _, err := f.AddPasskey(ctx, uid, "cred-1", "key"); err != nil {
		t.Fatal(err)
	}
	step := func() int64 {
		t.Helper()
		factors, err := m.store.ListFactorsByUserID(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		for _, fa := range factors {
			if fa.Type == core.FactorPasskey {
				return fa.Step
			}
		}
		t.Fatal("no passkey factor")
		return 0
	}
	si, err := m.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: mfaEmail, Password: mfaPassword})
	if err != nil || si.Pending == nil || !slices.Contains(si.Pending.Factors, core.FactorPasskey) {
		t.Fatalf("sign-in: %+v %v", si, err)
	}
	token := si.Pending.Token
	done, err := f.VerifyPasskey(ctx, token, "cred-1", 1, true, false)
	if err != nil || done.Session.SessionToken == "" {
		t.Fatalf("VerifyPasskey: %+v %v", done, err)
	}
	used := step()
	if used == 0 {
		t.Fatal("the passkey factor's use was not counted")
	}
	if creds, err := f.PasskeyCredentials(ctx, "", token); err != nil || len(creds) != 1 {
		t.Fatalf("PasskeyCredentials of the used token: %v %v", creds, err)
	}
	again, err := f.VerifyPasskey(ctx, token, "cred-1", 2, true, false)
	if auth.CodeOf(err) != auth.CodeSecondFactor || again != nil {
		t.Fatalf("VerifyPasskey with a used pending token: %+v %v", again, err)
	}
	if got := step(); got != used {
		t.Fatalf("a refused answer recorded a use of the factor: step %d → %d", used, got)
	}
}
