package handlersec

// A security review of second factors and step-up, from outside: each
// test is an attack that must fail. They drive core/auth directly over
// the memory adapter (the fixture of factors_core_test.go), or the
// handler's routes over the memory adapter.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
	"github.com/authport/authport/handler"
)

// factorTypesOf are the types of the user's factors.
func factorTypesOf(t *testing.T, a *auth.Auth, userID string) []core.FactorType {
	t.Helper()
	infos, err := a.Factors().List(fctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.FactorType
	for _, fi := range infos {
		out = append(out, fi.Type)
	}
	return out
}

// TestReviewPendingEnrolmentBypassesTheSecondFactor: a user has TOTP. An
// attacker who knows only the password signs in (a pending sign-in that
// asks for the TOTP code, Enroll false), then starts a TOTP enrolment of
// their own with that pending sign-in (StartTOTP with the pending token)
// and answers it (Verify with Answer.Enrollment): a new factor, the
// attacker's, is added to the victim's account and the sign-in completes
// with amr mfa, without the victim's second factor. Enrolment through a
// pending sign-in must be refused unless the pending sign-in says Enroll.
func TestReviewPendingEnrolmentBypassesTheSecondFactor(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			f := newFactorFixture(t, strategy, auth.SecondFactorOptions{Attempts: 20})
			uid := f.signUp("ada@example.com")
			f.enrol(uid)
			before := factorTypesOf(t, f.a, uid)
			f.clock.Add(30 * time.Second)

			// The attacker: the password only.
			p := f.signIn(fctx, f.a, "ada@example.com").Pending
			if p == nil || p.Enroll {
				t.Fatalf("pending %+v, want one that does not enrol", p)
			}
			e, err := f.a.Factors().StartTOTP(fctx, "", p.Token, "attacker")
			if err == nil {
				done, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Enrollment: e.Token, Code: f.code(e.Key.Secret)})
				if err == nil {
					t.Errorf("signed in as the victim with a TOTP key the attacker enrolled through the pending sign-in: amr %v, level %s, session %v, recovery codes %d",
						done.Authentication.Methods, done.Authentication.Level, done.Session.SessionToken != "" || done.Claims != nil, len(done.RecoveryCodes))
				}
			}
			if after := factorTypesOf(t, f.a, uid); len(after) != len(before) {
				t.Errorf("the victim's factors changed from %v to %v through a pending sign-in that did not enrol", before, after)
			}
		})
	}
}

// newReviewApp is a handler over the memory adapter with password and
// e-mail code sign-in and every second factor, and a browser.
func newReviewApp(t *testing.T, strategy auth.Strategy, sf auth.SecondFactorOptions) (*pwApp, *auth.Auth, *coretest.Clock, core.Adapter) {
	t.Helper()
	store := newFactorStore()
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
	sf.Enabled = true
	if sf.TOTP == nil {
		sf.TOTP = otpTOTP{}
	}
	if sf.Attempts == 0 {
		sf.Attempts = 20
	}
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: app.srv.URL + "/auth", Now: clock.Now,
		Session: auth.SessionOptions{Strategy: strategy}, Providers: []provider.Provider{pc, ec}, SecondFactors: sf})
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
	app.srv.Config.Handler = mux
	app.newBrowser()
	return app, a, clock, store
}

const reviewPassword = "correct horse battery"

// reviewUser makes a user with a verified address and a password.
func reviewUser(t *testing.T, a *auth.Auth, store core.Adapter, clock *coretest.Clock, email string) core.User {
	t.Helper()
	u := core.User{ID: core.NewUUID(), Email: email, EmailVerified: ptr(clock.Now())}
	if _, err := store.CreateUser(fctx, u); err != nil {
		t.Fatal(err)
	}
	if err := a.Passwords().Set(fctx, u.ID, reviewPassword); err != nil {
		t.Fatal(err)
	}
	return u
}

