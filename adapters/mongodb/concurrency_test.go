package mongoadapter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// concurrentRounds is how many times TestConcurrentUpdates races two
// updates of one record. FerretDB rewrote the whole document on every
// update, so without the adapter's per-record lock one of the two was lost
// in every round.
const concurrentRounds = 20

// raceCalls runs call with x and with y at the same time, as closely as
// two goroutines can start together, and fails t (saying what) when
// either returns an error.
func raceCalls[U, R any](t *testing.T, what string, call func(context.Context, U) (R, error), x, y U) {
	t.Helper()
	args := []U{x, y}
	errs := make([]error, 2)
	coretest.Concurrently(2, func(i int) { _, errs[i] = call(context.Background(), args[i]) })
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("%s: %v, %v", what, errs[0], errs[1])
	}
}

// TestConcurrentUpdates races updates of different fields of one record
// (updateUser of the name against updateUser of the image, updateSession
// of the user against updateSession of the expiry) and checks that both
// updates are kept. On
// servers without atomic updates (FerretDB) the adapter serialises the
// updates of one record; on MongoDB each is one atomic findOneAndUpdate.
func TestConcurrentUpdates(t *testing.T) {
	s := newServer(t, nil)
	a, _ := newAdapter(t, s)
	ctx := context.Background()
	createUsers(t, a, "u", "v")
	base := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: base}); err != nil {
		t.Fatal(err)
	}
	ptr := func(s string) *string { return &s }
	lostUser, lostSession := 0, 0
	for i := range concurrentRounds {
		name, image := fmt.Sprintf("name-%d", i), fmt.Sprintf("image-%d", i)
		raceCalls(t, fmt.Sprintf("round %d: UpdateUser", i), a.UpdateUser,
			core.UserUpdate{ID: "u", Name: core.Set(ptr(name))}, core.UserUpdate{ID: "u", Image: core.Set(ptr(image))})
		u, err := a.GetUser(ctx, "u")
		if err != nil || u == nil {
			t.Fatalf("round %d: GetUser = %+v, %v", i, u, err)
		}
		if u.Name == nil || *u.Name != name || u.Image == nil || *u.Image != image {
			lostUser++
			t.Errorf("round %d: after concurrent updates of the name to %q and the image to %q, the user is %s", i, name, image, fmtUser(u))
		}

		owner, expires := []string{"u", "v"}[i%2], base.Add(time.Duration(i+1)*time.Minute)
		raceCalls(t, fmt.Sprintf("round %d: UpdateSession", i), a.UpdateSession,
			core.SessionUpdate{SessionToken: "s", UserID: core.Set(owner)}, core.SessionUpdate{SessionToken: "s", Expires: core.Set(expires)})
		su, err := a.GetSessionAndUser(ctx, "s")
		if err != nil || su == nil {
			t.Fatalf("round %d: GetSessionAndUser = %+v, %v", i, su, err)
		}
		if su.Session.UserID != owner || !su.Session.Expires.Equal(expires) {
			lostSession++
			t.Errorf("round %d: after concurrent updates of the user to %q and the expiry to %v, the session is %+v", i, owner, expires, su.Session)
		}

	}
	if lostUser+lostSession > 0 {
		t.Errorf("an update was lost in %d (user) and %d (session) of %d rounds; capabilities %+v",
			lostUser, lostSession, concurrentRounds, a.Capabilities())
	}
}

func fmtUser(u *core.User) string {
	s := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", *p)
	}
	return fmt.Sprintf("{ID:%q Email:%q Name:%s Image:%s}", u.ID, u.Email, s(u.Name), s(u.Image))
}

// TestExtendSessionOnce runs extendSession concurrently with the same from
// on one session, three rounds in a row, through two adapter instances on
// one database (two processes: on FerretDB their per-record locks meet only
// in the lock document), and checks with [coretest.ExtendOnce] that exactly
// one call writes and that every call returns the expiry it wrote; then that
// a stale from changes nothing and returns the session as stored, and that
// an unknown token gives nil.
func TestExtendSessionOnce(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := context.Background()
	b, err := mongoadapter.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("capabilities %+v", a.Capabilities())
		}
	})
	createUsers(t, a, "u")
	// Whole milliseconds: the adapter stores BSON dates, and from is what a
	// caller read back, at the stored precision.
	base := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: base}); err != nil {
		t.Fatal(err)
	}
	stored := base
	for range 3 {
		stored = coretest.ExtendOnce(t, ctx, "s", "u", stored, 8, a, b)
	}

	out, ok, err := b.ExtendSession(ctx, "s", base, base.Add(10*time.Hour), base)
	if err != nil || ok || out == nil || !out.Expires.Equal(stored) {
		t.Errorf("ExtendSession with a stale from = %+v, %v, %v; want the stored session (expiring at %v), false, nil", out, ok, err, stored)
	}
	su, err := a.GetSessionAndUser(ctx, "s")
	if err != nil || su == nil || !su.Session.Expires.Equal(stored) {
		t.Errorf("after a stale ExtendSession, GetSessionAndUser = %+v, %v; want the session expiring at %v", su, err, stored)
	}

	out, ok, err = a.ExtendSession(ctx, "unknown", base, stored, base)
	if err != nil || ok || out != nil {
		t.Errorf("ExtendSession of an unknown token = %+v, %v, %v; want nil, false, nil", out, ok, err)
	}
}
