package bboltadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// The tests of second factors that look at the file itself, where the
// conformance suite cannot see: the buckets and index entries, the record
// bytes, swaps racing across adapters on one file in every write mode.

// Factors reads every factor straight from the factors bucket
// (conformance.FactorRaw).
func (r rawView) Factors(context.Context) ([]core.Factor, error) {
	return rawAll(r, bucketFactors, decodeFactor)
}

// factorIndex returns the user_factors entries as "user id/factor id",
// read straight from the file.
func factorIndex(t *testing.T, raw rawView) []string {
	t.Helper()
	var out []string
	if err := raw.each(bucketUserFactors, func(k, _ []byte) error {
		uid, id, err := splitPairKey(k)
		out = append(out, string(uid)+"/"+string(id))
		return err
	}); err != nil {
		t.Fatalf("reading user_factors: %v", err)
	}
	return out
}

// wantFactors checks the factors bucket against want (in id order, as the
// bucket holds them) and its index against want's (user id, id) pairs, and
// the store's consistency.
func wantFactors(t *testing.T, a *Adapter, raw rawView, step string, want ...core.Factor) {
	t.Helper()
	ctx := context.Background()
	got, err := raw.Factors(ctx)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: factors bucket\n got %+v\nwant %+v", step, got, want)
	}
	var wantIndex []string
	for _, f := range want {
		wantIndex = append(wantIndex, f.UserID+"/"+f.ID)
	}
	slices.Sort(wantIndex)
	if got := factorIndex(t, raw); !reflect.DeepEqual(slices.Sorted(slices.Values(got)), wantIndex) {
		t.Errorf("%s: user_factors = %q, want %q", step, got, wantIndex)
	}
	if err := a.CheckConsistency(ctx); err != nil {
		t.Errorf("%s: %v", step, err)
	}
}