// reviewEnrolTOTP enrols TOTP for the user directly and returns the key's
// text.
func reviewEnrolTOTP(t *testing.T, a *auth.Auth, clock *coretest.Clock, userID string) string {
	t.Helper()
	e, err := a.Factors().StartTOTP(fctx, userID, "", "Phone")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Factors().ConfirmTOTP(fctx, userID, e.Token, code(t, e.Key.Text, clock.Now())); err != nil {
		t.Fatal(err)
	}
	nextStep(clock)
	return e.Key.Text
}

// TestReviewPendingEnrolmentBypassHTTP is the attack of
// TestReviewPendingEnrolmentBypassesTheSecondFactor through the routes:
// POST /auth/password/signin with the password, POST
// /auth/two-factor/enroll, POST /auth/two-factor/enroll/confirm with a
// code of the attacker's key: the attacker is signed in as the victim.
func TestReviewPendingEnrolmentBypassHTTP(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			app, a, clock, store := newReviewApp(t, strategy, auth.SecondFactorOptions{})
			victim := reviewUser(t, a, store, clock, "victim@example.com")
			reviewEnrolTOTP(t, a, clock, victim.ID)
			before := factorTypesOf(t, a, victim.ID)

			res := app.postJSON("/auth/password/signin", map[string]string{"email": victim.Email, "password": reviewPassword})
			if !strings.Contains(res.body, `"twoFactorRequired":true`) || strings.Contains(res.body, `"enroll":true`) {
				t.Fatalf("password sign-in: %+v", res)
			}
			res = app.postJSON("/auth/two-factor/enroll", map[string]string{"name": "attacker"})
			var start struct{ Secret, Enrollment string }
			if res.status == 200 && json.Unmarshal([]byte(res.body), &start) == nil && start.Enrollment != "" {
				app.postJSON("/auth/two-factor/enroll/confirm", map[string]string{"enrollment": start.Enrollment, "code": code(t, start.Secret, clock.Now())})
			}
			if got := app.session(); got != "" {
				t.Errorf("the attacker, with the password only, is signed in as %s (enrol route answered %d)", got, res.status)
			}
			if after := factorTypesOf(t, a, victim.ID); len(after) != len(before) {
				t.Errorf("the victim's factors changed from %v to %v", before, after)
			}
		})
	}
}

// TestReviewEmailFirstFactorEmailSecondFactorIsNotMFA: a user has TOTP and
// e-mail codes as second factors. Whoever reads the mailbox signs in with
// an e-mail code (first factor: the mailbox), is offered an e-mail code
// as the second factor, reads that one from the same mailbox, and gets a
// session of level mfa (amr email+otp+mfa): one factor, the mailbox,
// counted twice, and the TOTP factor never asked. After an e-mail first
// factor the e-mail code must not be offered as the second.
func TestReviewEmailFirstFactorEmailSecondFactorIsNotMFA(t *testing.T) {
	var mu sync.Mutex
	var mails []provider.VerificationRequest
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{EmailCode: true, Attempts: 20}, func(c *auth.Config) {
		ec := provider.Email("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
			mu.Lock()
			defer mu.Unlock()
			mails = append(mails, r)
			return nil
		})
		c.Providers = append(c.Providers, ec)
	})
	uid := f.signUp("ada@example.com")
	// The address verified (the sign-up's e-mail sign-in verifies it).
	if _, err := f.store.UpdateUser(fctx, core.UserUpdate{ID: uid, EmailVerified: core.Set(ptr(f.clock.Now()))}); err != nil {
		t.Fatal(err)
	}
	f.enrol(uid)
	if _, err := f.a.Factors().AddEmail(fctx, uid); err != nil {
		t.Fatal(err)
	}
	// The attacker reads the mailbox: an e-mail link sign-in.
	req, err := f.a.StartEmailSignIn(fctx, "email", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	si, err := f.a.VerifyEmailSignIn(fctx, "email", "ada@example.com", req.Token)
	if err != nil {
		t.Fatal(err)
	}
	if si.Pending == nil {
		t.Fatalf("e-mail sign-in of a user with TOTP: no pending sign-in")
	}
	if !slices.Contains(si.Pending.Factors, core.FactorEmail) {
		return // not offered: the attack is closed
	}
	mu.Lock()
	n := len(mails)
	mu.Unlock()
	if err := f.a.Factors().SendEmailCode(fctx, si.Pending.Token); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	sent := slices.Clone(mails[n:])
	mu.Unlock()
	if len(sent) != 1 || sent[0].Purpose != provider.PurposeSecondFactor {
		t.Fatalf("mails %+v", sent)
	}
	done, err := f.a.Factors().Verify(fctx, si.Pending.Token, auth.Answer{Type: core.FactorEmail, Code: sent[0].Code})
	if err == nil {
		t.Errorf("the mailbox alone answered both factors: amr %v, level %s (offered %v)", done.Authentication.Methods, done.Authentication.Level, si.Pending.Factors)
	}
}

