package redisadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// testFactor returns a factor of user uid whose fields stress the record
// layout: a secret with NUL and high bytes, a name with braces and a
// multi-byte length, a step whose varint takes several bytes.
func testFactor(id, uid string) core.Factor {
	return core.Factor{ID: id, UserID: uid, Type: core.FactorTOTP, Name: "phone {x}:" + strings.Repeat("é", 100),
		Secret: []byte("\x00sealed\xff\x80" + strings.Repeat("s", 200)), Step: 1 << 40,
		CreatedAt: time.UnixMilli(1_700_000_000_123).UTC()}
}

// TestFactors: createFactor, listFactorsByUserId, swapFactor and
// deleteFactor on a single node and a cluster, scoped to their user, and
// deleteUser taking the factors and their index keys.
func TestFactors(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		for _, id := range []string{"u1", "u2"} {
			must[*core.User](t)(a.CreateUser(ctx, core.User{ID: id, Email: id + "@x"}))
		}
		f1 := testFactor("f1", "u1")
		got, err := a.CreateFactor(ctx, f1)
		if err != nil || !reflect.DeepEqual(*got, f1) {
			t.Fatalf("createFactor = %#v, %v", got, err)
		}
		if _, err := a.CreateFactor(ctx, testFactor("f1", "u2")); !errors.Is(err, core.ErrAlreadyExists) {
			t.Errorf("createFactor of another user's id: %v, want ErrAlreadyExists", err)
		}
		if _, err := a.CreateFactor(ctx, testFactor("f1", "u1")); !errors.Is(err, core.ErrAlreadyExists) {
			t.Errorf("createFactor of the same id again: %v, want ErrAlreadyExists", err)
		}
		if _, err := a.CreateFactor(ctx, testFactor("f9", "nobody")); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("createFactor for an unknown user: %v, want ErrNotFound", err)
		}
		f0 := core.Factor{ID: "f0", UserID: "u1", Type: core.FactorRecoveryCodes, CreatedAt: f1.CreatedAt,
			LastUsedAt: time.UnixMilli(shared.MaxMillis).UTC()}
		must[*core.Factor](t)(a.CreateFactor(ctx, f0))
		list, err := a.ListFactorsByUserID(ctx, "u1")
		if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], f0) || !reflect.DeepEqual(list[1], f1) {
			t.Errorf("listFactorsByUserId(u1) = %#v, %v", list, err)
		}
		if list, err := a.ListFactorsByUserID(ctx, "u2"); err != nil || list == nil || len(list) != 0 {
			t.Errorf("listFactorsByUserId(u2) = %#v, %v; want empty", list, err)
		}

		// swapFactor compares the stored secret and step.
		next := core.Factor{Name: "renamed", Secret: []byte("\x00next"), Step: 1<<40 + 1, LastUsedAt: time.UnixMilli(1_700_000_030_000).UTC()}
		stale := f1
		stale.Step--
		if got, err := a.SwapFactor(ctx, stale, next); !errors.Is(err, core.ErrFactorChanged) || got == nil || !reflect.DeepEqual(*got, f1) {
			t.Errorf("swapFactor from a stale step = %#v, %v; want the stored factor and ErrFactorChanged", got, err)
		}
		stale = f1
		stale.Secret = append(bytes.Clone(f1.Secret), 0)
		if _, err := a.SwapFactor(ctx, stale, next); !errors.Is(err, core.ErrFactorChanged) {
			t.Errorf("swapFactor from a longer secret: %v, want ErrFactorChanged", err)
		}
		other := f1
		other.UserID = "u2"
		if got, err := a.SwapFactor(ctx, other, next); got != nil || err != nil {
			t.Errorf("swapFactor of u1's factor as u2 = %#v, %v; want nil, nil", got, err)
		}
		// old's name, type and times are not compared; next's type and
		// creation time are ignored.
		old := f1
		old.Name, old.Type, old.CreatedAt = "other", core.FactorEmail, time.Time{}
		next.Type, next.CreatedAt, next.ID, next.UserID = core.FactorPasskey, time.Now(), "zz", "u2"
		want := f1
		want.Name, want.Secret, want.Step, want.LastUsedAt = next.Name, next.Secret, next.Step, next.LastUsedAt
		if got, err := a.SwapFactor(ctx, old, next); err != nil || got == nil || !reflect.DeepEqual(*got, want) {
			t.Errorf("swapFactor = %#v, %v; want %#v", got, err, want)
		}
		if list, _ := a.ListFactorsByUserID(ctx, "u1"); len(list) != 2 || !reflect.DeepEqual(list[1], want) {
			t.Errorf("after swapFactor: %#v", list)
		}
		// To no secret, step 0, never used, and back.
		empty := core.Factor{}
		if got, err := a.SwapFactor(ctx, want, empty); err != nil || got.Secret != nil || got.Step != 0 || !got.LastUsedAt.IsZero() || got.Name != "" || got.Type != f1.Type {
			t.Errorf("swapFactor to empty = %#v, %v", got, err)
		}
		back := f1
		if got, err := a.SwapFactor(ctx, core.Factor{UserID: "u1", ID: "f1", Secret: []byte{}}, back); err != nil || !reflect.DeepEqual(*got, f1) {
			t.Errorf("swapFactor from empty = %#v, %v; want %#v", got, err, f1)
		}
		if got, err := a.SwapFactor(ctx, testFactor("nope", "u1"), next); got != nil || err != nil {
			t.Errorf("swapFactor of an unknown id = %#v, %v", got, err)
		}

		// deleteFactor is scoped to the user.
		if got, err := a.DeleteFactor(ctx, "u2", "f1"); got != nil || err != nil {
			t.Errorf("deleteFactor of u1's factor as u2 = %#v, %v; want nil, nil", got, err)
		}
		if got, err := a.DeleteFactor(ctx, "u1", "f1"); err != nil || got == nil || !reflect.DeepEqual(*got, f1) {
			t.Errorf("deleteFactor = %#v, %v", got, err)
		}
		if got, err := a.DeleteFactor(ctx, "u1", "f1"); got != nil || err != nil {
			t.Errorf("deleteFactor again = %#v, %v", got, err)
		}
		if err := raw.CheckConsistency(ctx); err != nil {
			t.Errorf("after deleteFactor: %v", err)
		}
		// The id is free again, for another user too.
		must[*core.Factor](t)(a.CreateFactor(ctx, testFactor("f1", "u2")))

		// deleteUser takes the user's factors and their index keys.
		must[*core.User](t)(a.DeleteUser(ctx, "u2"))
		if left, err := raw.Mentions(ctx, "u2"); err != nil || len(left) > 0 {
			t.Errorf("after deleteUser: %v still mention u2 (%v)", left, err)
		}
		if list, err := a.ListFactorsByUserID(ctx, "u2"); err != nil || len(list) != 0 {
			t.Errorf("factors of a deleted user: %#v, %v", list, err)
		}
		must[*core.Factor](t)(a.CreateFactor(ctx, testFactor("f1", "u1")))
		stored, err := raw.Factors(ctx)
		if err != nil || len(stored) != 2 {
			t.Errorf("raw factors = %#v, %v; want f0 and f1 of u1", stored, err)
		}
	})
}

