package handlersec

// SecondFactorOptions.RequiredFor (a second factor required of some users,
// decided on the user alone) at sign-in and at Factors.Remove, and the end
// of trusted browsers with a user's last factor; core/auth directly, over
// the memory adapter, and once over every real store.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/ratelimit"
)

// adminsOnly is a RequiredFor policy: users whose application field
// "role" is "admin" must have a second factor. It counts its calls.
func adminsOnly(calls *atomic.Int64) func(context.Context, core.User) (bool, error) {
	return func(_ context.Context, u core.User) (bool, error) {
		calls.Add(1)
		var role string
		if raw, ok := u.Data["role"]; ok {
			if err := json.Unmarshal(raw, &role); err != nil {
				return false, err
			}
		}
		return role == "admin", nil
	}
}

// setRole stores the user's application field "role".
func (f *factorFixture) setRole(userID, role string) {
	f.t.Helper()
	raw, _ := json.Marshal(role)
	if _, err := f.store.UpdateUser(fctx, core.UserUpdate{ID: userID, Data: map[string]json.RawMessage{"role": raw}}); err != nil {
		f.t.Fatal(err)
	}
}

// factorOf returns the id of the user's first factor of type t ("" when
// none).
func factorOf(t *testing.T, a *auth.Auth, userID string, typ core.FactorType) string {
	t.Helper()
	for _, fi := range mustList(t, a, userID) {
		if fi.Type == typ {
			return fi.ID
		}
	}
	return ""
}

// storedFactors reads the user's factor records from the store itself
// (trusted devices whose trust ended included).
func (f *factorFixture) storedFactors(userID string) []core.Factor {
	f.t.Helper()
	l, ok := f.store.(core.FactorsByUserLister)
	if !ok {
		f.t.Fatalf("%T lists no factors", f.store)
	}
	factors, err := l.ListFactorsByUserID(fctx, userID)
	if err != nil {
		f.t.Fatal(err)
	}
	return factors
}

func factorIDs(factors []core.Factor) []string {
	ids := make([]string, 0, len(factors))
	for _, fa := range factors {
		ids = append(ids, fa.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestFactorsRequiredForSignIn: a user RequiredFor is true for, without a
// factor, gets a pending sign-in that enrols TOTP (no session before it);
// once enrolled they finish with it. A user it is false for signs in on
// the first factor alone. The policy sees the stored user (its Data).
func TestFactorsRequiredForSignIn(t *testing.T) {
	var calls atomic.Int64
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{RequiredFor: adminsOnly(&calls)})
	admin := f.signUp("ada@example.com")
	f.setRole(admin, "admin")
	reader := f.signUp("grace@example.com")
	f.setRole(reader, "reader")

	si := f.signIn(fctx, f.a, "ada@example.com")
	if si.Pending == nil || !si.Pending.Enroll || si.Session.SessionToken != "" {
		t.Fatalf("admin without a factor: %+v; want a pending sign-in that enrols, no session", si)
	}
	e, err := f.a.Factors().StartTOTP(fctx, "", si.Pending.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	done, err := f.a.Factors().Verify(fctx, si.Pending.Token, auth.Answer{Type: core.FactorTOTP, Enrollment: e.Token, Code: f.code(e.Key.Secret)})
	if err != nil || done.Session.SessionToken == "" || len(done.RecoveryCodes) != 10 {
		t.Fatalf("enrolling in the pending sign-in: %v %+v", err, done)
	}
	f.clock.Add(30 * time.Second)
	if si := f.signIn(fctx, f.a, "ada@example.com"); si.Pending == nil || si.Pending.Enroll || !slices.Contains(si.Pending.Factors, core.FactorTOTP) {
		t.Fatalf("admin with TOTP: %+v; want pending on TOTP", si.Pending)
	}

	before := calls.Load()
	if si := f.signIn(fctx, f.a, "grace@example.com"); si.Pending != nil || si.Session.SessionToken == "" {
		t.Fatalf("reader: %+v; want a session on the first factor", si)
	}
	if calls.Load() == before {
		t.Error("the reader's sign-in did not ask RequiredFor")
	}
	// The policy reads the stored user: made an admin, the reader is asked.
	f.setRole(reader, "admin")
	if si := f.signIn(fctx, f.a, "grace@example.com"); si.Pending == nil || !si.Pending.Enroll {
		t.Fatalf("reader made admin: %+v; want a pending sign-in that enrols", si)
	}
}

// TestFactorsRequiredForRemove: the last usable factor of a user
// RequiredFor is true for is not removed (ErrInvalidInput, saying to add
// another first; the recovery codes stay too); with a second factor added
// either goes. For a user it is false for, the last factor goes with the
// recovery codes.
func TestFactorsRequiredForRemove(t *testing.T) {
	var calls atomic.Int64
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{RequiredFor: adminsOnly(&calls), EmailCode: true})
	admin := f.verifiedUser("ada@example.com")
	f.setRole(admin, "admin")
	f.enrol(admin)
	totp := factorOf(t, f.a, admin, core.FactorTOTP)
	stored := factorIDs(f.storedFactors(admin))
	err := f.a.Factors().Remove(fctx, admin, totp)
	if !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), "add another factor first") {
		t.Fatalf("Remove of the admin's last factor: %v; want ErrInvalidInput saying to add another first", err)
	}
	if got := factorIDs(f.storedFactors(admin)); !slices.Equal(got, stored) {
		t.Fatalf("a refused Remove changed the factors: %v → %v", stored, got)
	}
	// Recovery codes are not a usable factor: removing them is allowed.
	if _, err := f.a.Factors().AddEmail(fctx, admin); err != nil {
		t.Fatal(err)
	}
	if err := f.a.Factors().Remove(fctx, admin, totp); err != nil {
		t.Fatalf("Remove of TOTP beside an e-mail factor: %v", err)
	}
	email := factorOf(t, f.a, admin, core.FactorEmail)
	if err := f.a.Factors().Remove(fctx, admin, email); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("Remove of the e-mail factor, now the last: %v", err)
	}
	if factorOf(t, f.a, admin, core.FactorEmail) == "" || factorOf(t, f.a, admin, core.FactorRecoveryCodes) == "" {
		t.Fatalf("after the refusal: %+v; want the e-mail factor and the recovery codes", mustList(t, f.a, admin))
	}

	reader := f.verifiedUser("grace@example.com")
	f.setRole(reader, "reader")
	f.enrol(reader)
	if err := f.a.Factors().Remove(fctx, reader, factorOf(t, f.a, reader, core.FactorTOTP)); err != nil {
		t.Fatalf("Remove of the reader's last factor: %v", err)
	}
	if left := f.storedFactors(reader); len(left) != 0 {
		t.Fatalf("after the reader's last factor: %+v; want none, recovery codes gone too", left)
	}
}