// TestReviewRemoveLastFactorRace: with Required, the user's two factors
// removed at once: each Remove sees the other factor and goes ahead, and
// the user is left with none, which Required forbids.
func TestReviewRemoveLastFactorRace(t *testing.T) {
	// The attempt cap counts on the fixture's clock (30 s a round): 200
	// enrolments within a second of real time would reach it whatever
	// Remove does.
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Required: true, EmailCode: true, Attempts: 100}, func(c *auth.Config) {
		c.RateLimiter = ratelimit.NewMemory(ratelimit.WithClock(c.Now))
	})
	uid := f.signUp("ada@example.com")
	if _, err := f.store.UpdateUser(fctx, core.UserUpdate{ID: uid, EmailVerified: core.Set(ptr(f.clock.Now()))}); err != nil {
		t.Fatal(err)
	}
	for round := range 200 {
		for _, fi := range mustList(t, f.a, uid) {
			f.store.(interface {
				DeleteFactor(context.Context, string, string) (*core.Factor, error)
			}).DeleteFactor(fctx, uid, fi.ID)
		}
		f.enrol(uid)
		f.clock.Add(30 * time.Second)
		if _, err := f.a.Factors().AddEmail(fctx, uid); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, fi := range mustList(t, f.a, uid) {
			if fi.Type == core.FactorTOTP || fi.Type == core.FactorEmail {
				ids = append(ids, fi.ID)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				f.a.Factors().Remove(fctx, uid, id)
			}()
		}
		close(start)
		wg.Wait()
		left := 0
		for _, fi := range mustList(t, f.a, uid) {
			if fi.Type == core.FactorTOTP || fi.Type == core.FactorEmail {
				left++
			}
		}
		if left == 0 {
			t.Fatalf("round %d: both factors removed at once; Required leaves the user none", round)
		}
	}
}

