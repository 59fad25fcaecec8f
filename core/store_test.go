package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// recorder implements a few methods and records whether it was called.
type recorder struct {
	calls   []string
	err     error
	account *core.Account
	omit    []core.Method
}

func (r *recorder) GetUser(ctx context.Context, id string) (*core.User, error) {
	r.calls = append(r.calls, "getUser "+id)
	return nil, r.err
}

func (r *recorder) CreateUser(ctx context.Context, u core.User) (*core.User, error) {
	r.calls = append(r.calls, "createUser "+u.ID)
	if u.EmailVerified != nil && (u.EmailVerified.Location() != time.UTC || u.EmailVerified.Nanosecond()%int(time.Millisecond) != 0) {
		return nil, errors.New("the layer passed a time that is not normalised")
	}
	return &u, r.err
}

func (r *recorder) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	r.calls = append(r.calls, "getAccount")
	return r.account, r.err
}

func (r *recorder) UpdateAuthenticatorCounter(ctx context.Context, id string, c int64) (*core.Authenticator, error) {
	r.calls = append(r.calls, "updateAuthenticatorCounter")
	return &core.Authenticator{CredentialID: id, Counter: c}, nil
}

func (r *recorder) OmittedMethods() []core.Method { return r.omit }

func TestStoreMissingMethod(t *testing.T) {
	s := core.NewStore(&recorder{})
	_, err := s.DeleteUser(context.Background(), "u1")
	var missing *core.MissingMethodsError
	if !errors.As(err, &missing) || !errors.Is(err, core.ErrMissingAdapterMethod) || missing.Missing[0].Method != core.MethodDeleteUser {
		t.Fatalf("DeleteUser on an adapter without it: %v, want a MissingMethodsError for deleteUser", err)
	}
	if _, err := core.Require[core.UserDeleter](s, "x"); err == nil {
		t.Error("Require through the Store found deleteUser, which the adapter lacks")
	}
	if _, err := core.Require[core.UserGetter](s, "x"); err != nil {
		t.Errorf("Require through the Store: %v", err)
	}
	if got := core.Probe(s).Implemented(); len(got) != 4 {
		t.Errorf("Probe through the Store = %v, want the adapter's four methods", got)
	}
}

func TestStoreOmittedMethods(t *testing.T) {
	r := &recorder{omit: []core.Method{core.MethodUpdateAuthenticatorCounter}}
	if core.Probe(r).Has(core.MethodUpdateAuthenticatorCounter) {
		t.Error("Probe reports a method the adapter omits")
	}
	if _, err := core.Require[core.AuthenticatorCounterUpdater](r, "passkeys"); !errors.Is(err, core.ErrMissingAdapterMethod) {
		t.Errorf("Require of an omitted method: %v, want ErrMissingAdapterMethod", err)
	}
	_, err := core.NewStore(r).UpdateAuthenticatorCounter(context.Background(), "c", 1)
	if !errors.Is(err, core.ErrMissingAdapterMethod) || len(r.calls) != 0 {
		t.Errorf("an omitted method through the Store: %v, calls %v; want ErrMissingAdapterMethod and no call", err, r.calls)
	}
}

