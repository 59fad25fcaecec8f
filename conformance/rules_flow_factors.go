package conformance

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
)

// ruleTOTP is a small RFC 6238 implementation (HMAC-SHA-1, 6 digits, 30 s
// steps, one step of skew either way) for the second-factor rules, so
// that the conformance module needs no TOTP dependency; module totp is
// the one applications use.
type ruleTOTP struct{}

func (ruleTOTP) NewKey(issuer, account string) (auth.TOTPKey, error) {
	k := make([]byte, 20)
	if _, err := rand.Read(k); err != nil {
		return auth.TOTPKey{}, err
	}
	return auth.TOTPKey{Secret: k, Text: hex.EncodeToString(k), URI: "otpauth://totp/" + issuer + ":" + account}, nil
}

func (ruleTOTP) Match(key []byte, code string, now time.Time) (int64, bool) {
	if !password.ValidCode(code) {
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
	m := hmac.New(sha1.New, key)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(step))
	m.Write(b[:])
	sum := m.Sum(nil)
	o := sum[len(sum)-1] & 15
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[o:o+4])&0x7fffffff)%1000000)
}

// factorAuth configures the library with password sign-in and second
// factors (TOTP through ruleTOTP) on the adapter a, with the clock.
func (e *env) factorAuth(t *testing.T, adapter any, c *coretest.Clock, attempts int) *auth.Auth {
	t.Helper()
	caps := core.Probe(adapter)
	if !caps.HasExtension(core.ExtensionSwapPasswordHash) || !caps.HasExtension(core.ExtensionDeleteSessionsByUserID) {
		t.Skipf("adapter %s does not implement swapPasswordHash and deleteSessionsByUserId, which the password sign-in of these rules needs", caps.Adapter())
	}
	h, err := password.NewArgon2id(testHasherParams)
	if err != nil {
		t.Fatal(err)
	}
	pc := provider.Password("auth@example.com", func(context.Context, provider.VerificationRequest) error { return nil })
	pc.ID, pc.AllowUnverifiedSignIn, pc.Hasher = passwordProvider, true, h
	a, err := auth.New(auth.Config{
		Adapter: adapter, Providers: []provider.Provider{pc}, Secrets: []string{flowSecret},
		BaseURL: "https://app.example.com/auth", Now: c.Now,
		SecondFactors: auth.SecondFactorOptions{Enabled: true, TOTP: ruleTOTP{}, Attempts: attempts},
	})
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	return a
}

// enrolledUser signs up a password user through a and enrols TOTP; it
// returns the user's id, the TOTP key and the recovery codes.
func (e *env) enrolledUser(t *testing.T, a *auth.Auth, c *coretest.Clock, address string) (string, []byte, []string) {
	t.Helper()
	res, err := a.Passwords().SignUp(e.ctx, auth.SignUpRequest{Identity: auth.Identity{Email: address}, Password: "correct horse battery"})
	if err != nil || res.SignIn == nil {
		t.Fatalf("SignUp(%s) = %s, %v", address, show(res), err)
	}
	uid := res.SignIn.User.ID
	en, err := a.Factors().StartTOTP(e.ctx, uid, "", "Phone")
	if err != nil {
		t.Fatalf("StartTOTP: %v", err)
	}
	got, err := a.Factors().ConfirmTOTP(e.ctx, uid, en.Token, totpAt(en.Key.Secret, c.Now().Unix()/30))
	if err != nil {
		t.Fatalf("ConfirmTOTP: %v", err)
	}
	if len(got.RecoveryCodes) != 10 {
		t.Fatalf("recovery codes %v, want ten with the first factor", got.RecoveryCodes)
	}
	return uid, en.Key.Secret, got.RecoveryCodes
}

// pendingSignIn signs in with the password through a and returns the
// pending sign-in, failing t when the sign-in is not pending.
func (e *env) pendingSignIn(t *testing.T, a *auth.Auth, address string) *auth.PendingSignIn {
	t.Helper()
	si, err := a.Passwords().SignIn(e.ctx, auth.SignInRequest{Identifier: address, Password: "correct horse battery"})
	if err != nil || si.Pending == nil {
		t.Fatalf("SignIn(%s) = %s, %v; want a pending sign-in", address, show(si), err)
	}
	return si.Pending
}