func TestFactorEncoding(t *testing.T) {
	created := core.NormalizeTime(time.Now())
	pre1970 := time.Date(1969, 7, 20, 20, 17, 40, 123_000_000, time.UTC)
	factors := map[string]core.Factor{
		"bare":          {ID: "f", UserID: "u", Type: core.FactorEmail, CreatedAt: created},
		"totp":          {ID: "f1", UserID: "u1", Type: core.FactorTOTP, Name: "Phone", Secret: []byte("sealed"), Step: 58_000_000, CreatedAt: created, LastUsedAt: created.Add(time.Minute)},
		"binary secret": {ID: "\x00\xff", UserID: "\x00", Type: "x_y-9", Name: "é\x00", Secret: []byte{0, 0, 0xff, 0}, Step: math.MaxInt64, CreatedAt: pre1970, LastUsedAt: pre1970},
		"big secret":    {ID: "f2", UserID: "u", Type: core.FactorRecoveryCodes, Secret: bytes.Repeat([]byte{0xa5}, core.MaxFactorSecret), CreatedAt: created},
	}
	for name, f := range factors {
		roundTrip(t, "factor "+name, f, encodeFactor, decodeFactor)
	}
	// An empty secret is stored as none and reads back as nil.
	b := encodeFactor(&core.Factor{ID: "f", UserID: "u", Type: core.FactorEmail, Secret: []byte{}, CreatedAt: created})
	if f, err := decodeFactor(b); err != nil || f.Secret != nil {
		t.Errorf("empty secret reads back as %#v, %v; want nil", f.Secret, err)
	}

	good := encodeFactor(&core.Factor{ID: "f", UserID: "u", Type: core.FactorTOTP, Secret: []byte{1}, CreatedAt: created})
	for name, b := range map[string][]byte{
		"empty":            {},
		"only version":     {1},
		"unknown version":  append([]byte{2}, good[1:]...),
		"truncated":        good[:len(good)-1],
		"trailing bytes":   append(bytes.Clone(good), 0),
		"secret past end":  {1, 1, 'u', 1, 'f', 1, 't', 0, 0x7f, 1},
		"huge secret len":  {1, 1, 'u', 1, 'f', 1, 't', 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"non-minimal step": {1, 1, 'u', 1, 'f', 1, 't', 0, 0, 0x80, 0x00, 2, 0},
	} {
		if _, err := decodeFactor(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeFactor(%s): err = %v, want ErrCorrupt", name, err)
		}
	}
}

// TestFactors follows factors through create, list, swap and delete, in
// the buckets: another user's id is never found, changed or deleted; a
// refused write changes nothing; deleteUser takes the user's factors and
// their index entries and leaves the other user's.
func TestFactors(t *testing.T) {
	ctx := context.Background()
	a, raw := newTestAdapter(t)
	created := core.NormalizeTime(time.Now())
	for _, id := range []string{"u1", "u2"} {
		must(t)(a.CreateUser(ctx, core.User{ID: id}))
	}
	f1 := core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP, Name: "Phone", Secret: []byte{0, 's', 0}, CreatedAt: created}
	f0 := core.Factor{ID: "f0", UserID: "u1", Type: core.FactorRecoveryCodes, Secret: []byte("h1h2"), CreatedAt: created}
	g1 := core.Factor{ID: "g1", UserID: "u2", Type: core.FactorEmail, CreatedAt: created}
	for _, f := range []core.Factor{f1, f0, g1} {
		got, err := a.CreateFactor(ctx, f)
		if err != nil || !reflect.DeepEqual(*got, f) {
			t.Fatalf("CreateFactor(%s) = %+v, %v", f.ID, got, err)
		}
	}
	wantFactors(t, a, raw, "created", f0, f1, g1)
	if got, err := a.ListFactorsByUserID(ctx, "u1"); err != nil || !reflect.DeepEqual(got, []core.Factor{f0, f1}) {
		t.Errorf("ListFactorsByUserID(u1) = %+v, %v; want f0, f1 in id order", got, err)
	}
	if got, err := a.ListFactorsByUserID(ctx, "nobody"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ListFactorsByUserID(nobody) = %#v, %v; want an empty, non-nil list", got, err)
	}

	// Refused creates change nothing.
	refused := map[string]struct {
		f    core.Factor
		want error
	}{
		"unknown user":           {core.Factor{ID: "x", UserID: "ghost", Type: core.FactorTOTP, CreatedAt: created}, core.ErrNotFound},
		"id of the same user":    {core.Factor{ID: "f1", UserID: "u1", Type: core.FactorEmail, CreatedAt: created}, core.ErrAlreadyExists},
		"id of another user":     {core.Factor{ID: "f1", UserID: "u2", Type: core.FactorEmail, CreatedAt: created}, core.ErrAlreadyExists},
		"secret too long":        {core.Factor{ID: "x", UserID: "u1", Type: core.FactorTOTP, Secret: make([]byte, core.MaxFactorSecret+1), CreatedAt: created}, core.ErrInvalidInput},
		"bad type":               {core.Factor{ID: "x", UserID: "u1", Type: "TOTP", CreatedAt: created}, core.ErrInvalidInput},
		"negative step":          {core.Factor{ID: "x", UserID: "u1", Type: core.FactorTOTP, Step: -1, CreatedAt: created}, core.ErrInvalidInput},
		"no creation time":       {core.Factor{ID: "x", UserID: "u1", Type: core.FactorTOTP}, core.ErrInvalidInput},
		"unencodable time":       {core.Factor{ID: "x", UserID: "u1", Type: core.FactorTOTP, CreatedAt: time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC)}, core.ErrInvalidInput},
		"unencodable last used":  {core.Factor{ID: "x", UserID: "u1", Type: core.FactorTOTP, CreatedAt: created, LastUsedAt: time.Date(-300_000_000, 1, 1, 0, 0, 0, 0, time.UTC)}, core.ErrInvalidInput},
		"last used at the epoch": {core.Factor{ID: "x", UserID: "u1", Type: core.FactorTOTP, CreatedAt: created, LastUsedAt: time.Unix(0, 0)}, core.ErrInvalidInput},
		"empty id":               {core.Factor{UserID: "u1", Type: core.FactorTOTP, CreatedAt: created}, core.ErrInvalidInput},
		"id too long for bbolt":  {core.Factor{ID: string(make([]byte, bolt.MaxKeySize+1)), UserID: "u1", Type: core.FactorTOTP, CreatedAt: created}, core.ErrInvalidInput},
		"name of 257 bytes":      {core.Factor{ID: "x", UserID: "u1", Type: core.FactorTOTP, Name: string(make([]byte, 257)), CreatedAt: created}, core.ErrInvalidInput},
		"type of 33 bytes":       {core.Factor{ID: "x", UserID: "u1", Type: core.FactorType(bytes.Repeat([]byte{'a'}, 33)), CreatedAt: created}, core.ErrInvalidInput},
		"user id empty, id free": {core.Factor{ID: "x", Type: core.FactorTOTP, CreatedAt: created}, core.ErrInvalidInput},
	}
	for name, c := range refused {
		if got, err := a.CreateFactor(ctx, c.f); got != nil || !errors.Is(err, c.want) {
			t.Errorf("CreateFactor(%s) = %+v, %v; want nil and %v", name, got, err, c.want)
		}
	}
	wantFactors(t, a, raw, "after refused creates", f0, f1, g1)

	// Swaps: another user's id finds nothing; a stale old changes nothing
	// and returns the stored factor; a good one sets the four fields only.
	used := created.Add(30 * time.Second)
	next := core.Factor{ID: "ignored", UserID: "ignored", Type: "ignored", Name: "Work phone", Secret: []byte{9}, Step: 7, CreatedAt: used, LastUsedAt: used}
	if got, err := a.SwapFactor(ctx, core.Factor{ID: "f1", UserID: "u2", Secret: f1.Secret}, next); got != nil || err != nil {
		t.Errorf("SwapFactor of another user's factor = %+v, %v; want nil, nil", got, err)
	}
	if got, err := a.SwapFactor(ctx, core.Factor{ID: "nope", UserID: "u1"}, next); got != nil || err != nil {
		t.Errorf("SwapFactor of an unknown id = %+v, %v; want nil, nil", got, err)
	}
	for name, old := range map[string]core.Factor{
		"secret":       {ID: "f1", UserID: "u1", Secret: []byte{0, 's'}},
		"secret nil":   {ID: "f1", UserID: "u1"},
		"step":         {ID: "f1", UserID: "u1", Secret: f1.Secret, Step: 1},
		"secret, step": {ID: "f1", UserID: "u1", Secret: []byte("other"), Step: 3},
	} {
		if got, err := a.SwapFactor(ctx, old, next); !errors.Is(err, core.ErrFactorChanged) || got == nil || !reflect.DeepEqual(*got, f1) {
			t.Errorf("SwapFactor from a stale %s = %+v, %v; want the stored factor and ErrFactorChanged", name, got, err)
		}
	}
	if got, err := a.SwapFactor(ctx, f1, core.Factor{LastUsedAt: time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC)}); got != nil || !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("SwapFactor to an unencodable lastUsedAt = %+v, %v; want ErrInvalidInput", got, err)
	}
	if got, err := a.SwapFactor(ctx, f1, core.Factor{LastUsedAt: time.UnixMilli(0)}); got != nil || !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("SwapFactor to lastUsedAt at the Unix epoch = %+v, %v; want ErrInvalidInput", got, err)
	}
	wantFactors(t, a, raw, "after refused swaps", f0, f1, g1)

	f1b := f1
	f1b.Name, f1b.Secret, f1b.Step, f1b.LastUsedAt = next.Name, next.Secret, next.Step, next.LastUsedAt
	if got, err := a.SwapFactor(ctx, f1, next); err != nil || got == nil || !reflect.DeepEqual(*got, f1b) {
		t.Errorf("SwapFactor = %+v, %v; want %+v", got, err, f1b)
	}
	wantFactors(t, a, raw, "after a swap", f0, f1b, g1)
	// The same swap again is stale now: one use.
	if _, err := a.SwapFactor(ctx, f1, next); !errors.Is(err, core.ErrFactorChanged) {
		t.Errorf("the same swap twice: %v; want ErrFactorChanged", err)
	}
	// A swap to an empty secret and back to never used.
	f1c := f1b
	f1c.Secret, f1c.LastUsedAt = nil, time.Time{}
	if got, err := a.SwapFactor(ctx, f1b, core.Factor{Name: f1b.Name, Secret: []byte{}, Step: f1b.Step}); err != nil || got == nil || !reflect.DeepEqual(*got, f1c) {
		t.Errorf("SwapFactor to no secret = %+v, %v; want %+v", got, err, f1c)
	}
	wantFactors(t, a, raw, "after a swap to no secret", f0, f1c, g1)

	// Deletes: another user's factor stays.
	if got, err := a.DeleteFactor(ctx, "u2", "f1"); got != nil || err != nil {
		t.Errorf("DeleteFactor of another user's factor = %+v, %v; want nil, nil", got, err)
	}
	if got, err := a.DeleteFactor(ctx, "u1", ""); got != nil || err != nil {
		t.Errorf("DeleteFactor of an empty id = %+v, %v; want nil, nil", got, err)
	}
	wantFactors(t, a, raw, "after refused deletes", f0, f1c, g1)
	if got, err := a.DeleteFactor(ctx, "u1", "f0"); err != nil || got == nil || !reflect.DeepEqual(*got, f0) {
		t.Errorf("DeleteFactor(u1, f0) = %+v, %v", got, err)
	}
	if got, err := a.DeleteFactor(ctx, "u1", "f0"); got != nil || err != nil {
		t.Errorf("DeleteFactor twice = %+v, %v; want nil, nil", got, err)
	}
	wantFactors(t, a, raw, "after a delete", f1c, g1)

	// deleteUser takes the user's factors with it; the id is free again.
	must(t)(a.DeleteUser(ctx, "u1"))
	wantFactors(t, a, raw, "after deleteUser(u1)", g1)
	must(t)(a.CreateUser(ctx, core.User{ID: "u1"}))
	if got, err := a.ListFactorsByUserID(ctx, "u1"); err != nil || len(got) != 0 {
		t.Errorf("a new user with a deleted user's id has factors %+v, %v", got, err)
	}
	must(t)(a.CreateFactor(ctx, f1))
	wantFactors(t, a, raw, "the deleted factor's id reused", f1, g1)
}

