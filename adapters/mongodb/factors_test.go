package mongoadapter_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/authport/authport/core"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// factor returns a factor of the user, created a minute ago.
func factor(userID, id string, typ core.FactorType, secret []byte, step int64) core.Factor {
	return core.Factor{ID: id, UserID: userID, Type: typ, Name: "name of " + id, Secret: secret, Step: step,
		CreatedAt: time.Now().Add(-time.Minute)}
}

// rawFactors reads the stored factors with the driver alone, by id.
func rawFactors(t *testing.T, r rawView) map[string]core.Factor {
	t.Helper()
	all, err := r.Factors(t.Context())
	if err != nil {
		t.Fatalf("raw factors: %v", err)
	}
	out := map[string]core.Factor{}
	for _, f := range all {
		out[f.ID] = f
	}
	return out
}

// sameFactor fails t unless got is want as stored (normalised).
func sameFactor(t *testing.T, what string, got *core.Factor, want core.Factor) {
	t.Helper()
	if w := want.Normalize(); got == nil || !reflect.DeepEqual(*got, w) {
		t.Fatalf("%s = %+v, want %+v", what, got, w)
	}
}

// TestFactors checks the four factor methods on the server, and what they
// store, read with the driver alone: every field as given (a secret with
// NUL bytes, an empty one), another user's factor never found, changed or
// deleted, bad input changing nothing, and deleteUser taking the user's
// factors with it.
func TestFactors(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	raw := rawView{db: db, names: a.Collections()}
	ctx := t.Context()
	createUsers(t, a, "u1", "u2")

	totp := factor("u1", "f-b", core.FactorTOTP, []byte{0, 1, 0, 0xff, 0}, 0)
	rec := factor("u1", "f-a", core.FactorRecoveryCodes, []byte{}, 0)
	dev := factor("u2", "f-c", core.FactorTrustedDevice, bytes.Repeat([]byte{7}, core.MaxFactorSecret), 3)
	dev.LastUsedAt = time.Now()
	for _, f := range []core.Factor{totp, rec, dev} {
		got, err := a.CreateFactor(ctx, f)
		if err != nil {
			t.Fatalf("CreateFactor(%s): %v", f.ID, err)
		}
		sameFactor(t, "CreateFactor("+f.ID+")", got, f)
	}
	want := map[string]core.Factor{"f-a": rec.Normalize(), "f-b": totp.Normalize(), "f-c": dev.Normalize()}
	if got := rawFactors(t, raw); !reflect.DeepEqual(got, want) {
		t.Fatalf("stored %+v\nwant %+v", got, want)
	}

	// An id taken by any user, and an unknown user, store nothing.
	if _, err := a.CreateFactor(ctx, factor("u2", "f-a", core.FactorEmail, nil, 0)); !errors.Is(err, core.ErrAlreadyExists) {
		t.Errorf("CreateFactor with another user's id: %v, want ErrAlreadyExists", err)
	}
	if _, err := a.CreateFactor(ctx, factor("nobody", "f-x", core.FactorEmail, nil, 0)); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("CreateFactor for an unknown user: %v, want ErrNotFound", err)
	}
	if _, err := a.CreateFactor(ctx, factor("u1", "f-y", core.FactorEmail, nil, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeleteFactor(ctx, "u1", "f-y"); err != nil {
		t.Fatal(err)
	}
	if got := rawFactors(t, raw); !reflect.DeepEqual(got, want) {
		t.Fatalf("after refused creates, stored %+v\nwant %+v", got, want)
	}

	list, err := a.ListFactorsByUserID(ctx, "u1")
	if err != nil || len(list) != 2 || list[0].ID != "f-a" || list[1].ID != "f-b" {
		t.Fatalf("ListFactorsByUserID(u1) = %+v, %v; want f-a, f-b", list, err)
	}
	sameFactor(t, "listed f-a", &list[0], rec)
	sameFactor(t, "listed f-b", &list[1], totp)
	if list, err := a.ListFactorsByUserID(ctx, "nobody"); err != nil || list == nil || len(list) != 0 {
		t.Errorf("ListFactorsByUserID(nobody) = %#v, %v; want an empty, non-nil list", list, err)
	}

	// A swap from the stored secret and step writes next's name, secret,
	// step and lastUsedAt, and nothing else.
	next := totp
	next.Name, next.Secret, next.Step, next.LastUsedAt = "Phone", []byte{9, 0, 9}, 59000001, time.Now()
	next.Type, next.CreatedAt, next.UserID = core.FactorEmail, time.Now().Add(time.Hour), "u2" // ignored
	got, err := a.SwapFactor(ctx, totp.Normalize(), next.Normalize())
	swapped := totp
	swapped.Name, swapped.Secret, swapped.Step, swapped.LastUsedAt = next.Name, next.Secret, next.Step, next.LastUsedAt
	if err != nil {
		t.Fatalf("SwapFactor: %v", err)
	}
	sameFactor(t, "SwapFactor", got, swapped)
	want["f-b"] = swapped.Normalize()
	if got := rawFactors(t, raw); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the swap, stored %+v\nwant %+v", got, want)
	}

	// The same swap again: changed, with the stored factor; another
	// user's or a missing id: nil, nil. None writes.
	got, err = a.SwapFactor(ctx, totp.Normalize(), next.Normalize())
	if !errors.Is(err, core.ErrFactorChanged) {
		t.Errorf("replayed SwapFactor: %v, want ErrFactorChanged", err)
	}
	sameFactor(t, "replayed SwapFactor's factor", got, swapped)
	staleSecret := swapped
	staleSecret.Secret = []byte{9, 0, 8}
	if _, err := a.SwapFactor(ctx, staleSecret.Normalize(), next.Normalize()); !errors.Is(err, core.ErrFactorChanged) {
		t.Errorf("SwapFactor from another secret and the stored step: %v, want ErrFactorChanged", err)
	}
	for _, old := range []core.Factor{
		func() core.Factor { f := swapped; f.UserID = "u2"; return f }(),
		func() core.Factor { f := swapped; f.UserID = "nobody"; return f }(),
		func() core.Factor { f := swapped; f.ID = "f-c"; return f }(), // u2's id, u1 as the user
		func() core.Factor { f := dev; f.UserID = "u1"; return f }(),
		func() core.Factor { f := swapped; f.ID = "missing"; return f }(),
	} {
		if got, err := a.SwapFactor(ctx, old.Normalize(), next.Normalize()); got != nil || err != nil {
			t.Errorf("SwapFactor(user %s, id %s) = %+v, %v; want nil, nil", old.UserID, old.ID, got, err)
		}
	}
	if got := rawFactors(t, raw); !reflect.DeepEqual(got, want) {
		t.Fatalf("after refused swaps, stored %+v\nwant %+v", got, want)
	}

	// A zero lastUsedAt removes the field; an empty secret is stored
	// empty and compared as such.
	reset := swapped
	reset.Secret, reset.LastUsedAt, reset.Step = nil, time.Time{}, 0
	if got, err = a.SwapFactor(ctx, swapped.Normalize(), reset.Normalize()); err != nil {
		t.Fatal(err)
	}
	sameFactor(t, "SwapFactor to an empty secret", got, reset)
	again := reset
	again.Secret = []byte{}
	again.Step = 1
	if got, err = a.SwapFactor(ctx, reset.Normalize(), again.Normalize()); err != nil {
		t.Fatalf("SwapFactor from an empty secret: %v", err)
	}
	sameFactor(t, "SwapFactor from an empty secret", got, again)
	want["f-b"] = again.Normalize()

	// deleteFactor is scoped to the user.
	if got, err := a.DeleteFactor(ctx, "u2", "f-b"); got != nil || err != nil {
		t.Errorf("DeleteFactor(u2, f-b) = %+v, %v; want nil, nil", got, err)
	}
	if got := rawFactors(t, raw); !reflect.DeepEqual(got, want) {
		t.Fatalf("after deleting another user's factor, stored %+v\nwant %+v", got, want)
	}
	got, err = a.DeleteFactor(ctx, "u1", "f-b")
	if err != nil {
		t.Fatal(err)
	}
	sameFactor(t, "DeleteFactor(u1, f-b)", got, again)
	if got, err := a.DeleteFactor(ctx, "u1", "f-b"); got != nil || err != nil {
		t.Errorf("DeleteFactor again = %+v, %v; want nil, nil", got, err)
	}
	delete(want, "f-b")

	// deleteUser takes the user's factors, and only those.
	if _, err := a.DeleteUser(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	delete(want, "f-a")
	if got := rawFactors(t, raw); !reflect.DeepEqual(got, want) {
		t.Fatalf("after deleteUser(u1), stored %+v\nwant %+v", got, want)
	}
}

// TestFactorsObjectIDs checks the factor methods with user ids stored as
// ObjectIds: the userId is one, and a user id that cannot be one finds
// nothing and stores nothing.
func TestFactorsObjectIDs(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s, mongoadapter.WithObjectIDs())
	ctx := t.Context()
	uid := bson.NewObjectID().Hex()
	createUsers(t, a, uid)
	f := factor(uid, "f1", core.FactorTOTP, []byte("sealed"), 1)
	if _, err := a.CreateFactor(ctx, f); err != nil {
		t.Fatal(err)
	}
	doc, err := db.Collection(a.Collections().Factors).FindOne(ctx, bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.Lookup("userId"); v.Type != bson.TypeObjectID || v.ObjectID().Hex() != uid {
		t.Errorf("stored userId %v, want the ObjectId %s", v, uid)
	}
	list, err := a.ListFactorsByUserID(ctx, uid)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListFactorsByUserID = %+v, %v", list, err)
	}
	sameFactor(t, "listed", &list[0], f)

	bad := f
	bad.UserID = "not-an-object-id"
	bad.ID = "f2"
	if _, err := a.CreateFactor(ctx, bad); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("CreateFactor with a user id that is no ObjectId: %v, want ErrInvalidInput", err)
	}
	if l, err := a.ListFactorsByUserID(ctx, bad.UserID); err != nil || l == nil || len(l) != 0 {
		t.Errorf("ListFactorsByUserID(bad id) = %#v, %v", l, err)
	}
	old := f
	old.UserID = bad.UserID
	if got, err := a.SwapFactor(ctx, old, f); got != nil || err != nil {
		t.Errorf("SwapFactor(bad id) = %+v, %v", got, err)
	}
	if got, err := a.DeleteFactor(ctx, bad.UserID, f.ID); got != nil || err != nil {
		t.Errorf("DeleteFactor(bad id) = %+v, %v", got, err)
	}
	if n, err := db.Collection(a.Collections().Factors).CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("%d factors stored (%v), want 1", n, err)
	}
}