// TestFactorsRequiredForFailsClosed: an error (or a panic) of RequiredFor
// refuses the sign-in of a user without a factor (Configuration, no
// session, no pending sign-in) and the removal of a last factor (the
// error returned, nothing removed); a user with a factor is asked for it
// without the policy.
func TestFactorsRequiredForFailsClosed(t *testing.T) {
	boom := errors.New("policy store down")
	var fail atomic.Int32 // 0 fine (false), 1 error, 2 panic
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{RequiredFor: func(context.Context, core.User) (bool, error) {
		switch fail.Load() {
		case 1:
			return true, boom
		case 2:
			panic("policy bug")
		}
		return false, nil
	}})
	uid := f.signUp("ada@example.com")
	other := f.signUp("grace@example.com")
	for _, mode := range []int32{1, 2} {
		fail.Store(mode)
		si, err := f.a.Passwords().SignIn(fctx, auth.SignInRequest{Identifier: "grace@example.com", Password: "correct-horse-battery"})
		if err == nil || auth.CodeOf(err) != auth.CodeConfiguration || si != nil {
			t.Fatalf("mode %d: sign-in with a failing RequiredFor: %+v, %v; want refused with Configuration", mode, si, err)
		}
		if mode == 1 && !errors.Is(err, boom) {
			t.Errorf("the policy's error is not in the chain: %v", err)
		}
	}
	fail.Store(0)
	if si := f.signIn(fctx, f.a, "grace@example.com"); si.Session.SessionToken == "" || si.Pending != nil {
		t.Fatalf("with the policy answering false: %+v", si)
	}
	if left := f.storedFactors(other); len(left) != 0 {
		t.Errorf("the refused sign-ins wrote factors: %+v", left)
	}

	f.enrol(uid)
	totp := factorOf(t, f.a, uid, core.FactorTOTP)
	stored := factorIDs(f.storedFactors(uid))
	for _, mode := range []int32{1, 2} {
		fail.Store(mode)
		err := f.a.Factors().Remove(fctx, uid, totp)
		if err == nil || mode == 1 && !errors.Is(err, boom) {
			t.Fatalf("mode %d: Remove with a failing RequiredFor: %v; want the policy's error", mode, err)
		}
		if got := factorIDs(f.storedFactors(uid)); !slices.Equal(got, stored) {
			t.Fatalf("mode %d: a refused Remove changed the factors: %v → %v", mode, stored, got)
		}
		// A user with a factor is asked for it; the policy is not needed.
		f.clock.Add(30 * time.Second)
		if si := f.signIn(fctx, f.a, "ada@example.com"); si.Pending == nil || si.Pending.Enroll {
			t.Fatalf("mode %d: sign-in with TOTP: %+v", mode, si)
		}
	}
	fail.Store(0)
	if err := f.a.Factors().Remove(fctx, uid, totp); err != nil {
		t.Fatalf("Remove with the policy answering false: %v", err)
	}
}

