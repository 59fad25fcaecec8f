package handlersec

// These tests drive core/auth's second factors and step-up directly (no
// handler) over the memory adapter.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
)

// rfc6238 is a small RFC 6238 implementation (HMAC-SHA-1, 6 digits, 30 s
// steps, one step of skew), so that these tests compute codes without
// module totp.
type rfc6238 struct{}

func (rfc6238) NewKey(issuer, account string) (auth.TOTPKey, error) {
	k := make([]byte, 20)
	rand.Read(k)
	return auth.TOTPKey{Secret: k, Text: fmt.Sprintf("%x", k), URI: "otpauth://totp/" + issuer + ":" + account}, nil
}

func (rfc6238) Match(key []byte, code string, now time.Time) (int64, bool) {
	if !password.ValidCode(code) {
		return 0, false
	}
	step := now.Unix() / 30
	for _, s := range []int64{step - 1, step, step + 1} {
		if subtle.ConstantTimeCompare([]byte(totpCode(key, s)), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

func totpCode(key []byte, step int64) string {
	m := hmac.New(sha1.New, key)
	binary.Write(m, binary.BigEndian, step)
	sum := m.Sum(nil)
	o := sum[len(sum)-1] & 15
	v := binary.BigEndian.Uint32(sum[o:o+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1000000)
}

// newFactorStore is the memory adapter, which keeps factors.
func newFactorStore() *memory.Adapter { return memory.New() }

// factorFixture is password sign-in with second factors over one store,
// with a clock; instance makes another Auth over the same store.
type factorFixture struct {
	t     *testing.T
	store core.Adapter
	clock *coretest.Clock
	mu    sync.Mutex
	mails []provider.VerificationRequest
	cfg   auth.Config
	a     *auth.Auth
}

func newFactorFixture(t *testing.T, strategy auth.Strategy, sf auth.SecondFactorOptions, more ...func(*auth.Config)) *factorFixture {
	t.Helper()
	h, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	f := &factorFixture{t: t, store: newFactorStore(), clock: coretest.NewClock(time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC))}
	pc := provider.Password("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.mails = append(f.mails, r)
		return nil
	})
	pc.Hasher, pc.AllowUnverifiedSignIn = h, true
	sf.Enabled = true
	if sf.TOTP == nil {
		sf.TOTP = rfc6238{}
	}
	f.cfg = auth.Config{Adapter: f.store, Providers: []provider.Provider{pc}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"},
		BaseURL: "https://app.example/auth", Session: auth.SessionOptions{Strategy: strategy}, Now: f.clock.Now, SecondFactors: sf}
	for _, m := range more {
		m(&f.cfg)
	}
	f.a = f.instance()
	return f
}

func (f *factorFixture) instance() *auth.Auth {
	f.t.Helper()
	a, err := auth.New(f.cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

var fctx = context.Background()

// signUp makes a password user and returns its id.
func (f *factorFixture) signUp(email string) string {
	f.t.Helper()
	res, err := f.a.Passwords().SignUp(fctx, auth.SignUpRequest{Identity: auth.Identity{Email: email}, Password: "correct-horse-battery"})
	if err != nil || res.SignIn == nil {
		f.t.Fatalf("sign-up %s: %v, %+v", email, err, res)
	}
	return res.SignIn.User.ID
}

func (f *factorFixture) signIn(ctx context.Context, a *auth.Auth, email string) *auth.SignIn {
	f.t.Helper()
	si, err := a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: email, Password: "correct-horse-battery"})
	if err != nil {
		f.t.Fatalf("sign-in %s: %v", email, err)
	}
	return si
}

// enrol enrols TOTP for the user and returns its key and recovery codes.
func (f *factorFixture) enrol(userID string) ([]byte, []string) {
	f.t.Helper()
	e, err := f.a.Factors().StartTOTP(fctx, userID, "", "Phone")
	if err != nil {
		f.t.Fatal(err)
	}
	key := e.Key.Secret
	got, err := f.a.Factors().ConfirmTOTP(fctx, userID, e.Token, totpCode(key, f.clock.Now().Unix()/30))
	if err != nil {
		f.t.Fatalf("ConfirmTOTP: %v", err)
	}
	return key, got.RecoveryCodes
}

func (f *factorFixture) code(key []byte) string { return totpCode(key, f.clock.Now().Unix()/30) }

func isSecondFactor(err error) bool { return auth.CodeOf(err) == auth.CodeSecondFactor }

// TestFactorsEnrolSignInVerify: no factor, no pending stage; an enrolled
// TOTP factor makes the next sign-in pending (no session, no claims);
// the enrolment's own code, a wrong code and a code of the wrong length
// are refused and write nothing; the next step's code completes it once,
// with amr pwd+otp+mfa in the session; the used pending sign-in is
// refused. Database and JWT sessions.
func TestFactorsEnrolSignInVerify(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			f := newFactorFixture(t, strategy, auth.SecondFactorOptions{Attempts: 10})
			uid := f.signUp("ada@example.com")
			if si := f.signIn(fctx, f.a, "ada@example.com"); si.Pending != nil {
				t.Fatalf("a user without factors got a pending sign-in")
			}
			key, codes := f.enrol(uid)
			if len(codes) != 10 {
				t.Fatalf("recovery codes %v, want ten", codes)
			}
			si := f.signIn(fctx, f.a, "ada@example.com")
			if si.Pending == nil || si.Session.SessionToken != "" || si.Claims != nil {
				t.Fatalf("sign-in with a factor: %+v, want pending and no session", si)
			}
			if !slices.Equal(si.Pending.Factors, []core.FactorType{core.FactorTOTP, core.FactorRecoveryCodes}) || si.Pending.Enroll {
				t.Errorf("pending factors %v enroll %v", si.Pending.Factors, si.Pending.Enroll)
			}
			for _, bad := range []string{f.code(key), "12345", "1234567", "abcdef", ""} {
				if _, err := f.a.Factors().Verify(fctx, si.Pending.Token, auth.Answer{Type: core.FactorTOTP, Code: bad}); !isSecondFactor(err) {
					t.Errorf("Verify(%q): %v, want CodeSecondFactor", bad, err)
				}
			}
			f.clock.Add(30 * time.Second)
			done, err := f.a.Factors().Verify(fctx, si.Pending.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key)})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			au := done.Authentication
			if !slices.Equal(au.Methods, []string{"mfa", "otp", "pwd"}) || au.Level != auth.LevelMultiFactor || !au.Time.Equal(f.clock.Now()) {
				t.Errorf("authentication %+v", au)
			}
			var read auth.Authentication
			if strategy == auth.StrategyDatabase {
				st, ok, err := f.a.Edge().ReadSession(fctx, auth.SessionRequest{Token: done.Session.SessionToken})
				if err != nil || !ok {
					t.Fatalf("ReadSession: %v %v", ok, err)
				}
				read = f.a.Edge().Authentication(st)
			} else {
				if done.Claims["auth_time"] != f.clock.Now().Unix() || done.Claims["acr"] != auth.LevelMultiFactor {
					t.Errorf("claims %v", done.Claims)
				}
				read = f.a.Edge().Authentication(auth.SessionState{Claims: map[string]any{"auth_time": float64(f.clock.Now().Unix()), "amr": []any{"mfa", "otp", "pwd"}}})
			}
			if !slices.Equal(read.Methods, au.Methods) || !read.Time.Equal(au.Time) || read.Level != au.Level {
				t.Errorf("read back %+v, want %+v", read, au)
			}
			f.clock.Add(30 * time.Second)
			if _, err := f.a.Factors().Verify(fctx, si.Pending.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key)}); !isSecondFactor(err) {
				t.Errorf("Verify of a used pending sign-in: %v, want CodeSecondFactor", err)
			}
		})
	}
}

