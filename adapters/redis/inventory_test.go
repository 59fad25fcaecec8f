package redisadapter

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/core"
)

// TestSessionIndexExpiresWithLastSession: the user's sessions set and its
// metadata hash expire with the user's last session, so that they never
// outlive it; and an entry whose session key Redis evicted (the session
// expired untouched) is pruned by the next write of the set and by the
// next listing.
func TestSessionIndexExpiresWithLastSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		u := core.User{ID: "u", Email: "u@example.com"}
		must[any](t)(a.CreateUser(ctx, u))
		create := func(tok string, d time.Duration) time.Time {
			t.Helper()
			exp := core.NormalizeTime(time.Now().Add(d))
			must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: u.ID, Expires: exp,
				CreatedAt: time.Now(), IPAddress: "192.0.2.1", UserAgent: "ua " + tok}))
			return exp
		}
		expiresAt := func(what string, want time.Time) {
			t.Helper()
			for _, k := range []string{a.k.sessions(u.ID), a.k.sessionMeta(u.ID)} {
				got, err := c.Do(ctx, "pexpiretime", k).Int64()
				if err != nil || got != want.UnixMilli() {
					t.Errorf("%s: %s expires at %d (%v), want %d", what, k, got, err, want.UnixMilli())
				}
			}
		}
		indexed := func(tok string) bool {
			t.Helper()
			_, err := c.ZScore(ctx, a.k.sessions(u.ID), tok).Result()
			meta, err2 := c.HExists(ctx, a.k.sessionMeta(u.ID), tok).Result()
			if err != nil && err != redis.Nil || err2 != nil {
				t.Fatal(err, err2)
			}
			if (err == nil) != meta {
				t.Errorf("session %q: in the set %v, its metadata %v", tok, err == nil, meta)
			}
			return meta
		}

		short := create("short", 300*time.Millisecond)
		long := create("long", time.Hour)
		expiresAt("two sessions", long)
		must[any](t)(a.DeleteSession(ctx, "long"))
		expiresAt("after deleting the later one", short)
		time.Sleep(time.Until(short) + 100*time.Millisecond)
		if n, err := c.Exists(ctx, a.k.sessions(u.ID), a.k.sessionMeta(u.ID)).Result(); err != nil || n != 0 {
			t.Errorf("%d of the sessions set and its metadata still there (%v) after the last session expired", n, err)
		}

		// An entry outlives its evicted key while a later session holds
		// the set: the next write of the set prunes it ...
		long = create("long2", time.Hour)
		short = create("short2", 300*time.Millisecond)
		time.Sleep(time.Until(short) + 100*time.Millisecond)
		if n, _ := c.Exists(ctx, a.k.session("short2")).Result(); n != 0 {
			t.Fatal("the expired session's key was not evicted")
		}
		if !indexed("short2") {
			t.Fatal("the evicted session's entry is already gone: the test exercises nothing")
		}
		create("another", 2*time.Hour)
		if indexed("short2") {
			t.Error("createSession left the entry of an evicted session in the set")
		}
		// ... and so does the next listing.
		short = create("short3", 300*time.Millisecond)
		time.Sleep(time.Until(short) + 100*time.Millisecond)
		list, err := a.ListSessionsByUserID(ctx, u.ID)
		if err != nil || len(list) != 2 || list[0].SessionToken != "another" || list[1].SessionToken != "long2" {
			t.Errorf("listSessionsByUserId = %+v, %v; want another and long2", list, err)
		}
		if indexed("short3") {
			t.Error("listSessionsByUserId left the entry of an evicted session in the set")
		}
		if left, err := raw.Mentions(ctx, "short"); err != nil || len(left) != 0 {
			t.Errorf("%v still mention the expired sessions (%v)", left, err)
		}
		_ = long
	})
}