func TestStoreChecksBeforeCalling(t *testing.T) {
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name string
		call func(s *core.Store) error
		want error
	}{
		{"done context", func(s *core.Store) error { _, err := s.GetUser(done, "u1"); return err }, context.Canceled},
		{"empty id", func(s *core.Store) error { _, err := s.CreateUser(ctx, core.User{Email: "a@example.com"}); return err }, core.ErrInvalidInput},
		{"invalid UTF-8", func(s *core.Store) error {
			_, err := s.CreateUser(ctx, core.User{ID: "u1", Email: "a\xff@example.com"})
			return err
		}, core.ErrInvalidInput},
		{"NUL byte", func(s *core.Store) error {
			_, err := s.CreateUser(ctx, core.User{ID: "u1", Email: "a@example.com", Name: ptr("a\x00b")})
			return err
		}, core.ErrInvalidInput},
		{"negative counter", func(s *core.Store) error { _, err := s.UpdateAuthenticatorCounter(ctx, "c", -1); return err }, core.ErrInvalidInput},
		{"empty credential id", func(s *core.Store) error { _, err := s.UpdateAuthenticatorCounter(ctx, "", 1); return err }, core.ErrNotFound},
		{"standard field as data", func(s *core.Store) error {
			_, err := s.CreateUser(ctx, core.User{ID: "u1", Email: "a@example.com", Data: map[string]json.RawMessage{"Email": json.RawMessage(`"x"`)}})
			return err
		}, core.ErrInvalidInput},
	}
	for _, c := range cases {
		r := &recorder{}
		err := c.call(core.NewStore(r))
		if !errors.Is(err, c.want) || len(r.calls) != 0 {
			t.Errorf("%s: %v, adapter calls %v; want an error matching %v and no call", c.name, err, r.calls, c.want)
		}
	}
}

func TestStoreLookupByUnstorableKeyFindsNothing(t *testing.T) {
	for _, id := range []string{"", "bad\xffkey", "nul\x00key"} {
		r := &recorder{}
		u, err := core.NewStore(r).GetUser(context.Background(), id)
		if u != nil || err != nil || len(r.calls) != 0 {
			t.Errorf("GetUser(%q) = %v, %v, calls %v; want nil, nil and no call", id, u, err, r.calls)
		}
	}
}

func TestStoreNormalisesAndWraps(t *testing.T) {
	ctx := context.Background()
	zone := time.FixedZone("x", 3600)
	r := &recorder{account: &core.Account{Provider: "github", ProviderAccountID: "1", TokenType: ptr("Bearer")}}
	s := core.NewStore(r)
	if _, err := s.CreateUser(ctx, core.User{ID: "u1", Email: "a@example.com", EmailVerified: ptr(time.Date(2030, 1, 2, 3, 4, 5, 6789, zone))}); err != nil {
		t.Fatal(err)
	}
	acc, err := s.GetAccount(ctx, "1", "github")
	if err != nil || acc == nil || *acc.TokenType != "bearer" {
		t.Errorf("GetAccount of an account stored with token_type Bearer = %v, %v; want bearer", acc, err)
	}
	r.err = errors.New("connection refused")
	_, err = s.GetUser(ctx, "u1")
	var me *core.MethodError
	if !errors.As(err, &me) || me.Method != core.MethodGetUser || !errors.Is(err, r.err) || !strings.HasPrefix(err.Error(), "getUser: ") {
		t.Errorf("a failing GetUser: %v, want a MethodError for getUser wrapping the adapter's error", err)
	}
	r.err = errors.New("getUser: already named")
	if _, err := s.GetUser(ctx, "u1"); err.Error() != "getUser: already named" {
		t.Errorf("an error the adapter already named: %q, want the name once", err)
	}
}

func TestUserFieldAndMergeData(t *testing.T) {
	role := core.UserField[string]{Name: "role"}
	var u core.User
	if err := role.Put(&u, "admin"); err != nil {
		t.Fatal(err)
	}
	up := core.UserUpdate{ID: "u1"}
	if err := (core.UserField[int]{Name: "level"}).Set(&up, 2); err != nil {
		t.Fatal(err)
	}
	u = up.Apply(u)
	if v, ok, err := role.Get(&u); v != "admin" || !ok || err != nil {
		t.Errorf("role after an update of another field = %q, %v, %v", v, ok, err)
	}
	role.Clear(&up)
	u = up.Apply(u)
	if _, ok, _ := role.Get(&u); ok {
		t.Error("role still set after Clear")
	}
	if _, _, err := (core.UserField[int]{Name: "level"}).Get(&core.User{Data: map[string]json.RawMessage{"level": json.RawMessage(`"x"`)}}); err == nil {
		t.Error("Get decoded a string into an int")
	}
	if err := (core.UserField[string]{Name: "name"}).Put(&u, "x"); err == nil {
		t.Error("Put accepted a standard field's name")
	}
	if got := core.MergeData(map[string]json.RawMessage{"a": json.RawMessage("1")}, map[string]json.RawMessage{"a": nil}); got != nil {
		t.Errorf("MergeData removing the last field = %v, want nil", got)
	}
}

