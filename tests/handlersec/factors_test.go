package handlersec

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/passkey"
)

// The passkey module's passkeys are the handler's passkey second factor.
var _ handler.FactorPasskeys = (*passkey.Passkeys)(nil)

// otpTOTP is auth.TOTP over github.com/pquerna/otp (SHA-1, six digits,
// 30-second steps, one step of skew either way).
type otpTOTP struct{}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func (otpTOTP) NewKey(issuer, account string) (auth.TOTPKey, error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account})
	if err != nil {
		return auth.TOTPKey{}, err
	}
	secret, err := b32.DecodeString(strings.ToUpper(k.Secret()))
	if err != nil {
		return auth.TOTPKey{}, err
	}
	img, err := k.Image(200, 200)
	if err != nil {
		return auth.TOTPKey{}, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return auth.TOTPKey{}, err
	}
	return auth.TOTPKey{Secret: secret, Text: k.Secret(), URI: k.URL(), QRCode: buf.Bytes()}, nil
}

func (otpTOTP) Match(key []byte, code string, now time.Time) (int64, bool) {
	text := b32.EncodeToString(key)
	for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		at := now.Add(d)
		want, err := totp.GenerateCodeCustom(text, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return at.Unix() / 30, true
		}
	}
	return 0, false
}

// code is the TOTP code of the key text at now.
func code(t *testing.T, key string, now time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(key, now)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nextStep moves the clock to the start of the next TOTP step.
func nextStep(clock *coretest.Clock) {
	clock.Set(time.Unix((clock.Now().Unix()/30+1)*30, 0).UTC())
}

// TestFactorRoutes runs second factors and step-up through the handler's
// routes on each store, with database and JWT sessions: enrolment (a
// wrong code stores nothing), the challenge after a password and after an
// e-mail code sign-in, a replayed TOTP code refused, a recovery code
// used once, another user's factor not removable, trusted devices (and
// their end), a stale session sent to re-authenticate (RFC 9470 for an
// API) and fresh after /reauth, and CSRF on the POSTs.
func TestFactorRoutes(t *testing.T) {
	for _, st := range testStores {
		for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
			t.Run(st.name+"/"+string(strategy), func(t *testing.T) {
				store := st.open(t)
				caps := core.Probe(store)
				for _, m := range core.FactorMethods() {
					if !caps.HasExtension(core.Extension(m)) {
						t.Fatalf("%s does not implement %s", caps.Adapter(), m)
					}
				}
				clock := coretest.NewClock(time.Now().UTC().Truncate(time.Second))
				app := &pwApp{t: t, srv: httptest.NewServer(nil)}
				t.Cleanup(app.srv.Close)
				hasher, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
				if err != nil {
					t.Fatal(err)
				}
				pc := provider.Password("auth@example.com", app.send)
				pc.Codes, pc.Hasher = true, hasher
				ec := provider.Email("auth@example.com", app.send)
				ec.Codes = true
				a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: app.srv.URL + "/auth", Now: clock.Now,
					Session:       auth.SessionOptions{Strategy: strategy},
					Providers:     []provider.Provider{pc, ec},
					SecondFactors: auth.SecondFactorOptions{Enabled: true, TOTP: otpTOTP{}, EmailCode: true, TrustDevice: 24 * time.Hour}})
				if err != nil {
					t.Fatal(err)
				}
				app.a = a
				h, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
				if err != nil {
					t.Fatal(err)
				}
				mux := http.NewServeMux()
				mux.Handle("/auth/", h)
				mux.Handle("/sensitive", h.RequireFresh(auth.StepUp{MaxAge: 5 * time.Minute})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = w.Write([]byte("sensitive"))
				})))
				app.srv.Config.Handler = mux
				app.newBrowser()

				ctx := context.Background()
				suffix := randomName(t)
				const pw = "correct horse battery"
				user := core.User{ID: core.NewUUID(), Email: "grace-" + suffix + "@example.com", EmailVerified: ptr(clock.Now())}
				eve := core.User{ID: core.NewUUID(), Email: "eve-" + suffix + "@example.com", EmailVerified: ptr(clock.Now())}
				for _, u := range []core.User{user, eve} {
					if _, err := store.CreateUser(ctx, u); err != nil {
						t.Fatal(err)
					}
					if err := a.Passwords().Set(ctx, u.ID, pw); err != nil {
						t.Fatal(err)
					}
				}
				signIn := func(email string) answer {
					return app.postJSON("/auth/password/signin", map[string]string{"email": email, "password": pw})
				}
				list := func() []auth.FactorInfo {
					t.Helper()
					infos, err := a.Factors().List(ctx, user.ID)
					if err != nil {
						t.Fatal(err)
					}
					return infos
				}

				// Enrolment: a wrong code stores nothing; the right one
				// enrols TOTP with ten recovery codes.
				if res := signIn(user.Email); res.status != 200 || app.session() != user.Email {
					t.Fatalf("sign-in without factors: %+v", res)
				}
				res := app.postJSON("/auth/two-factor/totp/start", map[string]string{"name": "phone"})
				var start struct{ Secret, QRCode, Enrollment string }
				if json.Unmarshal([]byte(res.body), &start) != nil || res.status != 200 || start.Secret == "" || !strings.HasPrefix(start.QRCode, "data:image/png;base64,") {
					t.Fatalf("totp/start: %+v", res)
				}
				if res := app.postJSON("/auth/two-factor/totp/confirm", map[string]string{"enrollment": start.Enrollment, "code": code(t, start.Secret, clock.Now().Add(time.Hour))}); res.status != http.StatusUnauthorized {
					t.Fatalf("a wrong confirmation code: %+v", res)
				}
				if got := list(); len(got) != 0 {
					t.Fatalf("a refused confirmation stored %+v", got)
				}
				res = app.postJSON("/auth/two-factor/totp/confirm", map[string]string{"enrollment": start.Enrollment, "code": code(t, start.Secret, clock.Now())})
				var enrolled struct{ RecoveryCodes []string }
				if json.Unmarshal([]byte(res.body), &enrolled) != nil || res.status != 200 || len(enrolled.RecoveryCodes) != 10 {
					t.Fatalf("totp/confirm: %+v", res)
				}
				nextStep(clock)

				// The challenge after a password sign-in; a replayed code
				// is refused in another browser.
				app.newBrowser()
				res = signIn(user.Email)
				if res.status != 200 || !strings.Contains(res.body, `"twoFactorRequired":true`) || app.session() != "" {
					t.Fatalf("password sign-in with TOTP: %+v, session %q", res, app.session())
				}
				c := code(t, start.Secret, clock.Now())
				if res := app.postJSON("/auth/two-factor/verify", map[string]string{"type": "totp", "code": c}); res.status != 200 || app.session() != user.Email {
					t.Fatalf("verify: %+v", res)
				}
				app.newBrowser()
				signIn(user.Email)
				if res := app.postJSON("/auth/two-factor/verify", map[string]string{"type": "totp", "code": c}); res.status != http.StatusUnauthorized || app.session() != "" {
					t.Fatalf("a replayed code: %+v", res)
				}
				// A recovery code, once.
				if res := app.postJSON("/auth/two-factor/verify", map[string]string{"type": "recovery", "code": enrolled.RecoveryCodes[0]}); res.status != 200 || app.session() != user.Email {
					t.Fatalf("recovery code: %+v", res)
				}
				app.newBrowser()
				signIn(user.Email)
				if res := app.postJSON("/auth/two-factor/verify", map[string]string{"type": "recovery", "code": enrolled.RecoveryCodes[0]}); res.status != http.StatusUnauthorized || app.session() != "" {
					t.Fatalf("a recovery code twice: %+v", res)
				}

				// The challenge after an e-mail code sign-in.
				app.newBrowser()
				if res := app.postJSON("/auth/email-code/email", map[string]string{"email": user.Email}); res.status != 200 {
					t.Fatalf("email-code: %+v", res)
				}
				mail := app.mail(user.Email, provider.PurposeSignIn)
				res = app.postJSON("/auth/email-code-verify/email", map[string]string{"email": user.Email, "code": mail.Code})
				if !strings.Contains(res.body, `"twoFactorRequired":true`) || app.session() != "" {
					t.Fatalf("e-mail code sign-in with TOTP: %+v", res)
				}
				nextStep(clock)
				if res := app.postJSON("/auth/two-factor/verify", map[string]string{"type": "totp", "code": code(t, start.Secret, clock.Now()), "trustDevice": "true"}); res.status != 200 || app.session() != user.Email {
					t.Fatalf("verify after an e-mail code: %+v", res)
				}
				trusted := app.client

				// A trusted browser skips the second factor, until the
				// trust ends.
				app.postJSON("/auth/signout", map[string]string{})
				if res := signIn(user.Email); strings.Contains(res.body, "twoFactorRequired") || app.session() != user.Email {
					t.Fatalf("the trusted browser was asked again: %+v", res)
				}
				if strategy == auth.StrategyDatabase {
					if res := app.postJSON("/auth/sessions/revoke-all", map[string]string{}); res.status != 200 {
						t.Fatalf("revoke-all: %+v", res)
					}
				} else if n, err := a.Factors().RevokeTrustedDevices(ctx, user.ID); err != nil || n != 1 {
					t.Fatalf("RevokeTrustedDevices: %d %v", n, err)
				}
				app.client = trusted
				if res := signIn(user.Email); !strings.Contains(res.body, "twoFactorRequired") {
					t.Fatalf("the trust outlived its end: %+v", res)
				}

				// Another user cannot remove the user's factors.
				before := list()
				app.newBrowser()
				if res := signIn(eve.Email); res.status != 200 || app.session() != eve.Email {
					t.Fatalf("eve: %+v", res)
				}
				for _, f := range before {
					app.postJSON("/auth/two-factor/remove", map[string]string{"id": f.ID})
				}
				if after := list(); len(after) != len(before) {
					t.Fatalf("another user removed factors: %d → %d", len(before), len(after))
				}
				// CSRF on the POSTs.
				for _, path := range []string{"/auth/two-factor/remove", "/auth/two-factor/totp/start", "/auth/two-factor/recovery-codes", "/auth/reauth", "/auth/two-factor/verify"} {
					b, _ := json.Marshal(map[string]string{"id": before[0].ID, "password": pw})
					res := app.read(app.client.Post(app.srv.URL+path, "application/json", bytes.NewReader(b)))
					if res.status != http.StatusForbidden {
						t.Errorf("%s without a CSRF token: %+v", path, res)
					}
				}

				// Step-up: fresh, stale (browser and API), fresh again
				// after /reauth.
				if res := app.read(app.client.Get(app.srv.URL + "/sensitive")); res.status != 200 {
					t.Fatalf("fresh: %+v", res)
				}
				clock.Add(6 * time.Minute)
				req, _ := http.NewRequest("GET", app.srv.URL+"/sensitive", nil)
				req.Header.Set("Accept", "text/html")
				if res := app.read(app.client.Do(req)); res.status != http.StatusSeeOther || res.location != app.srv.URL+"/auth/reauth?callbackUrl="+url.QueryEscape("/sensitive") {
					t.Fatalf("stale browser: %+v", res)
				}
				req, _ = http.NewRequest("GET", app.srv.URL+"/sensitive", nil)
				req.Header.Set("Accept", "application/json")
				apiRes, err := app.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				apiRes.Body.Close()
				if wa := apiRes.Header.Get("WWW-Authenticate"); apiRes.StatusCode != http.StatusUnauthorized || !strings.Contains(wa, `error="insufficient_user_authentication"`) || !strings.Contains(wa, "max_age=300") {
					t.Fatalf("stale API: %d %q", apiRes.StatusCode, wa)
				}
				if res := app.postJSON("/auth/reauth", map[string]string{"password": pw}); res.status != 200 {
					t.Fatalf("reauth: %+v", res)
				}
				if res := app.read(app.client.Get(app.srv.URL + "/sensitive")); res.status != 200 {
					t.Fatalf("fresh after reauth: %+v", res)
				}
			})
		}
	}
}

func ptr[T any](v T) *T { return &v }