// factorFlowRules are the rules of second factors through the library:
// the secondFactor group. They need the factor methods (all four, an
// optional extension) and run the library as an application would.
func factorFlowRules() []rule {
	const group = "secondFactor"
	x := core.ExtensionCreateFactor
	// The factor methods are an extension (x, all four or none); the
	// password sign-in's extensions are checked by factorAuth.
	needs := []core.Method{core.MethodCreateVerificationToken, core.MethodUseVerificationToken, core.MethodGetUser,
		core.MethodGetAccount, core.MethodGetUserByEmail}
	refusedCode := func(err error) bool { return auth.CodeOf(err) == auth.CodeSecondFactor }
	return []rule{
		{group: group, name: "same_totp_code_two_instances_one_success", extension: x, needs: needs, needsPeer: true, run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.factorAuth(t, e.adapter, c, 100)
			b := e.factorAuth(t, e.peer, c, 100)
			_, key, _ := e.enrolledUser(t, a, c, "ada@example.com")
			for round := range 5 {
				c.Add(30 * time.Second)
				p1, p2 := e.pendingSignIn(t, a, "ada@example.com"), e.pendingSignIn(t, b, "ada@example.com")
				code := totpAt(key, c.Now().Unix()/30)
				var ok atomic.Int32
				coretest.Concurrently(2, func(i int) {
					inst, p := a, p1
					if i == 1 {
						inst, p = b, p2
					}
					_, err := inst.Factors().Verify(e.ctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: code})
					switch {
					case err == nil:
						ok.Add(1)
					case !refusedCode(err):
						t.Errorf("Verify: %v", err)
					}
				})
				if ok.Load() != 1 {
					t.Fatalf("round %d: the same code was accepted %d times on two instances, want once", round, ok.Load())
				}
			}
		}},
		{group: group, name: "recovery_code_raced_50_ways_one_success", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.factorAuth(t, e.adapter, c, 1000)
			uid, _, codes := e.enrolledUser(t, a, c, "ada@example.com")
			pending := make([]*auth.PendingSignIn, 50)
			for i := range pending {
				pending[i] = e.pendingSignIn(t, a, "ada@example.com")
			}
			var ok atomic.Int32
			coretest.Concurrently(len(pending), func(i int) {
				_, err := a.Factors().Verify(e.ctx, pending[i].Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: codes[0]})
				switch {
				case err == nil:
					ok.Add(1)
				case !refusedCode(err):
					t.Errorf("Verify: %v", err)
				}
			})
			if ok.Load() != 1 {
				t.Fatalf("one recovery code raced 50 ways was accepted %d times, want once", ok.Load())
			}
			list, err := a.Factors().List(e.ctx, uid)
			if err != nil {
				t.Fatal(err)
			}
			for _, fi := range list {
				if fi.Type == core.FactorRecoveryCodes && fi.Remaining != 9 {
					t.Errorf("%d recovery codes left, want 9", fi.Remaining)
				}
			}
		}},
		{group: group, name: "pending_sign_in_raced_50_ways_one_session", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.factorAuth(t, e.adapter, c, 1000)
			uid, _, codes := e.enrolledUser(t, a, c, "ada@example.com")
			sessionsOf := func() int {
				n := 0
				for _, s := range e.state(t).Sessions {
					if s.UserID == uid {
						n++
					}
				}
				return n
			}
			before := sessionsOf()
			p := e.pendingSignIn(t, a, "ada@example.com")
			var ok atomic.Int32
			coretest.Concurrently(50, func(i int) {
				// Right answers all: a different recovery code each (ten
				// codes, five answers each).
				if _, err := a.Factors().Verify(e.ctx, p.Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: codes[i%10]}); err == nil {
					ok.Add(1)
				} else if !refusedCode(err) {
					t.Errorf("Verify: %v", err)
				}
			})
			if after := sessionsOf(); ok.Load() != 1 || after != before+1 {
				t.Fatalf("one pending sign-in raced 50 ways: %d successes and %d new sessions, want 1 and 1", ok.Load(), after-before)
			}
		}},
		{group: group, name: "sealed_secret_never_stored_in_clear", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.factorAuth(t, e.adapter, c, 10)
			uid, key, codes := e.enrolledUser(t, a, c, "ada@example.com")
			// What is really stored, through the FactorRaw view where
			// the backend offers one, else what the adapter returns.
			var stored []core.Factor
			var err error
			if fr, ok := e.raw.(FactorRaw); ok {
				all, err := fr.Factors(e.ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range all {
					if f.UserID == uid {
						stored = append(stored, f)
					}
				}
			} else if stored, err = e.a.ListFactorsByUserID(e.ctx, uid); err != nil {
				t.Fatal(err)
			}
			if len(stored) != 2 {
				t.Fatalf("stored factors %s, want the TOTP factor and the recovery codes", show(stored))
			}
			for _, f := range stored {
				if bytes.Contains(f.Secret, key) || bytes.Contains(f.Secret, []byte(hex.EncodeToString(key))) {
					t.Errorf("the %s factor's stored secret holds the TOTP key in clear", f.Type)
				}
				for _, code := range codes {
					if bytes.Contains(f.Secret, []byte(code)) {
						t.Errorf("the %s factor's stored secret holds a recovery code in clear", f.Type)
					}
				}
			}
			if m, ok := e.raw.(Mentioner); ok {
				for _, s := range append([]string{string(key), hex.EncodeToString(key)}, codes...) {
					found, err := m.Mentions(e.ctx, s)
					if err != nil {
						t.Fatal(err)
					}
					if len(found) > 0 {
						t.Errorf("the raw store holds a factor secret in clear: %v", found)
					}
				}
			}
		}},
	}
}
