package bboltadapter

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// TestExtendSessionOnce: in every write mode, concurrent ExtendSession
// calls with the same from on one session write exactly once and all return
// the expiry that one wrote ([coretest.ExtendOnce]); a later call with the
// stale from writes nothing and returns the stored session; an unknown
// token gives nil, false, nil; the expiry index follows the extension (a
// purge between the old and the new expiry keeps the session).
func TestExtendSessionOnce(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			var clock atomic.Int64
			clock.Store(base.UnixMilli())
			a, raw := newTestAdapter(t, WithWriteMode(mode), WithClock(func() time.Time { return time.UnixMilli(clock.Load()) }))
			must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
			from := base.Add(time.Hour)
			must(t)(a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: from}))
			to := coretest.ExtendOnce(t, ctx, "s", "u", from, 16, a)

			s, ok, err := a.ExtendSession(ctx, "s", from, to.Add(time.Hour), from)
			if err != nil || ok || s == nil || !s.Expires.Equal(to) {
				t.Errorf("stale ExtendSession = %+v, %v, %v; want the stored session (expiring %v), false", s, ok, err, to)
			}
			if s, ok, err := a.ExtendSession(ctx, "nope", from, to, from); s != nil || ok || err != nil {
				t.Errorf("ExtendSession of an unknown token = %+v, %v, %v; want nil, false, nil", s, ok, err)
			}

			stored, err := raw.Sessions(ctx)
			if err != nil || len(stored) != 1 || !stored[0].Expires.Equal(to) {
				t.Fatalf("stored sessions = %+v, %v; want s expiring at %v", stored, err, to)
			}
			if err := a.CheckConsistency(ctx); err != nil {
				t.Error(err)
			}
			clock.Store(from.Add(30 * time.Second).UnixMilli()) // past the old expiry, before the new one (at least a minute later)
			if res, err := a.PurgeExpired(ctx); err != nil || res.Sessions != 0 {
				t.Errorf("PurgeExpired after the extension = %+v, %v; want nothing purged", res, err)
			}
			clock.Store(to.UnixMilli())
			if res, err := a.PurgeExpired(ctx); err != nil || res.Sessions != 1 {
				t.Errorf("PurgeExpired at the new expiry = %+v, %v; want the session purged", res, err)
			}
		})
	}
}

// TestExtendSessionRejects: an expiry outside Unix milliseconds is an
// input error and a done context stops the call before it writes.
func TestExtendSessionRejects(t *testing.T) {
	ctx := context.Background()
	a, raw := newTestAdapter(t)
	must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
	from := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	must(t)(a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: from}))
	far := time.Date(300000000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, err := a.ExtendSession(ctx, "s", from, far, from); err == nil {
		t.Error("ExtendSession to a time beyond Unix milliseconds succeeded")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := a.ExtendSession(done, "s", from, from.Add(time.Hour), from); err == nil {
		t.Error("ExtendSession with a done context succeeded")
	}
	stored, err := raw.Sessions(ctx)
	if err != nil || len(stored) != 1 || !stored[0].Expires.Equal(from) {
		t.Errorf("stored sessions = %+v, %v; want s unchanged (%v)", stored, err, from)
	}
}
