package handlersec

// Edges of RequiredFor and of the trust of browsers, found by a review:
// each test failed before its fix.

import (
	"context"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// TestFactorsRequiredEmailCodeTrustsBrowser: with EmailCode and no TOTP, a user
// RequiredFor asks a factor of, who has none, answers an e-mail code and
// asks to trust the browser: such a user keeps that trust (devices.go,
// TrustDevice). The guard that ends the trust of a browser whose factor
// was removed meanwhile applies only to a pending sign-in made for a user
// who had a factor (pendingClaims.HadFactor); it once ran on !Enroll,
// which is true here (nothing to enrol without TOTP), and dropped the
// trust.
func TestFactorsRequiredEmailCodeTrustsBrowser(t *testing.T) {
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{EmailCode: true, TrustDevice: 24 * time.Hour,
		RequiredFor: func(_ context.Context, u core.User) (bool, error) { return u.EmailVerified != nil, nil }}, func(c *auth.Config) {
		c.SecondFactors.TOTP = nil
	})
	f.verifiedUser("ada@example.com")
	si := f.signIn(fctx, f.a, "ada@example.com")
	if si.Pending == nil || si.Pending.Enroll {
		t.Fatalf("pending %+v; want an e-mail code pending sign-in", si.Pending)
	}
	f.mu.Lock()
	n := len(f.mails)
	f.mu.Unlock()
	if err := f.a.Factors().SendEmailCode(fctx, si.Pending.Token); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	code := f.mails[n].Code
	f.mu.Unlock()
	done, err := f.a.Factors().Verify(fctx, si.Pending.Token, auth.Answer{Type: core.FactorEmail, Code: code, TrustDevice: true})
	if err != nil || done.Session.SessionToken == "" {
		t.Fatalf("Verify: %v %+v", err, done)
	}
	if done.TrustedDevice == "" {
		t.Errorf("the browser was not trusted: the e-mail answer of a user without a factor counted as a removed factor (withFactor = !pc.Enroll)")
	}
}

// cancelOnDelete is a store on which the removal of factor `target`
// races another removal that has just taken the user's other usable
// factor (deleted here first), and whose caller goes away meanwhile (the
// context is cancelled once the delete is done: a browser that closed
// the connection). Like the network stores, it refuses writes on an
// ended context.
type cancelOnDelete struct {
	*memory.Adapter
	target, other string
	cancel        context.CancelFunc
}

func (s *cancelOnDelete) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	if id == s.target && s.cancel != nil {
		if _, err := s.Adapter.DeleteFactor(ctx, userID, s.other); err != nil {
			return nil, err
		}
		defer s.cancel()
	}
	return s.Adapter.DeleteFactor(ctx, userID, id)
}

func (s *cancelOnDelete) CreateFactor(ctx context.Context, fa core.Factor) (*core.Factor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.Adapter.CreateFactor(ctx, fa)
}

// TestFactorsRemovePutBackOutlivesCancelledRequest: Remove's put-back (the
// factor of a user who must have one, removed by a removal racing
// another) runs to its end when the caller's context has ended by then
// (client gone): once it ran on that context, failed, and left the admin
// with no factor at all, which RequiredFor forbids.
func TestFactorsRemovePutBackOutlivesCancelledRequest(t *testing.T) {
	var store *cancelOnDelete
	f, uid := adminWithTwoFactors(t, func(m *memory.Adapter) core.Adapter {
		store = &cancelOnDelete{Adapter: m}
		return store
	})
	store.target, store.other = factorOf(t, f.a, uid, core.FactorTOTP), factorOf(t, f.a, uid, core.FactorEmail)
	ctx, cancel := context.WithCancel(fctx)
	defer cancel()
	store.cancel = cancel
	err := f.a.Factors().Remove(ctx, uid, store.target)
	store.cancel = nil
	usable := 0
	for _, fa := range f.storedFactors(uid) {
		if fa.Type == core.FactorTOTP || fa.Type == core.FactorEmail {
			usable++
		}
	}
	if usable == 0 {
		t.Errorf("the admin was left without a factor (Remove: %v)", err)
	}
}