// TestFactorsRequiredForRemoveRace: 20 removals at once of an admin's two
// factors (ten of each): each may see the other factor still there, and
// the user must keep at least one. Every removal that does not remove
// reports why (the last factor, or already gone).
func TestFactorsRequiredForRemoveRace(t *testing.T) {
	var calls atomic.Int64
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{RequiredFor: adminsOnly(&calls), EmailCode: true, Attempts: 100}, func(c *auth.Config) {
		c.RateLimiter = ratelimit.NewMemory(ratelimit.WithClock(c.Now))
	})
	uid := f.verifiedUser("ada@example.com")
	f.setRole(uid, "admin")
	deleter := f.store.(core.FactorDeleter)
	for round := range 100 {
		for _, fa := range f.storedFactors(uid) {
			if _, err := deleter.DeleteFactor(fctx, uid, fa.ID); err != nil {
				t.Fatal(err)
			}
		}
		f.enrol(uid)
		f.clock.Add(30 * time.Second)
		if _, err := f.a.Factors().AddEmail(fctx, uid); err != nil {
			t.Fatal(err)
		}
		ids := []string{factorOf(t, f.a, uid, core.FactorTOTP), factorOf(t, f.a, uid, core.FactorEmail)}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 20)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- f.a.Factors().Remove(fctx, uid, ids[i%2])
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		removed := 0
		for err := range errs {
			switch {
			case err == nil:
				removed++
			case errors.Is(err, core.ErrInvalidInput), errors.Is(err, core.ErrNotFound):
			default:
				t.Fatalf("round %d: Remove: %v", round, err)
			}
		}
		left := 0
		for _, fa := range f.storedFactors(uid) {
			if fa.Type == core.FactorTOTP || fa.Type == core.FactorEmail {
				left++
			}
		}
		if left == 0 {
			t.Fatalf("round %d: the admin's two factors were both removed at once", round)
		}
		// A removal reported done removed its factor for good (a put-back
		// is reported refused): each factor is either removed or left.
		if removed+left != 2 {
			t.Fatalf("round %d: %d removals reported done, %d factors left", round, removed, left)
		}
	}
	if calls.Load() == 0 {
		t.Fatal("RequiredFor was never asked")
	}
}

// trustBrowser signs the user in with TOTP and trusts the browser; it
// returns the trusted-device cookie value.
func (f *factorFixture) trustBrowser(email string, key []byte) string {
	f.t.Helper()
	f.clock.Add(30 * time.Second)
	p := f.signIn(fctx, f.a, email).Pending
	if p == nil {
		f.t.Fatalf("%s: no pending sign-in", email)
	}
	done, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key), TrustDevice: true})
	if err != nil || done.TrustedDevice == "" {
		f.t.Fatalf("Verify with TrustDevice: %v, %+v", err, done)
	}
	return done.TrustedDevice
}