func ptr[T any](v T) *T { return &v }

// TestStoreObserver checks that every call through a Store is observed
// once, after it returned, with its method and error: successes, failures,
// calls the layer answers itself, extensions the adapter lacks; that
// NewStore with options over a Store adds observers without changing it;
// and that observers may be told of concurrent calls.
func TestStoreObserver(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen []string
	record := func(prefix string) core.Observer {
		return core.ObserverFunc(func(_ context.Context, c core.Call) {
			if c.Took < 0 {
				t.Errorf("%s took %v", c.Method, c.Took)
			}
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, fmt.Sprintf("%s%s %v", prefix, c.Method, c.Err != nil))
		})
	}
	r := &recorder{}
	s := core.NewStore(r, core.WithObserver(record("")), core.WithObserver(nil))
	if core.NewStore(s) != s {
		t.Error("NewStore of a Store without options did not return it unchanged")
	}
	_, _ = s.GetUser(ctx, "u1")
	_, _ = s.GetUser(ctx, "")                         // answered by the layer
	_, _ = s.CreateUser(ctx, core.User{})             // rejected input
	_, _ = s.UpdateAccount(ctx, core.AccountUpdate{}) // an extension the adapter lacks
	want := []string{"getUser false", "getUser false", "createUser true", "updateAccount true"}
	if !slices.Equal(seen, want) || len(r.calls) != 1 {
		t.Errorf("observed %q with adapter calls %v; want %q and one adapter call", seen, r.calls, want)
	}

	seen = nil
	both := core.NewStore(s, core.WithObserver(record("second ")))
	if both == s {
		t.Fatal("NewStore of a Store with an option returned it unchanged")
	}
	if _, err := both.GetUser(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"getUser false", "second getUser false"}; !slices.Equal(seen, want) {
		t.Errorf("a Store over an observed Store observed %q; want %q (its observers after the first's)", seen, want)
	}
	seen = nil
	if _, _ = s.GetUser(ctx, ""); len(seen) != 1 {
		t.Errorf("the first Store has %d observers after NewStore over it with another, want 1", len(seen))
	}

	seen = nil
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = both.GetUser(ctx, "")
		}()
	}
	wg.Wait()
	if len(seen) != 16 {
		t.Errorf("8 concurrent calls were observed %d times by two observers, want 16", len(seen))
	}
}

// staticGetter returns one user without allocating.
type staticGetter struct{ u *core.User }

func (g staticGetter) GetUser(context.Context, string) (*core.User, error) { return g.u, nil }

// TestStoreUnobservedCallAllocatesNothing checks that the layer, without
// an observer, adds no allocation to a lookup, and that an observer does
// not either beyond its own work.
func TestStoreUnobservedCallAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	ctx := context.Background()
	g := staticGetter{u: &core.User{ID: "u1", Email: "a@example.com"}}
	var calls int
	for _, c := range []struct {
		name string
		s    *core.Store
	}{
		{"unobserved", core.NewStore(g)},
		{"observed", core.NewStore(g, core.WithObserver(core.ObserverFunc(func(context.Context, core.Call) { calls++ })))},
	} {
		if n := testing.AllocsPerRun(100, func() { _, _ = c.s.GetUser(ctx, "u1") }); n != 0 {
			t.Errorf("%s: GetUser through the layer allocated %v times per call, want 0", c.name, n)
		}
	}
	if calls != 101 {
		t.Errorf("the observer saw %d calls, want 101 (AllocsPerRun's warm-up and 100 runs)", calls)
	}
}