// TestFactorsSameCodeTwoInstances: the same TOTP code answered at once on
// two instances (two pending sign-ins of the user) is accepted once.
func TestFactorsSameCodeTwoInstances(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Attempts: 100})
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	b := f.instance()
	for round := range 20 {
		f.clock.Add(30 * time.Second)
		p1, p2 := f.signIn(fctx, f.a, "ada@example.com").Pending, f.signIn(fctx, b, "ada@example.com").Pending
		code := f.code(key)
		var ok atomic.Int32
		coretest.Concurrently(2, func(i int) {
			a, p := f.a, p1
			if i == 1 {
				a, p = b, p2
			}
			if _, err := a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: code}); err == nil {
				ok.Add(1)
			} else if !isSecondFactor(err) {
				t.Errorf("Verify: %v", err)
			}
		})
		if ok.Load() != 1 {
			t.Fatalf("round %d: %d successes, want 1", round, ok.Load())
		}
	}
}

// TestFactorsRecoveryCodeRace: one recovery code raced 50 ways (50
// pending sign-ins) is accepted once; every other code still works once.
func TestFactorsRecoveryCodeRace(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Attempts: 1000})
	uid := f.signUp("ada@example.com")
	_, codes := f.enrol(uid)
	pending := make([]*auth.PendingSignIn, 50)
	for i := range pending {
		pending[i] = f.signIn(fctx, f.a, "ada@example.com").Pending
	}
	var ok atomic.Int32
	coretest.Concurrently(50, func(i int) {
		if _, err := f.a.Factors().Verify(fctx, pending[i].Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: strings.ToUpper(codes[0])}); err == nil {
			ok.Add(1)
		} else if !isSecondFactor(err) {
			t.Errorf("Verify: %v", err)
		}
	})
	if ok.Load() != 1 {
		t.Fatalf("%d successes, want 1", ok.Load())
	}
	list, err := f.a.Factors().List(fctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(list, func(fi auth.FactorInfo) bool { return fi.Type == core.FactorRecoveryCodes }); i < 0 || list[i].Remaining != 9 {
		t.Errorf("factors %+v, want 9 recovery codes left", list)
	}
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: codes[1]}); err != nil {
		t.Errorf("second code: %v", err)
	}
}