// TestFactorsCorruptDocuments stores factor documents another program
// could have written, of the wrong BSON types, and checks that reading them
// fails with an error rather than a wrong factor or a panic.
func TestFactorsCorruptDocuments(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := t.Context()
	createUsers(t, a, "u")
	coll := db.Collection(a.Collections().Factors)
	base := func(id string) bson.D {
		return bson.D{{Key: "_id", Value: id}, {Key: "userId", Value: "u"}, {Key: "type", Value: "totp"}, {Key: "name", Value: ""},
			{Key: "secret", Value: bson.Binary{Data: []byte{1}}}, {Key: "step", Value: int64(1)}, {Key: "createdAt", Value: bson.DateTime(1)}}
	}
	set := func(d bson.D, key string, v any) bson.D {
		d = slices.Clone(d)
		for i := range d {
			if d[i].Key == key {
				d[i].Value = v
			}
		}
		return d
	}
	for _, c := range []struct {
		name string
		doc  bson.D
	}{
		{"secret a string", set(base("c1"), "secret", "AAEC")},
		{"secret a number", set(base("c2"), "secret", int32(5))},
		{"step negative", set(base("c3"), "step", int64(-1))},
		{"step a string", set(base("c4"), "step", "1")},
		{"createdAt a string", set(base("c6"), "createdAt", "yesterday")},
		{"_id an ObjectId", set(base(""), "_id", bson.NewObjectID())},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, err := coll.InsertOne(ctx, c.doc); err != nil {
				t.Fatal(err)
			}
			id, _ := c.doc[0].Value.(string)
			if l, err := a.ListFactorsByUserID(ctx, "u"); err == nil {
				t.Errorf("ListFactorsByUserID = %+v, want an error", l)
			}
			if f, err := a.DeleteFactor(ctx, "u", id); err == nil && f != nil {
				t.Errorf("DeleteFactor = %+v, want an error", f)
			}
		})
	}
}