func mustList(t *testing.T, a *auth.Auth, userID string) []auth.FactorInfo {
	t.Helper()
	infos, err := a.Factors().List(fctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// reviewSignInWithTOTP signs the browser in as the user: the password,
// then the TOTP code of the current step (the clock moved to the next).
func reviewSignInWithTOTP(t *testing.T, app *pwApp, clock *coretest.Clock, user core.User, key string) {
	t.Helper()
	res := app.postJSON("/auth/password/signin", map[string]string{"email": user.Email, "password": reviewPassword})
	if !strings.Contains(res.body, `"twoFactorRequired":true`) {
		t.Fatalf("password sign-in: %+v", res)
	}
	if res := app.postJSON("/auth/two-factor/verify", map[string]string{"type": "totp", "code": code(t, key, clock.Now())}); res.status != 200 || app.session() != user.Email {
		t.Fatalf("verify: %+v", res)
	}
	nextStep(clock)
}

// TestReviewReauthCannotReachMultiFactor: a route requires a fresh
// session of level mfa (RequireFresh with StepUp{MaxAge, Level:
// LevelMultiFactor}). A TOTP user whose mfa session went stale
// re-authenticates through POST /auth/reauth with the password and the
// TOTP code: the handler passes the code on only when no password is
// given (stepup.go: `if pw == "" { answer = answerOf(r) }`), so the new
// session is pwd alone (1fa), and a code alone is otp alone (1fa): the
// route sends the user back to /reauth forever. Only a passkey can reach
// it.
func TestReviewReauthCannotReachMultiFactor(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			app, a, clock, store := newReviewApp(t, strategy, auth.SecondFactorOptions{})
			user := reviewUser(t, a, store, clock, "grace@example.com")
			key := reviewEnrolTOTP(t, a, clock, user.ID)
			h, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("/auth/", h)
			mux.Handle("/sensitive", h.RequireFresh(auth.StepUp{MaxAge: 5 * time.Minute, Level: auth.LevelMultiFactor})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("sensitive"))
			})))
			app.srv.Config.Handler = mux
			reviewSignInWithTOTP(t, app, clock, user, key)
			get := func() answer {
				req, _ := http.NewRequest("GET", app.srv.URL+"/sensitive", nil)
				req.Header.Set("Accept", "application/json")
				return app.read(app.client.Do(req))
			}
			if res := get(); res.status != 200 {
				t.Fatalf("a fresh mfa session: %+v", res)
			}
			clock.Add(time.Hour)
			if res := get(); res.status != http.StatusUnauthorized {
				t.Fatalf("a stale session: %+v", res)
			}
			nextStep(clock)
			if res := app.postJSON("/auth/reauth", map[string]string{"password": reviewPassword, "type": "totp", "code": code(t, key, clock.Now())}); res.status != 200 {
				t.Fatalf("reauth with the password and the code: %+v", res)
			}
			if res := get(); res.status != 200 {
				t.Errorf("after re-authenticating with the password and the TOTP code, the mfa route still refuses: %+v", res)
			}
		})
	}
}

// TestReviewStolenSessionAndPasswordRemoveTheSecondFactor: a user has
// TOTP. Someone holding their session cookie (stale) and their password,
// but not the TOTP key, re-authenticates with the password alone (POST
// /auth/reauth) and then, the session fresh, removes the TOTP factor
// (POST /auth/two-factor/remove), which also removes the recovery codes:
// the next sign-in needs the password only. The freshness that guards
// factor changes (Config.FactorFreshness) asks for no more than the
// factor the second factor protects; a user with a second factor should
// prove it (or one of their factors) to remove or replace one.
func TestReviewStolenSessionAndPasswordRemoveTheSecondFactor(t *testing.T) {
	app, a, clock, store := newReviewApp(t, auth.StrategyDatabase, auth.SecondFactorOptions{})
	user := reviewUser(t, a, store, clock, "grace@example.com")
	key := reviewEnrolTOTP(t, a, clock, user.ID)
	reviewSignInWithTOTP(t, app, clock, user, key)
	clock.Add(time.Hour)

	// The thief: the cookie and the password.
	if res := app.postJSON("/auth/reauth", map[string]string{"password": reviewPassword}); res.status != 200 {
		t.Fatalf("reauth with the password: %+v", res)
	}
	for _, fi := range mustList(t, a, user.ID) {
		if fi.Type == core.FactorTOTP {
			app.postJSON("/auth/two-factor/remove", map[string]string{"id": fi.ID})
		}
	}
	if !slices.Contains(factorTypesOf(t, a, user.ID), core.FactorTOTP) {
		app.newBrowser()
		res := app.postJSON("/auth/password/signin", map[string]string{"email": user.Email, "password": reviewPassword})
		t.Errorf("a session re-authenticated with the password alone removed the TOTP factor; the next password sign-in asks for nothing: %d %s", res.status, res.body)
	}
}
