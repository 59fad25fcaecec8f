package handler_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// TestTwoFactorRemoveRequiredFor: POST /two-factor/remove of the last
// factor of a user SecondFactorOptions.RequiredFor requires one of is
// refused as bad input (JSON 400 BadRequest with why; a form back on the
// security page with error=BadRequest and its message), and the factor
// stays; a failing policy refuses it too (Configuration), and a policy
// answering false lets it go.
func TestTwoFactorRemoveRequiredFor(t *testing.T) {
	var mode atomic.Int32 // 0: not required, 1: required, 2: the policy fails, 3: it fails with an error matching ErrNotFound
	m := newMFA(t, auth.StrategyDatabase, func(sf *auth.SecondFactorOptions) {
		sf.RequiredFor = func(_ context.Context, u core.User) (bool, error) {
			switch mode.Load() {
			case 1:
				return u.Email == mfaEmail, nil
			case 2:
				return false, errors.New("policy store down")
			case 3:
				return false, fmt.Errorf("policy row of tenant 7 at db-internal-3: %w", core.ErrNotFound)
			}
			return false, nil
		}
	})
	_, recovery := m.enrolled()
	mode.Store(1)
	var totp string
	for _, f := range m.factors() {
		if f.Type == core.FactorTOTP {
			totp = f.ID
		}
	}
	before := m.factors()
	b := m.browser()
	b.signIn()
	if res := b.postJSON("/two-factor/verify", map[string]string{"type": "recovery", "code": recovery[0]}); res.StatusCode != 200 {
		t.Fatalf("recovery: %d %s", res.StatusCode, res.body)
	}
	after := func() []string {
		var ids []string
		for _, f := range m.factors() {
			ids = append(ids, f.ID)
		}
		return ids
	}
	var kept []string
	for _, f := range before {
		kept = append(kept, f.ID)
	}
	res := b.postJSON("/two-factor/remove", map[string]string{"id": totp})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, `"error":"BadRequest"`) || !strings.Contains(res.body, "add another factor first") {
		t.Fatalf("JSON remove of the last factor: %d %s; want 400 BadRequest saying to add another first", res.StatusCode, res.body)
	}
	if got := after(); !slices.Equal(got, kept) {
		t.Fatalf("a refused remove changed the factors: %v → %v", kept, got)
	}
	res = b.postForm("/two-factor/remove", map[string]string{"id": totp})
	loc := res.Header.Get("Location")
	if res.StatusCode/100 != 3 || !strings.Contains(loc, "/account/security") || !strings.Contains(loc, "error=BadRequest") {
		t.Fatalf("form remove of the last factor: %d %q", res.StatusCode, loc)
	}
	if page := b.get(loc, "Accept", "text/html"); !strings.Contains(page.body, "cannot be removed while one is required") {
		t.Errorf("the security page does not say why: %d %s", page.StatusCode, page.body)
	}
	mode.Store(2)
	if res := b.postJSON("/two-factor/remove", map[string]string{"id": totp}); res.StatusCode == 200 || !strings.Contains(res.body, `"Configuration"`) {
		t.Errorf("remove with a failing policy: %d %s; want refused with Configuration", res.StatusCode, res.body)
	}
	if got := after(); !slices.Equal(got, kept) {
		t.Fatalf("a remove refused by a failing policy changed the factors: %v → %v", kept, got)
	}
	// A policy error that wraps a not-found is still the application's
	// failure: refused as Configuration, its text not sent to the client.
	mode.Store(3)
	if res := b.postJSON("/two-factor/remove", map[string]string{"id": totp}); res.StatusCode == 200 || !strings.Contains(res.body, `"Configuration"`) || strings.Contains(res.body, "db-internal") {
		t.Errorf("remove with a policy failing with a not-found: %d %s; want refused with Configuration, no detail", res.StatusCode, res.body)
	}
	if got := after(); !slices.Equal(got, kept) {
		t.Fatalf("a remove refused by a failing policy changed the factors: %v → %v", kept, got)
	}
	mode.Store(0)
	if res := b.postJSON("/two-factor/remove", map[string]string{"id": totp}); res.StatusCode != 200 || !strings.Contains(res.body, `"removed":true`) {
		t.Fatalf("remove with the policy answering false: %d %s", res.StatusCode, res.body)
	}
	if got := m.factors(); len(got) != 0 {
		t.Errorf("after the last factor: %+v; want none (recovery codes and trusted browsers gone too)", got)
	}
}