// TestDeleteSessionsKeepsOtherUsers: except naming another user's session
// keeps nothing of the user's and touches nothing of the other's, and a
// session key that names another user (a token whose expired entry is
// still in the user's set was taken by another user's new session) is
// left alone.
func TestDeleteSessionsKeepsOtherUsers(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		for _, id := range []string{"a", "b"} {
			must[any](t)(a.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"}))
		}
		exp := core.NormalizeTime(time.Now().Add(time.Hour))
		must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "a1", UserID: "a", Expires: exp}))
		must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "b1", UserID: "b", Expires: exp}))
		// A stale entry of a's naming token "b1": b's session key must stay.
		if err := c.ZAdd(ctx, a.k.sessions("a"), redis.Z{Score: float64(exp.UnixMilli()), Member: "b1"}).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.HSet(ctx, a.k.sessionMeta("a"), "b1", encodeSessionMeta(&core.Session{})).Err(); err != nil {
			t.Fatal(err)
		}
		n, err := a.DeleteSessionsByUserID(ctx, "a", "b1")
		if err != nil || n != 1 {
			t.Errorf("deleteSessionsByUserId(a, except b's session) = %d, %v; want 1 (the stale entry is kept as the exception)", n, err)
		}
		n, err = a.DeleteSessionsByUserID(ctx, "a", "")
		if err != nil || n != 1 {
			t.Errorf("deleteSessionsByUserId(a) = %d, %v; want 1 (the stale entry)", n, err)
		}
		if su, err := a.GetSessionAndUser(ctx, "b1"); err != nil || su == nil || su.User.ID != "b" {
			t.Errorf("b's session after deleting a's = %+v, %v; want it whole", su, err)
		}
		if su, err := a.GetSessionAndUser(ctx, "a1"); err != nil || su != nil {
			t.Errorf("a's session after deleting a's = %+v, %v; want nil", su, err)
		}
	})
}

// TestClusterDeleteSessionsLostReply: on a cluster, deleteSessionsByUserId
// removes the user's entries in one script, then releases the session
// keys. When the script's reply is lost after it ran (the connection
// breaks) go-redis sends it again: the retry finds the entries gone, and
// must still release their keys (the receipt the first run left), so that
// nothing mentions the deleted sessions and the count is right.
func TestClusterDeleteSessionsLostReply(t *testing.T) {
	drop := &redistest.ConnDropper{}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), Dialer: drop.Dial})
	t.Cleanup(func() { _ = c.Close() })
	a, raw := fixture(t, c)
	ctx := context.Background()
	if err := a.Preload(ctx); err != nil {
		t.Fatal(err)
	}
	must[any](t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}))
	tokens := []string{"keep", "s1", "s2", "s3"}
	for _, tok := range tokens {
		must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u", Expires: time.Now().Add(time.Hour)}))
	}
	must[any](t)(a.ListSessionsByUserID(ctx, "u")) // the connection to the user's node is up
	drop.Armed.Store(true)
	n, err := a.DeleteSessionsByUserID(ctx, "u", "keep")
	if !drop.Fired.Load() {
		t.Fatal("no reply was dropped: the test did not exercise a retry")
	}
	if err != nil || n != 3 {
		t.Errorf("deleteSessionsByUserId whose first reply was lost = %d, %v; want 3", n, err)
	}
	for _, tok := range tokens[1:] {
		if left, err := raw.Mentions(ctx, tok); err != nil || len(left) != 0 {
			t.Errorf("after the retried delete, %v still mention %q (%v)", left, tok, err)
		}
	}
	if su, err := a.GetSessionAndUser(ctx, "keep"); err != nil || su == nil {
		t.Errorf("the kept session = %+v, %v", su, err)
	}
	if keys, err := redistest.ScanKeys(ctx, c, a.k.p+"used:"); err != nil || len(keys) != 0 {
		t.Errorf("receipts left behind: %v (%v)", keys, err)
	}
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Errorf("inconsistent after the retried delete: %v", err)
	}
}
