package faults

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/redis/go-redis/v9"
)

// TestCheckSeesLoss proves that the checks of TestFaults can fail. On a
// Redis that keeps nothing on disk (no AOF, no snapshots) a SIGKILL loses
// every acknowledged write, and check must count them lost; a record
// planted for a user whose deletion was acknowledged must count as a
// partial cascade; and, with the failover runs' session operations in the
// load, a revoked session written back must count as readable again and
// a family's expiry set back past its last rotation as a rotated refresh
// token accepted again.
func TestCheckSeesLoss(t *testing.T) {
	bin := binary(t, provision.BackendRedis, "redis-server")
	dir := tempDir(t, "authport-faults-volatile-")
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := &process{name: bin, log: filepath.Join(dir, "stdout.log"), args: []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "no", "--save", "", "--logfile", filepath.Join(dir, "redis.log")}}
	startProcess(t, p, redisPing(addr))
	a := newRedisAdapter(t, redis.NewClient(redisOptions(addr)))
	rc := redis.NewClient(redisOptions(addr))
	t.Cleanup(func() { _ = rc.Close() })
	rv := redisRaw{c: rc}

	l := &load{a: a, scen: "self" + randomHex(3), start: time.Now(), iss: newIssuer(t, a)}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { l.worker(w) })
	}
	time.Sleep(time.Second)
	l.stop.Store(true)
	wg.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := check(ctx, rv, l, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.lost) != 0 || len(res.partial) != 0 || res.acked < 50 {
		t.Fatalf("before any fault: acked %d, lost %d, partial %d; want ≥ 50, 0, 0: %v %v",
			res.acked, len(res.lost), len(res.partial), res.lost, res.partial)
	}

	var deleted *userRec
	for _, u := range l.t.users {
		if u.delAck {
			deleted = u
			break
		}
	}
	if deleted == nil {
		t.Fatal("the load acknowledged no deleteUser")
	}
	if err := rc.Set(ctx, rv.key("session", deleted.session), deleted.id, 0).Err(); err != nil {
		t.Fatal(err)
	}
	res, err = check(ctx, rv, l, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.partial) != 1 || len(res.lost) != 0 {
		t.Errorf("a session key planted for deleted user %s: partial %v, lost %v; want one partial, no loss", deleted.id, res.partial, res.lost)
	} else if want := deleted.delCall.String() + " and returned the user"; !strings.Contains(res.partial[0], want) {
		// The detail says when the deleteUser ran and what it returned,
		// to be set beside the fault's times.
		t.Errorf("partial %q does not say %q", res.partial[0], want)
	}

	undoSessionOps(ctx, t, l, rv)
	res, err = check(ctx, rv, l, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// The revoked session back, the rotated token accepted again, and the
	// last token of its family no longer accepted.
	if res.revokedBack != 1 || res.rotationsBack != 1 || len(res.lost) != 3 {
		t.Errorf("a revoked session and a rotation undone: %d of %d revoked sessions readable again, %d of %d rotated refresh tokens accepted again, lost %q; want 1, 1 and 3 lost",
			res.revokedBack, res.revoked, res.rotationsBack, res.rotated, res.lost)
	}

	if err := p.kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	if err := p.waitReady(redisPing(addr), time.Minute); err != nil {
		t.Fatal(err)
	}
	res, err = check(ctx, rv, l, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Everything but the acknowledged deletions (still true: nothing is
	// there) and the used tokens is lost.
	if len(res.lost) == 0 || len(res.lost) >= res.acked {
		t.Errorf("after a SIGKILL of a Redis without persistence: %d of %d acknowledged writes counted lost; want some, not all", len(res.lost), res.acked)
	}
	t.Logf("self-check: %d of %d acknowledged writes counted lost after the volatile restart, as they must be", len(res.lost), res.acked)
}

// TestLateAndPanickingCallsCounted proves that the load's bookkeeping sees a
// call that ignores its context and one that panics.
func TestLateAndPanickingCallsCounted(t *testing.T) {
	l := &load{}
	stop := make(chan struct{})
	stallsc := watchScheduling(stop)
	err := l.call("ignoresItsContext", func(context.Context) error {
		time.Sleep(callTimeout + 2*time.Second)
		return nil
	})
	close(stop)
	stalls := <-stallsc
	if err != nil || len(l.t.late) != 1 {
		t.Fatalf("a call kept 2 s past its deadline: err %v, %d late calls recorded; want nil, 1", err, len(l.t.late))
	}
	c := l.t.late[0]
	if starved(c, stalls) {
		t.Skipf("the machine stalled this process for most of the 2 s (%v): cannot tell a hang from a stall now", stalls)
	}
	if !starved(c, []stall{{from: c.start.Add(callTimeout), to: c.end}}) {
		t.Error("a late call whose lateness a stall covers is not explained by it")
	}

	err = l.call("panics", func(context.Context) error { panic("boom") })
	if err == nil || len(l.t.panics) != 1 {
		t.Errorf("a panicking call: err %v, %d panics recorded; want an error and 1", err, len(l.t.panics))
	}
}

// undoSessionOps undoes, on the Redis of rv, what a failover must never
// undo: it writes back a session an acknowledged deleteSessionsByUserId
// ended, and it rotates a token family once more and sets the family's
// stored expiry back to what it was before (the score in the user's
// sessions set, which every read takes as the expiry).
func undoSessionOps(ctx context.Context, t *testing.T, l *load, rv redisRaw) {
	t.Helper()
	var revoked, family *userRec
	for _, u := range l.t.users {
		switch {
		case u.delTried:
		case revoked == nil && len(u.revocations) > 0:
			revoked = u
		case family == nil && u.family != nil && !u.family.unsure:
			family = u
		}
	}
	if revoked == nil || family == nil {
		t.Fatal("the load acknowledged no deleteSessionsByUserId or started no token family")
	}
	ended := revoked.revocations[0].ended[0]
	if err := rv.c.Set(ctx, rv.key("session", ended), revoked.id, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rv.c.ZAdd(ctx, rv.key("user", revoked.id)+":sessions", redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: ended}).Err(); err != nil {
		t.Fatal(err)
	}

	sessions, err := l.a.(core.SessionsByUserLister).ListSessionsByUserID(ctx, family.id)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(sessions, func(s core.Session) bool { return strings.HasPrefix(s.UserAgent, "Faults CLI") })
	if i < 0 {
		t.Fatalf("user %s: no session of the token family among %d", family.id, len(sessions))
	}
	set := rv.key("user", family.id) + ":sessions"
	before, err := rv.c.ZScore(ctx, set, sessions[i].SessionToken).Result()
	if err != nil {
		t.Fatal(err)
	}
	l.rotate(family)
	if family.family.unsure {
		t.Fatalf("user %s: the refresh failed: %v", family.id, l.t.samples)
	}
	if err := rv.c.ZAddXX(ctx, set, redis.Z{Score: before, Member: sessions[i].SessionToken}).Err(); err != nil {
		t.Fatal(err)
	}
}