// checkTrustEndsWithLastFactor: a browser trusted with the user's TOTP
// skips the second factor; removing the user's last factor deletes the
// trust (no record left), and once the user enrols a new factor the
// browser is asked for it. A record put back as if its deletion had
// failed skips the new factor neither.
func checkTrustEndsWithLastFactor(t *testing.T, f *factorFixture) {
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	cookie := f.trustBrowser("ada@example.com", key)
	trusted := auth.WithClient(fctx, auth.Client{TrustedDevice: cookie})
	if si := f.signIn(trusted, f.a, "ada@example.com"); si.Pending != nil || si.Session.SessionToken == "" {
		t.Fatalf("the trusted browser was asked: %+v", si.Pending)
	}
	var device core.Factor
	for _, fa := range f.storedFactors(uid) {
		if fa.Type == core.FactorTrustedDevice {
			device = fa
		}
	}
	if device.ID == "" {
		t.Fatal("no trusted-device record")
	}
	if err := f.a.Factors().Remove(fctx, uid, factorOf(t, f.a, uid, core.FactorTOTP)); err != nil {
		t.Fatal(err)
	}
	if left := f.storedFactors(uid); len(left) != 0 {
		t.Fatalf("after the last factor went: %+v; want no recovery codes and no trusted device", left)
	}
	f.clock.Add(time.Minute)
	newKey, _ := f.enrol(uid)
	f.clock.Add(30 * time.Second)
	if si := f.signIn(trusted, f.a, "ada@example.com"); si.Pending == nil || si.Session.SessionToken != "" {
		t.Fatalf("the browser trusted before the last factor went skipped the new one: %+v", si)
	}
	// A record that outlived the removal (its deletion failed, or raced
	// the sign-in that trusted the browser) rests on factors the user no
	// longer has: it skips nothing, and List does not show it.
	if _, err := f.store.(core.FactorCreator).CreateFactor(fctx, device); err != nil {
		t.Fatal(err)
	}
	if si := f.signIn(trusted, f.a, "ada@example.com"); si.Pending == nil {
		t.Fatalf("a trusted-device record older than every factor skipped the second factor: %+v", si)
	}
	if id := factorOf(t, f.a, uid, core.FactorTrustedDevice); id != "" {
		t.Errorf("List shows the stale trusted device %s", id)
	}
	// A browser trusted with the new factor skips it.
	again := auth.WithClient(fctx, auth.Client{TrustedDevice: f.trustBrowser("ada@example.com", newKey)})
	if si := f.signIn(again, f.a, "ada@example.com"); si.Pending != nil {
		t.Fatalf("a browser trusted with the new factor was asked: %+v", si.Pending)
	}
}

// TestFactorsTrustEndsWithLastFactor: see checkTrustEndsWithLastFactor.
func TestFactorsTrustEndsWithLastFactor(t *testing.T) {
	checkTrustEndsWithLastFactor(t, newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{TrustDevice: 24 * time.Hour}))
}

// removeOnTrust is a store that, when a trusted device is about to be
// stored, first removes the user's TOTP factor: the user's last factor
// removed while the sign-in that answered it trusts the browser.
type removeOnTrust struct {
	*memory.Adapter
	f    **factorFixture
	done atomic.Bool
}

func (s *removeOnTrust) CreateFactor(ctx context.Context, fa core.Factor) (*core.Factor, error) {
	if fa.Type == core.FactorTrustedDevice && s.done.CompareAndSwap(false, true) {
		f := *s.f
		if err := f.a.Factors().Remove(ctx, fa.UserID, factorOf(f.t, f.a, fa.UserID, core.FactorTOTP)); err != nil {
			return nil, err
		}
	}
	return s.Adapter.CreateFactor(ctx, fa)
}

// TestFactorsTrustRacesLastFactorRemoval: the last factor is removed
// after Remove's sweep of trusted devices could see the browser the
// answering sign-in trusts: the sign-in stands, but gives no cookie, and
// no trusted-device record is left.
func TestFactorsTrustRacesLastFactorRemoval(t *testing.T) {
	var f *factorFixture
	f = newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{TrustDevice: 24 * time.Hour}, func(c *auth.Config) {
		c.Adapter = &removeOnTrust{Adapter: c.Adapter.(*memory.Adapter), f: &f}
	})
	uid := f.signUp("ada@example.com")
	key, _ := f.enrol(uid)
	f.clock.Add(30 * time.Second)
	p := f.signIn(fctx, f.a, "ada@example.com").Pending
	done, err := f.a.Factors().Verify(fctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: f.code(key), TrustDevice: true})
	if err != nil || done.Session.SessionToken == "" {
		t.Fatalf("Verify: %v %+v", err, done)
	}
	if done.TrustedDevice != "" {
		t.Errorf("the browser was trusted on a factor removed meanwhile: %q", done.TrustedDevice)
	}
	if left := f.storedFactors(uid); len(left) != 0 {
		t.Errorf("left: %+v; want nothing", left)
	}
}