// TestSwapFactorRace runs 50 swaps from one stored secret and step at once,
// half through a second adapter with a client of its own (a second process
// of the application), and checks that exactly one succeeds, that the
// others are told the factor changed, and that the winner's values are
// stored. On FerretDB, whose updates are not atomic, this exercises the
// lock document.
func TestSwapFactorRace(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	b := peerOn(db)(t).(*mongoadapter.Adapter)
	raw := rawView{db: db, names: a.Collections()}
	ctx := t.Context()
	createUsers(t, a, "u")
	const racers = 50
	for round := range 3 {
		id := fmt.Sprintf("f%d", round)
		old := factor("u", id, core.FactorTOTP, []byte("sealed key"), 100).Normalize()
		if _, err := a.CreateFactor(ctx, old); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []core.Factor
		var errs []error
		changed := 0
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ad := a
				if i%2 == 1 {
					ad = b
				}
				next := old
				next.Name, next.Step, next.LastUsedAt = fmt.Sprintf("racer %d", i), 101, time.Now()
				got, err := ad.SwapFactor(ctx, old, next)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && got != nil:
					won = append(won, *got)
				case errors.Is(err, core.ErrFactorChanged) && got != nil && got.Step == 101:
					changed++
				default:
					errs = append(errs, fmt.Errorf("racer %d: %+v, %w", i, got, err))
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("round %d: %v", round, errors.Join(errs...))
		}
		if len(won) != 1 || changed != racers-1 {
			t.Fatalf("round %d: %d swaps succeeded and %d were told the factor changed; want 1 and %d", round, len(won), changed, racers-1)
		}
		if stored := rawFactors(t, raw)[id]; !reflect.DeepEqual(stored, won[0]) {
			t.Fatalf("round %d: stored %+v, the winner got %+v", round, stored, won[0])
		}
	}
}