// TestFactorsPendingRace: one pending sign-in answered 50 ways with right
// answers (different recovery codes) on two instances makes one session.
func TestFactorsPendingRace(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Attempts: 1000})
	uid := f.signUp("ada@example.com")
	_, codes := f.enrol(uid)
	b := f.instance()
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	var ok atomic.Int32
	coretest.Concurrently(50, func(i int) {
		a := f.a
		if i%2 == 1 {
			a = b
		}
		if _, err := a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: codes[i%10]}); err == nil {
			ok.Add(1)
		}
	})
	sessions, err := f.store.(*memory.Adapter).ListSessionsByUserID(fctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	// The sign-up's session and the pending sign-in's one.
	if ok.Load() != 1 || len(sessions) != 2 {
		t.Fatalf("%d successes, %d sessions; want 1 and 2", ok.Load(), len(sessions))
	}
}

// TestFactorsBadPending: an expired, forged or altered pending sign-in is
// refused and writes nothing; another user's enrolment does not confirm.
func TestFactorsBadPending(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{})
	uid := f.signUp("ada@example.com")
	other := f.signUp("bob@example.com")
	key, _ := f.enrol(uid)
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	forged := []string{"", "x", strings.Repeat("A", 200), p.Token[:len(p.Token)-2], p.Token + "A"}
	for _, tok := range forged {
		if _, err := f.a.Factors().Verify(fctx, tok, auth.Answer{Type: core.FactorTOTP, Code: "000000"}); !isSecondFactor(err) {
			t.Errorf("Verify(forged %q…): %v", tok[:min(len(tok), 8)], err)
		}
		if _, err := f.a.Factors().Pending(fctx, tok); !isSecondFactor(err) {
			t.Errorf("Pending(forged): %v", err)
		}
	}
	f.clock.Add(auth.DefaultPendingMaxAge + time.Second)
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key)}); !isSecondFactor(err) {
		t.Errorf("Verify(expired): %v", err)
	}
	e, err := f.a.Factors().StartTOTP(fctx, uid, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Factors().ConfirmTOTP(fctx, other, e.Token, f.code(e.Key.Secret)); !isSecondFactor(err) {
		t.Errorf("ConfirmTOTP with another user's enrolment: %v", err)
	}
	if list, _ := f.a.Factors().List(fctx, other); len(list) != 0 {
		t.Errorf("the other user has factors %+v", list)
	}
	// Another user's factor id is not found.
	mine, _ := f.a.Factors().List(fctx, uid)
	if err := f.a.Factors().Remove(fctx, other, mine[0].ID); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Remove of another user's factor: %v", err)
	}
}

