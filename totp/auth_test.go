package totp_test

import (
	"bytes"
	"context"
	"image/png"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/totp"
)

// newAuth configures core/auth over store with codes as its TOTP, JWT
// sessions and the clock now.
func newAuth(t *testing.T, store *memory.Adapter, codes *totp.TOTP, now func() time.Time) *auth.Auth {
	t.Helper()
	a, err := auth.New(auth.Config{
		Adapter:   store,
		Providers: []provider.Provider{provider.Passkey()},
		Secrets:   []string{"totp-test-secret-0123456789abcdef0123"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   "https://example.com/auth",
		Now:       now,
		SecondFactors: auth.SecondFactorOptions{
			Enabled:  true,
			TOTP:     codes,
			Attempts: 1000, // the races below are not guesses
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The module through core/auth: enrolment shows this module's key (the
// issuer is the base URL's host), is confirmed with a code from it, the
// key is stored sealed, and each time step is accepted once: the
// confirming code does not re-authenticate, the next step's does once,
// an older step's never, and the same code raced on two instances is
// accepted once.
func TestWithCoreAuth(t *testing.T) {
	ctx := context.Background()
	codes := must(t, totp.Options{})
	store := memory.New()
	var mu sync.Mutex
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	a, b := newAuth(t, store, codes, now), newAuth(t, store, codes, now)
	u, err := store.CreateUser(ctx, core.User{ID: core.NewUUID(), Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}

	enr, err := a.Factors().StartTOTP(ctx, u.ID, "", "Phone")
	if err != nil {
		t.Fatal(err)
	}
	uri, err := url.Parse(enr.Key.URI)
	if err != nil || uri.Path != "/example.com:ada@example.com" || uri.Query().Get("secret") != enr.Key.Text {
		t.Errorf("enrolment URI %s: %v", enr.Key.URI, err)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(enr.Key.QRCode)); err != nil {
		t.Errorf("enrolment QR code: %v", err)
	}
	step := clock.Unix() / 30
	code := hotpCode(enr.Key.Secret, step, 6)
	wrong := hotpCode(enr.Key.Secret, step+5, 6)
	if _, err := a.Factors().ConfirmTOTP(ctx, u.ID, enr.Token, wrong); auth.CodeOf(err) != auth.CodeSecondFactor {
		t.Errorf("confirming with a wrong code: %v", err)
	}
	done, err := a.Factors().ConfirmTOTP(ctx, u.ID, enr.Token, code)
	if err != nil {
		t.Fatal(err)
	}
	if done.Factor.Type != core.FactorTOTP || len(done.RecoveryCodes) != 10 {
		t.Errorf("enrolled %+v", done)
	}
	// Sealed at rest: the stored secret is neither the key nor holds it.
	factors, err := store.ListFactorsByUserID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range factors {
		if f.Type == core.FactorTOTP && (len(f.Secret) == 0 || bytes.Contains(f.Secret, enr.Key.Secret) || bytes.Contains(f.Secret, []byte(enr.Key.Text)) || f.Step != step) {
			t.Errorf("stored TOTP factor: secret %x, step %d (want sealed, step %d)", f.Secret, f.Step, step)
		}
	}

	reauth := func(a *auth.Auth, code string) error {
		_, err := a.Factors().Reauthenticate(ctx, u.ID, "", "", auth.Answer{Type: core.FactorTOTP, Code: code})
		return err
	}
	if err := reauth(b, code); auth.CodeOf(err) != auth.CodeSecondFactor {
		t.Errorf("the confirming code again, on another instance: %v", err)
	}
	next := hotpCode(enr.Key.Secret, step+1, 6)
	if err := reauth(a, next); err != nil {
		t.Errorf("the next step's code: %v", err)
	}
	if err := reauth(b, next); auth.CodeOf(err) != auth.CodeSecondFactor {
		t.Errorf("the next step's code again: %v", err)
	}
	if err := reauth(a, hotpCode(enr.Key.Secret, step-1, 6)); auth.CodeOf(err) != auth.CodeSecondFactor {
		t.Errorf("an older step's code: %v", err)
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef", " " + next[1:]} {
		if err := reauth(a, bad); err == nil {
			t.Errorf("code %q accepted", bad)
		}
	}

	// A minute later, one code raced 20 ways on two instances: one
	// success.
	mu.Lock()
	clock = clock.Add(time.Minute)
	mu.Unlock()
	raced := hotpCode(enr.Key.Secret, clock.Unix()/30, 6)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		inst := a
		if i%2 == 1 {
			inst = b
		}
		wg.Go(func() {
			switch err := reauth(inst, raced); {
			case err == nil:
				wins.Add(1)
			case auth.CodeOf(err) != auth.CodeSecondFactor:
				t.Errorf("a losing answer: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("the same code accepted %d times", wins.Load())
	}
}

// A user known only by a name with a colon (no address, no username)
// enrols too: the label an app shows has the colon as a space.
func TestEnrolUserWithColonInName(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	a := newAuth(t, store, must(t, totp.Options{}), time.Now)
	name := "Dr: Who"
	u, err := store.CreateUser(ctx, core.User{ID: core.NewUUID(), Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	enr, err := a.Factors().StartTOTP(ctx, u.ID, "", "Phone")
	if err != nil {
		t.Fatalf("StartTOTP: %v", err)
	}
	if uri, err := url.Parse(enr.Key.URI); err != nil || uri.Path != "/example.com:Dr  Who" {
		t.Errorf("enrolment URI %s: %v", enr.Key.URI, err)
	}
}