// TestDeleteFactorRace deletes one factor from 20 callers at once, across
// two adapters: exactly one gets it back (on FerretDB too, whose
// findAndModify is not atomic).
func TestDeleteFactorRace(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	b := peerOn(db)(t).(*mongoadapter.Adapter)
	ctx := t.Context()
	createUsers(t, a, "u")
	for round := range 3 {
		id := fmt.Sprintf("f%d", round)
		if _, err := a.CreateFactor(ctx, factor("u", id, core.FactorTrustedDevice, []byte("h"), 0)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := 0
		var errs []error
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ad := a
				if i%2 == 1 {
					ad = b
				}
				f, err := ad.DeleteFactor(ctx, "u", id)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if f != nil {
					got++
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 || got != 1 {
			t.Fatalf("round %d: %d callers got the deleted factor (errors %v), want 1", round, got, errors.Join(errs...))
		}
	}
}

// TestFactorsThroughStore checks the adapter behind the checked layer, as
// the library calls it: core.Probe finds all four methods, and a replayed
// swap is refused.
func TestFactorsThroughStore(t *testing.T) {
	s := newServer(t, nil)
	a, _ := newAdapter(t, s)
	st := core.NewStore(a)
	for _, m := range core.FactorMethods() {
		if !core.Probe(a).HasExtension(core.Extension(m)) || !core.Probe(st).HasExtension(core.Extension(m)) {
			t.Fatalf("core.Probe does not find %s: %v", m, core.Probe(a))
		}
	}
	ctx := context.Background()
	createUsers(t, a, "u")
	f := factor("u", "f", core.FactorTOTP, []byte{0}, 0)
	if _, err := st.CreateFactor(ctx, f); err != nil {
		t.Fatal(err)
	}
	next := f
	next.Step = 7
	if got, err := st.SwapFactor(ctx, f, next); err != nil || got == nil || got.Step != 7 {
		t.Fatalf("Store.SwapFactor = %+v, %v", got, err)
	}
	if got, err := st.SwapFactor(ctx, f, next); got != nil || !errors.Is(err, core.ErrFactorChanged) {
		t.Fatalf("Store.SwapFactor replayed = %+v, %v; want nil and ErrFactorChanged", got, err)
	}
}

// TestDeleteUserRacingCreateFactor runs deleteUser and createFactor for one
// user at once, from two adapters, many times: once both have returned, no
// factor of the deleted user is left (createFactor re-reads the user after
// its insert and takes the factor back when the user is gone).
func TestDeleteUserRacingCreateFactor(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	b := peerOn(db)(t).(*mongoadapter.Adapter)
	raw := rawView{db: db, names: a.Collections()}
	ctx := t.Context()
	created := 0
	for trial := range 30 {
		uid := fmt.Sprintf("u%d", trial)
		createUsers(t, a, uid)
		var wg sync.WaitGroup
		var createErr, deleteErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, createErr = b.CreateFactor(ctx, factor(uid, "f"+uid, core.FactorTOTP, []byte("k"), 0))
		}()
		go func() {
			defer wg.Done()
			_, deleteErr = a.DeleteUser(ctx, uid)
		}()
		wg.Wait()
		if deleteErr != nil {
			t.Fatalf("trial %d: DeleteUser: %v", trial, deleteErr)
		}
		if createErr == nil {
			created++
		} else if !errors.Is(createErr, core.ErrNotFound) {
			t.Fatalf("trial %d: CreateFactor: %v, want success or ErrNotFound", trial, createErr)
		}
		if left := rawFactors(t, raw); len(left) != 0 {
			t.Fatalf("trial %d: factors left of the deleted user: %+v", trial, left)
		}
	}
	t.Logf("createFactor succeeded before the deletion in %d of 30 trials", created)
}
