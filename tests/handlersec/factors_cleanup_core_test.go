package handlersec

// Regression tests of what a store failing between two second-factor
// writes left half-made (found by tests/faults' TestFactorFaults on
// PostgreSQL and MariaDB): core/auth over the memory adapter, whose calls
// of one method fail for a while.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

var errStoreDown = errors.New("the store is down (test)")

// failingStore is the memory adapter whose calls of a method fail for a
// while: after skip calls, the next n (failAt). It is safe for core/auth's
// background retries.
type failingStore struct {
	*memory.Adapter
	mu    sync.Mutex
	skip  map[core.Method]int
	fails map[core.Method]int
}

func newFailingStore() *failingStore {
	return &failingStore{Adapter: memory.New(), skip: map[core.Method]int{}, fails: map[core.Method]int{}}
}

func (s *failingStore) failAt(m core.Method, skip, n int) {
	s.mu.Lock()
	s.skip[m], s.fails[m] = skip, n
	s.mu.Unlock()
}

func (s *failingStore) failing(m core.Method) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.skip[m] > 0 {
		s.skip[m]--
		return nil
	}
	if s.fails[m] > 0 {
		s.fails[m]--
		return errStoreDown
	}
	return nil
}

func (s *failingStore) CreateFactor(ctx context.Context, f core.Factor) (*core.Factor, error) {
	if err := s.failing(core.MethodCreateFactor); err != nil {
		return nil, err
	}
	return s.Adapter.CreateFactor(ctx, f)
}

func (s *failingStore) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	if err := s.failing(core.MethodDeleteFactor); err != nil {
		return nil, err
	}
	return s.Adapter.DeleteFactor(ctx, userID, id)
}

func (s *failingStore) CreateSession(ctx context.Context, se core.Session) (*core.Session, error) {
	if err := s.failing(core.MethodCreateSession); err != nil {
		return nil, err
	}
	return s.Adapter.CreateSession(ctx, se)
}

func (s *failingStore) DeleteSession(ctx context.Context, token string) (*core.Session, error) {
	if err := s.failing(core.MethodDeleteSession); err != nil {
		return nil, err
	}
	return s.Adapter.DeleteSession(ctx, token)
}

// withStore puts s under the fixture's Auth.
func withStore(s *failingStore) func(*auth.Config) {
	return func(c *auth.Config) { c.Adapter = s }
}

// factorTypes lists the user's factors' types as the store holds them.
func factorTypes(t *testing.T, s *failingStore, userID string) []core.FactorType {
	t.Helper()
	fs, err := s.ListFactorsByUserID(fctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.FactorType
	for _, f := range fs {
		out = append(out, f.Type)
	}
	slices.Sort(out)
	return out
}

// soon polls cond for up to 5 s (core/auth's background retries).
func soon(cond func() bool) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestFactorsFirstEnrolmentWithoutCodesIsUndone: a first TOTP factor
// whose recovery codes cannot be stored used to stand, reported confirmed
// with no codes (the user never shown any). Now the confirmation fails,
// the factor is removed, and the same enrolment confirms with ten codes.
func TestFactorsFirstEnrolmentWithoutCodesIsUndone(t *testing.T) {
	s := newFailingStore()
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Attempts: 50}, withStore(s))
	uid := f.signUp("ada@example.com")
	e, err := f.a.Factors().StartTOTP(fctx, uid, "", "")
	if err != nil {
		t.Fatal(err)
	}
	code := f.code(e.Key.Secret)
	s.failAt(core.MethodCreateFactor, 1, 1) // the factor is stored, its codes are not
	if got, err := f.a.Factors().ConfirmTOTP(fctx, uid, e.Token, code); err == nil {
		t.Fatalf("ConfirmTOTP with the codes not stored: %+v; want an error", got)
	}
	if got := factorTypes(t, s, uid); len(got) != 0 {
		t.Fatalf("factors after the failed confirmation: %v; want none", got)
	}
	got, err := f.a.Factors().ConfirmTOTP(fctx, uid, e.Token, code)
	if err != nil || len(got.RecoveryCodes) != 10 {
		t.Fatalf("the same confirmation again: %+v, %v; want ten codes", got, err)
	}
}