// TestFactorsAttemptCap: wrong answers beyond the cap refuse even the
// right one.
func TestFactorsAttemptCap(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Attempts: 3})
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	f.clock.Add(30 * time.Second)
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	for range 3 {
		f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: "000000"})
	}
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key)}); !isSecondFactor(err) {
		t.Errorf("Verify over the cap: %v", err)
	}
}

// TestFactorsTrustedDevice: a trusted browser skips the second factor
// until the user's sessions are revoked, or the trust expires.
func TestFactorsTrustedDevice(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{TrustDevice: 24 * time.Hour})
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	f.clock.Add(30 * time.Second)
	ctx := auth.WithClient(fctx, auth.Client{UserAgent: "Firefox"})
	p := f.signIn(ctx, f.a, "ada@example.com").Pending
	done, err := f.a.Factors().Verify(ctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key), TrustDevice: true})
	if err != nil || done.TrustedDevice == "" {
		t.Fatalf("Verify with TrustDevice: %v, %q", err, done.TrustedDevice)
	}
	trusted := auth.WithClient(fctx, auth.Client{TrustedDevice: done.TrustedDevice})
	if si := f.signIn(trusted, f.a, "ada@example.com"); si.Pending != nil {
		t.Errorf("a trusted browser was asked for a second factor")
	}
	id, k, _ := strings.Cut(done.TrustedDevice, ".")
	for _, bad := range []string{id + "." + strings.Repeat("0", len(k)), "x." + k, done.TrustedDevice + "0"} {
		if si := f.signIn(auth.WithClient(fctx, auth.Client{TrustedDevice: bad}), f.a, "ada@example.com"); si.Pending == nil {
			t.Errorf("a forged trusted-device value %q skipped the second factor", bad)
		}
	}
	if _, err := f.a.Sessions().RevokeAll(fctx, uid); err != nil {
		t.Fatal(err)
	}
	if si := f.signIn(trusted, f.a, "ada@example.com"); si.Pending == nil {
		t.Errorf("the trust outlived RevokeAll")
	}
}

// TestFactorsReauthenticate: a TOTP code re-authenticates: a new session
// with auth_time now replaces the old one; StepUp sees it.
func TestFactorsReauthenticate(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{})
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	f.clock.Add(30 * time.Second)
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	done, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key)})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Hour)
	fresh := auth.StepUp{MaxAge: 10 * time.Minute, Methods: []string{"otp"}}
	if fresh.Satisfied(done.Authentication, f.clock.Now()) {
		t.Errorf("an hour-old session satisfied %+v", fresh)
	}
	if _, err := f.a.Factors().Reauthenticate(fctx, uid, done.Session.SessionToken, "", auth.Answer{Type: core.FactorTOTP, Code: "000000"}); !isSecondFactor(err) {
		t.Errorf("Reauthenticate with a wrong code: %v", err)
	}
	re, err := f.a.Factors().Reauthenticate(fctx, uid, done.Session.SessionToken, "correct-horse-battery", auth.Answer{Type: core.FactorTOTP, Code: f.code(key)})
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := f.a.Edge().ReadSession(fctx, auth.SessionRequest{Token: re.Session.SessionToken})
	if err != nil || !ok {
		t.Fatalf("the new session: %v %v", ok, err)
	}
	if au := f.a.Edge().Authentication(st); !fresh.Satisfied(au, f.clock.Now()) || au.Level != auth.LevelMultiFactor {
		t.Errorf("re-authenticated %+v does not satisfy %+v", au, fresh)
	}
	if _, ok, _ := f.a.Edge().ReadSession(fctx, auth.SessionRequest{Token: done.Session.SessionToken}); ok {
		t.Errorf("the replaced session lives on")
	}
}

// TestFactorsRemoveLastRequired: with Required, the last factor cannot be
// removed; without, removing it takes the recovery codes along.
func TestFactorsRemoveLastRequired(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Required: true})
	uid := f.signUp("ada@example.com")
	f.enrol(uid)
	list, _ := f.a.Factors().List(fctx, uid)
	i := slices.IndexFunc(list, func(fi auth.FactorInfo) bool { return fi.Type == core.FactorTOTP })
	if err := f.a.Factors().Remove(fctx, uid, list[i].ID); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("Remove of the last factor with Required: %v", err)
	}
	g := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{})
	uid = g.signUp("ada@example.com")
	g.enrol(uid)
	list, _ = g.a.Factors().List(fctx, uid)
	i = slices.IndexFunc(list, func(fi auth.FactorInfo) bool { return fi.Type == core.FactorTOTP })
	if err := g.a.Factors().Remove(fctx, uid, list[i].ID); err != nil {
		t.Fatal(err)
	}
	if list, _ = g.a.Factors().List(fctx, uid); len(list) != 0 {
		t.Errorf("after removing the last factor: %+v", list)
	}
}