// TestFactorSwapRace: 50 swaps from the same value, from two adapters
// (two clients) on the same keys: exactly one succeeds, the others are
// refused with the stored factor, and the stored factor is the winner's.
func TestFactorSwapRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		var c2 redis.UniversalClient
		if a.cluster {
			c2 = cluster(t)
		} else {
			c2 = singleNode(t)
		}
		t.Cleanup(func() { _ = c2.Close() })
		b, err := New(ctx, c2, WithPrefix(a.k.p))
		if err != nil {
			t.Fatal(err)
		}
		must[*core.User](t)(a.CreateUser(ctx, core.User{ID: "u"}))
		f := testFactor("totp", "u")
		must[*core.Factor](t)(a.CreateFactor(ctx, f))
		const n = 50
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ad := a
				if i%2 == 1 {
					ad = b
				}
				next := f
				next.Step++
				next.Name = fmt.Sprint("winner ", i)
				got, err := ad.SwapFactor(ctx, f, next)
				switch {
				case err == nil && got.Name != next.Name:
					err = fmt.Errorf("succeeded with %#v", got)
				case errors.Is(err, core.ErrFactorChanged) && (got == nil || got.Step != f.Step+1):
					err = fmt.Errorf("refused with %#v", got)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Errorf("swaps %d and %d both succeeded", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, core.ErrFactorChanged):
				t.Errorf("swap %d: %v", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no swap succeeded")
		}
		list, err := a.ListFactorsByUserID(ctx, "u")
		if err != nil || len(list) != 1 || list[0].Name != fmt.Sprint("winner ", won) || list[0].Step != f.Step+1 {
			t.Errorf("stored after the race: %#v, %v", list, err)
		}
	})
}

// TestFactorCreateRace: two users create a factor with the same id at
// the same time, 8 ways: one succeeds, and the index key names its user.
func TestFactorCreateRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		const n = 8
		for i := range n {
			must[*core.User](t)(a.CreateUser(ctx, core.User{ID: fmt.Sprint("u", i)}))
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = a.CreateFactor(ctx, testFactor("same", fmt.Sprint("u", i)))
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if !errors.Is(err, core.ErrAlreadyExists) {
				t.Errorf("createFactor: %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d createFactor calls of one id succeeded, want 1", ok)
		}
		if fs, err := raw.Factors(ctx); err != nil || len(fs) != 1 {
			t.Errorf("stored factors: %#v, %v", fs, err)
		}
	})
}

// TestFactorCorruptRecord: a factor record that is not of the layout
// gives an error from every method that reads it, never a panic, and a
// swap of it changes nothing.
func TestFactorCorruptRecord(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		must[*core.User](t)(a.CreateUser(ctx, core.User{ID: "u"}))
		f := testFactor("f", "u")
		must[*core.Factor](t)(a.CreateFactor(ctx, f))
		enc := encodeFactor(&f)
		for _, bad := range []string{"", "\x02", enc[:3], enc[:40], "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", enc + "x"} {
			if err := c.HSet(ctx, a.k.factors("u"), "f", bad).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := a.ListFactorsByUserID(ctx, "u"); err == nil {
				t.Errorf("list of %q: no error", bad)
			}
			if _, err := a.SwapFactor(ctx, f, core.Factor{Step: 9}); err == nil {
				t.Errorf("swap of %q: no error", bad)
			}
			if v, _ := c.HGet(ctx, a.k.factors("u"), "f").Result(); v != bad {
				t.Errorf("swap of %q wrote %q", bad, v)
			}
		}
		if err := c.HSet(ctx, a.k.factors("u"), "f", enc).Err(); err != nil {
			t.Fatal(err)
		}
	})
}