// TestFactorsEnrolmentAtSignInUndoneWhenTheSignInFails: TOTP enrolled to
// finish a pending sign-in whose session then cannot be made used to
// stand, with recovery codes the user was never shown. Now the factor and
// its codes go; a new sign-in enrols again and is shown ten codes.
func TestFactorsEnrolmentAtSignInUndoneWhenTheSignInFails(t *testing.T) {
	s := newFailingStore()
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Required: true, Attempts: 50}, withStore(s))
	uid := f.signUp("ada@example.com")
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	e, err := f.a.Factors().StartTOTP(fctx, "", p.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	s.failAt(core.MethodCreateSession, 0, 1)
	ans := auth.Answer{Type: core.FactorTOTP, Code: f.code(e.Key.Secret), Enrollment: e.Token}
	if _, err := f.a.Factors().Verify(fctx, p.Token, ans); err == nil {
		t.Fatal("Verify with the session not stored: no error")
	}
	if got := factorTypes(t, s, uid); len(got) != 0 {
		t.Fatalf("factors after the failed sign-in: %v; want none", got)
	}
	p = f.signIn(fctx, f.a, "ada@example.com").Pending
	if !p.Enroll {
		t.Fatalf("the next sign-in: %+v; want it to enrol", p)
	}
	if e, err = f.a.Factors().StartTOTP(fctx, "", p.Token, ""); err != nil {
		t.Fatal(err)
	}
	si, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(e.Key.Secret), Enrollment: e.Token})
	if err != nil || si.Session.SessionToken == "" || len(si.RecoveryCodes) != 10 {
		t.Fatalf("enrolling at the next sign-in: %+v, %v; want a session and ten codes", si, err)
	}
}

// TestFactorsRemovedLastFactorCodesGo: the recovery codes of a removed
// last factor whose deletion failed used to stay, and answer again once a
// factor was added. Now their deletion is retried in the background; and
// codes left by a removal (a crash in that window) are replaced, and
// shown, when a factor is enrolled beside them.
func TestFactorsRemovedLastFactorCodesGo(t *testing.T) {
	s := newFailingStore()
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Attempts: 50}, withStore(s))
	uid := f.signUp("ada@example.com")
	f.enrol(uid)
	list, err := f.a.Factors().List(fctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(fi auth.FactorInfo) bool { return fi.Type == core.FactorTOTP })
	s.failAt(core.MethodDeleteFactor, 1, 2) // the factor goes; its codes, not at once
	if err := f.a.Factors().Remove(fctx, uid, list[i].ID); err == nil {
		t.Error("Remove with the codes not deleted: no error")
	}
	if !soon(func() bool { return len(factorTypes(t, s, uid)) == 0 }) {
		t.Fatalf("factors after the removal: %v; want none once the store answers", factorTypes(t, s, uid))
	}

	_, old := f.enrol(uid)
	fs, err := s.ListFactorsByUserID(fctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	for _, fa := range fs {
		if fa.Type == core.FactorTOTP {
			if _, err := s.Adapter.DeleteFactor(fctx, uid, fa.ID); err != nil { // the removal cut short
				t.Fatal(err)
			}
		}
	}
	f.clock.Add(30 * time.Second)
	_, codes := f.enrol(uid)
	if len(codes) != 10 {
		t.Fatalf("enrolling beside codes left of a removed factor: %d codes shown; want ten", len(codes))
	}
	if got := factorTypes(t, s, uid); !slices.Equal(got, []core.FactorType{core.FactorRecoveryCodes, core.FactorTOTP}) {
		t.Errorf("factors: %v; want one TOTP factor and one set of codes", got)
	}
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: old[0]}); !isSecondFactor(err) {
		t.Errorf("a code left of the removed factor: %v; want it refused", err)
	}
	if _, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: codes[0]}); err != nil {
		t.Errorf("a new code: %v", err)
	}
}

// TestFactorsReauthenticateKeepsOneSession: a re-authentication whose
// old session could not be deleted used to report success with both
// sessions stored. Now it fails, its new session goes, the old one
// stands, and re-authenticating again replaces it.
func TestFactorsReauthenticateKeepsOneSession(t *testing.T) {
	s := newFailingStore()
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{Attempts: 50}, withStore(s))
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	f.clock.Add(30 * time.Second)
	done, err := f.a.Factors().Verify(fctx, f.signIn(fctx, f.a, "ada@example.com").Pending.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key)})
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.ListSessionsByUserID(fctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(30 * time.Second)
	s.failAt(core.MethodDeleteSession, 0, 1)
	if re, err := f.a.Factors().Reauthenticate(fctx, uid, done.Session.SessionToken, "", auth.Answer{Type: core.FactorTOTP, Code: f.code(key)}); err == nil {
		t.Fatalf("Reauthenticate with the old session not deleted: %+v; want an error", re)
	}
	after, err := s.ListSessionsByUserID(fctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || !slices.ContainsFunc(after, func(se core.Session) bool { return se.SessionToken == done.Session.SessionToken }) {
		t.Fatalf("sessions after the failed re-authentication: %d (before: %d); want the same, the old one there", len(after), len(before))
	}
	f.clock.Add(30 * time.Second)
	re, err := f.a.Factors().Reauthenticate(fctx, uid, done.Session.SessionToken, "", auth.Answer{Type: core.FactorTOTP, Code: f.code(key)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.a.Edge().ReadSession(fctx, auth.SessionRequest{Token: done.Session.SessionToken}); ok {
		t.Error("the replaced session lives on")
	}
	if _, ok, err := f.a.Edge().ReadSession(fctx, auth.SessionRequest{Token: re.Session.SessionToken}); !ok || err != nil {
		t.Errorf("the new session: %v, %v", ok, err)
	}
}