// TestFactorUserPrefixes: users whose ids are prefixes of each other, or
// hold the bytes of a length prefix, never see each other's factors.
func TestFactorUserPrefixes(t *testing.T) {
	ctx := context.Background()
	a, raw := newTestAdapter(t)
	created := core.NormalizeTime(time.Now())
	users := []string{"u", "u1", "\x02u1", "u\x00"}
	var all []core.Factor
	for i, u := range users {
		must(t)(a.CreateUser(ctx, core.User{ID: u}))
		f := core.Factor{ID: fmt.Sprintf("%d-%s", i, u), UserID: u, Type: core.FactorTOTP, CreatedAt: created}
		must(t)(a.CreateFactor(ctx, f))
		all = append(all, f)
	}
	for i, u := range users {
		if got, err := a.ListFactorsByUserID(ctx, u); err != nil || !reflect.DeepEqual(got, []core.Factor{all[i]}) {
			t.Errorf("ListFactorsByUserID(%q) = %+v, %v; want only %+v", u, got, err, all[i])
		}
	}
	must(t)(a.DeleteUser(ctx, "u"))
	wantFactors(t, a, raw, "after deleteUser(u)", all[1], all[2], all[3])
}

// TestSwapFactorRaces: of 50 swaps from one value at once, from two
// adapters on the same file, exactly one succeeds and the others get
// ErrFactorChanged with the winner's factor, in every write mode (in the
// group mode they share one commit: a mismatch is no failure of the
// group).
func TestSwapFactorRaces(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			a, raw := newTestAdapter(t, WithWriteMode(mode))
			b, err := New(ctx, a.DB(), WithWriteMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			created := core.NormalizeTime(time.Now())
			must(t)(a.CreateUser(ctx, core.User{ID: "u1"}))
			old := core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP, Secret: []byte("sealed"), Step: 100, CreatedAt: created}
			must(t)(a.CreateFactor(ctx, old))
			const n = 50
			release := func() {}
			if mode == WriteGroup {
				release = holdLeader(t, a) // a's writes queue; b has its own queue
			}
			got := make([]*core.Factor, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				ad := a
				if i%2 == 1 {
					ad = b
				}
				wg.Go(func() {
					got[i], errs[i] = ad.SwapFactor(ctx, old, core.Factor{Secret: old.Secret, Step: 101 + int64(i), LastUsedAt: created})
				})
			}
			if mode == WriteGroup {
				waitQueued(t, a, n/2)
			}
			release()
			wg.Wait()
			var winner *core.Factor
			for i, err := range errs {
				switch {
				case err == nil:
					if winner != nil {
						t.Errorf("two swaps from step 100 succeeded: to %d and %d", winner.Step, got[i].Step)
					}
					winner = got[i]
				case !errors.Is(err, core.ErrFactorChanged):
					t.Errorf("swap %d: %v", i, err)
				}
			}
			if winner == nil {
				t.Fatal("no swap succeeded")
			}
			for i, err := range errs {
				if err != nil && (got[i] == nil || !reflect.DeepEqual(*got[i], *winner)) {
					t.Errorf("swap %d lost but returned %+v, want the winner's %+v", i, got[i], winner)
				}
			}
			wantFactors(t, a, raw, "after the race", *winner)
		})
	}
}

// TestFactorsRaceDeleteUser: factors created while their user is deleted
// either land before the delete (and go with it) or are refused; none is
// left behind, in every write mode.
func TestFactorsRaceDeleteUser(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			a, raw := newTestAdapter(t, WithWriteMode(mode))
			created := core.NormalizeTime(time.Now())
			must(t)(a.CreateUser(ctx, core.User{ID: "u1"}))
			const n = 20
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					_, errs[i] = a.CreateFactor(ctx, core.Factor{ID: fmt.Sprintf("f%02d", i), UserID: "u1", Type: core.FactorTOTP, CreatedAt: created})
				})
			}
			wg.Go(func() {
				if _, err := a.DeleteUser(ctx, "u1"); err != nil {
					t.Errorf("DeleteUser: %v", err)
				}
			})
			wg.Wait()
			for i, err := range errs {
				if err != nil && !errors.Is(err, core.ErrNotFound) {
					t.Errorf("create %d: %v", i, err)
				}
			}
			wantFactors(t, a, raw, "after the race")
		})
	}
}