// TestFactorsRemoveLastRequiredByCallback: a second factor the SignIn
// callback requires of one user (RequireSecondFactor) is a decision about
// a sign-in, which Remove cannot ask: the user's last factor is removed,
// with the recovery codes. What holds is that the requirement is kept at
// the next sign-in: no session, a pending sign-in that enrols a factor.
func TestFactorsRemoveLastRequiredByCallback(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{}, func(c *auth.Config) {
		c.Callbacks.SignIn = func(_ context.Context, p auth.SignInParams) (auth.SignInDecision, error) {
			return auth.SignInDecision{RequireSecondFactor: p.User.Email == "ada@example.com"}, nil
		}
	})
	uid := f.signUp("ada@example.com")
	f.enrol(uid)
	si := f.signIn(fctx, f.a, "ada@example.com")
	if si.Pending == nil || si.Pending.Enroll || !slices.Contains(si.Pending.Factors, core.FactorTOTP) || si.Session.SessionToken != "" {
		t.Fatalf("sign-in with TOTP: %+v; want pending on TOTP", si)
	}
	list, _ := f.a.Factors().List(fctx, uid)
	i := slices.IndexFunc(list, func(fi auth.FactorInfo) bool { return fi.Type == core.FactorTOTP })
	if err := f.a.Factors().Remove(fctx, uid, list[i].ID); err != nil {
		t.Fatalf("Remove of the last factor of a user the callback requires one of: %v", err)
	}
	if list, _ = f.a.Factors().List(fctx, uid); len(list) != 0 {
		t.Errorf("after removing the last factor: %+v; want none, recovery codes gone too", list)
	}
	f.clock.Add(30 * time.Second)
	si = f.signIn(fctx, f.a, "ada@example.com")
	if si.Pending == nil || !si.Pending.Enroll || si.Session.SessionToken != "" {
		t.Errorf("sign-in after the removal: %+v; want pending on enrolling a factor, no session", si)
	}
}

// TestFactorsRequiredEnrol: with Required, a user without a factor gets a
// pending sign-in that enrols TOTP to finish, and recovery codes with it.
func TestFactorsRequiredEnrol(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Required: true})
	f.signUp("ada@example.com")
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	if p == nil || !p.Enroll {
		t.Fatalf("pending %+v, want Enroll", p)
	}
	e, err := f.a.Factors().StartTOTP(fctx, "", p.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	done, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Enrollment: e.Token, Code: f.code(e.Key.Secret)})
	if err != nil || done.Session.SessionToken == "" || len(done.RecoveryCodes) != 10 {
		t.Fatalf("Verify with enrolment: %v, %+v", err, done)
	}
}

// TestFactorsSecretSealed: the stored TOTP factor never holds the key in
// clear, and a sealed key moved to another user does not open.
func TestFactorsSecretSealed(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{})
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	fs := f.store.(*memory.Adapter)
	stored, _ := fs.ListFactorsByUserID(fctx, uid)
	for _, fa := range stored {
		if bytes.Contains(fa.Secret, key) {
			t.Errorf("factor %s holds the TOTP key in clear", fa.Type)
		}
	}
	// Moved to another user: the next sign-in of that user cannot use it.
	other := f.signUp("bob@example.com")
	i := slices.IndexFunc(stored, func(fa core.Factor) bool { return fa.Type == core.FactorTOTP })
	moved := stored[i]
	moved.ID, moved.UserID, moved.Step = core.NewUUID(), other, 0
	if _, err := fs.CreateFactor(fctx, moved); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(30 * time.Second)
	p := f.signIn(fctx, f.a, "bob@example.com").Pending
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key)}); !isSecondFactor(err) {
		t.Errorf("a sealed key copied to another user opened: %v", err)
	}
}