// TestFactorsRequiredForOnStores: on every store (memory, bbolt,
// PostgreSQL, Redis), RequiredFor keeps
// an admin's last factor (nothing removed) and lets a reader's go, and a
// browser trusted before a last factor went is asked for the next one.
func TestFactorsRequiredForOnStores(t *testing.T) {
	for _, st := range testStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			// A policy on a field every store keeps (the PostgreSQL
			// schema has no column for an application field).
			opts := auth.SecondFactorOptions{TrustDevice: 24 * time.Hour, RequiredFor: func(_ context.Context, u core.User) (bool, error) {
				return strings.HasPrefix(u.Email, "admin@"), nil
			}}
			onStore := func(c *auth.Config) { c.Adapter = store }
			f := newFactorFixture(t, auth.StrategyDatabase, opts, onStore)
			f.store = store
			admin := f.signUp("admin@example.com")
			if si := f.signIn(fctx, f.a, "admin@example.com"); si.Pending == nil || !si.Pending.Enroll {
				t.Fatalf("admin without a factor: %+v", si)
			}
			f.enrol(admin)
			stored := factorIDs(f.storedFactors(admin))
			if err := f.a.Factors().Remove(fctx, admin, factorOf(t, f.a, admin, core.FactorTOTP)); !errors.Is(err, core.ErrInvalidInput) {
				t.Fatalf("Remove of the admin's last factor: %v", err)
			}
			if got := factorIDs(f.storedFactors(admin)); !slices.Equal(got, stored) {
				t.Fatalf("a refused Remove changed the factors: %v → %v", stored, got)
			}
			// The reader (no role): the last factor goes, and with it the
			// trust of the browser, which the next factor does not skip.
			g := &factorFixture{t: t, store: store, clock: f.clock, cfg: f.cfg, a: f.a}
			checkTrustEndsWithLastFactor(t, g)
		})
	}
}

// gatedLists is a store whose next four factor listings meet in pairs:
// two removals that each read the user's factors before either deletes,
// and read them again only once both have deleted.
type gatedLists struct {
	*memory.Adapter
	calls atomic.Int32
	pairs [2]sync.WaitGroup
}

func (s *gatedLists) arm() {
	s.pairs[0].Add(2)
	s.pairs[1].Add(2)
	s.calls.Store(4)
}

func (s *gatedLists) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	switch n := s.calls.Add(-1); {
	case n >= 2:
		// The first pair: both read before either goes on to delete.
		factors, err := s.Adapter.ListFactorsByUserID(ctx, userID)
		s.pairs[0].Done()
		s.pairs[0].Wait()
		return factors, err
	case n >= 0:
		// The second: both have deleted before either reads.
		s.pairs[1].Done()
		s.pairs[1].Wait()
	}
	return s.Adapter.ListFactorsByUserID(ctx, userID)
}

// TestFactorsRequiredForRemoveBothSeeTheOther: the race above made
// certain: the removals of an admin's two factors both read both factors
// before either deletes, and both find none left once both have deleted;
// each puts its own back and is refused (or, having found the other's put
// back, goes through), and the admin keeps at least one.
func TestFactorsRequiredForRemoveBothSeeTheOther(t *testing.T) {
	var gate *gatedLists
	f, uid := adminWithTwoFactors(t, func(m *memory.Adapter) core.Adapter {
		gate = &gatedLists{Adapter: m}
		return gate
	})
	ids := []string{factorOf(t, f.a, uid, core.FactorTOTP), factorOf(t, f.a, uid, core.FactorEmail)}
	stored := factorIDs(f.storedFactors(uid))
	gate.arm()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.a.Factors().Remove(fctx, uid, id)
		}()
	}
	wg.Wait()
	// A removal that finds none left puts its factor back; the other may
	// then read it and go through: one factor or both stay, never none.
	after := factorIDs(f.storedFactors(uid))
	refused := 0
	for i, err := range errs {
		switch {
		case err == nil && !slices.Contains(after, ids[i]):
		case errors.Is(err, core.ErrInvalidInput) && slices.Contains(after, ids[i]):
			refused++
		default:
			t.Errorf("Remove %d: %v, factors %v → %v", i, err, stored, after)
		}
	}
	if refused == 0 {
		t.Fatalf("both removals went through: factors %v → %v; the admin must keep one", stored, after)
	}
}

// adminWithTwoFactors is a fixture whose RequiredFor asks a factor of
// admins, on the memory store as wrap wraps it, with an admin who has
// enrolled TOTP and added an e-mail factor; it returns the admin's id.
func adminWithTwoFactors(t *testing.T, wrap func(*memory.Adapter) core.Adapter) (*factorFixture, string) {
	t.Helper()
	var calls atomic.Int64
	f := newFactorFixture(t, auth.StrategyDatabase, auth.SecondFactorOptions{RequiredFor: adminsOnly(&calls), EmailCode: true}, func(c *auth.Config) {
		c.Adapter = wrap(c.Adapter.(*memory.Adapter))
	})
	uid := f.verifiedUser("ada@example.com")
	f.setRole(uid, "admin")
	f.enrol(uid)
	if _, err := f.a.Factors().AddEmail(fctx, uid); err != nil {
		t.Fatal(err)
	}
	return f, uid
}
