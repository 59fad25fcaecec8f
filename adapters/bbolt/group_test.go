package bboltadapter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// Tests of the group commit (WriteGroup). They make the grouping
// deterministic, whatever the scheduler and GOMAXPROCS: holdLeader parks a
// write inside its transaction, the writes started meanwhile are seen
// queued behind it (waitQueued), and only then is the held write released,
// so the queued writes are taken as one group.

// holdLeader starts a write that leads a group of its own and blocks inside
// its transaction until release is called (or the test ends); release waits
// for the held write to return.
func holdLeader(t *testing.T, a *Adapter) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.grouper.do(context.Background(), func(*bolt.Tx) error { <-gate; return nil })
	}()
	waitGrouper(t, a, "the held write to lead", func(g *grouper) bool { return g.running && len(g.queue) == 0 })
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(gate)
			if err := <-done; err != nil {
				t.Errorf("held write: %v", err)
			}
		})
	}
	t.Cleanup(release) // before the adapter's Close, which was registered earlier
	return release
}

// waitQueued waits until n writes are queued behind the running group.
func waitQueued(t *testing.T, a *Adapter, n int) {
	t.Helper()
	waitGrouper(t, a, fmt.Sprintf("%d queued writes", n), func(g *grouper) bool { return len(g.queue) == n })
}

func waitGrouper(t *testing.T, a *Adapter, what string, ok func(*grouper) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.grouper.mu.Lock()
		done := ok(&a.grouper)
		a.grouper.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// noPanic calls fn and turns a panic that escapes it into a test error.
func noPanic(t *testing.T, what string, fn func() error) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s: panic escaped to the caller: %v", what, p)
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return fn()
}

// within waits up to 10s for ch, failing the test if it does not deliver.
func within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still blocked after 10s", what)
		panic("unreachable")
	}
}

// putKey returns a write that stores key in the bucket "test", outside the
// adapter's root bucket.
func putKey(key string) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("test"))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), []byte{1})
	}
}

func hasKey(t *testing.T, a *Adapter, key string) bool {
	t.Helper()
	found := false
	if err := a.DB().View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("test")); b != nil {
			found = b.Get([]byte(key)) != nil
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

// A write still queued when its context is done returns the context's
// error at once and is never committed; the other queued writes are not
// disturbed.
func TestGroupQueuedWriteHonoursContext(t *testing.T) {
	a, raw := newTestAdapter(t)
	release := holdLeader(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled, kept := make(chan error, 1), make(chan error, 1)
	go func() { _, err := a.CreateUser(ctx, core.User{ID: "u1", Email: "u1@e"}); cancelled <- err }()
	waitQueued(t, a, 1)
	go func() { _, err := a.CreateUser(context.Background(), core.User{ID: "u2", Email: "u2@e"}); kept <- err }()
	waitQueued(t, a, 2)
	cancel()
	err := within(t, "CreateUser queued with a cancelled context", cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled queued CreateUser = %v, want context.Canceled", err)
	}
	waitQueued(t, a, 1) // it left the queue; u2 is still in it
	release()
	if err := within(t, "queued CreateUser", kept); err != nil {
		t.Errorf("CreateUser(u2) = %v", err)
	}
	us, err := raw.Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 1 || us[0].ID != "u2" {
		t.Errorf("stored users %+v, want u2 only (the cancelled write must not be committed)", us)
	}
}

// gated is a fresh adapter whose leader holdLeader holds (release lets it
// go), with a queued write, first, that leads the next group: when it first
// runs it closes entered, then it waits for gate and puts "first".
type gated struct {
	a             *Adapter
	release       func()
	gate, entered chan struct{}
	first         chan error
}

func gatedLead(t *testing.T) *gated {
	t.Helper()
	a, _ := newTestAdapter(t)
	g := &gated{a: a, release: holdLeader(t, a), gate: make(chan struct{}), entered: make(chan struct{}), first: make(chan error, 1)}
	go func() {
		g.first <- a.grouper.do(context.Background(), func(tx *bolt.Tx) error {
			select {
			case <-g.entered: // a retry of the group
			default:
				close(g.entered)
			}
			<-g.gate
			return putKey("first")(tx)
		})
	}()
	waitQueued(t, a, 1)
	return g
}

// A write already taken into a group when its context is done runs to
// completion and reports its real result: nil, since it was committed.
func TestGroupTakenWriteIgnoresLateCancel(t *testing.T) {
	g := gatedLead(t)
	a, gate, entered, first := g.a, g.gate, g.entered, g.first
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	second := make(chan error, 1)
	go func() { second <- a.grouper.do(ctx, putKey("second")) }()
	waitQueued(t, a, 2)
	g.release()
	within(t, "the group's first write to start", entered) // both are now taken
	cancel()
	select {
	case err := <-second:
		t.Fatalf("write taken into a running group returned %v before its group committed", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(gate)
	if err := within(t, "first write", first); err != nil {
		t.Errorf("first write: %v", err)
	}
	if err := within(t, "second write", second); err != nil {
		t.Errorf("write cancelled after it was taken into a group = %v, want nil (it was committed)", err)
	}
	if !hasKey(t, a, "second") || !hasKey(t, a, "first") {
		t.Error("the group's writes were not committed")
	}
}

// A write whose context is done while its group runs, and which then fails
// in the group (so the group is rolled back without it), is not rerun
// alone: nothing of it was committed, so it returns its context's error.
func TestGroupCancelledWriteIsNotRerun(t *testing.T) {
	g := gatedLead(t)
	a, gate, entered, first := g.a, g.gate, g.entered, g.first
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs atomic.Int64
	second := make(chan error, 1)
	go func() {
		second <- a.grouper.do(ctx, func(tx *bolt.Tx) error {
			runs.Add(1)
			return core.ErrAlreadyExists
		})
	}()
	waitQueued(t, a, 2)
	g.release()
	within(t, "the group's first write to start", entered)
	cancel()
	close(gate)
	if err := within(t, "first write", first); err != nil {
		t.Errorf("first write: %v", err)
	}
	if err := within(t, "second write", second); !errors.Is(err, context.Canceled) {
		t.Errorf("failed write cancelled while its group ran = %v, want context.Canceled", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the cancelled write ran %d times, want once (not rerun alone)", n)
	}
}

// Writes cancelled at random moments, racing one another and the
// handovers between leaders: a write reports nil exactly when it was
// committed, and the group commit never wedges. Each writer makes several
// writes with one context; all first writes queue behind a held leader,
// every eighth writer is cancelled before any is taken, and most others at a
// random moment after the release.
func TestGroupCancelledWritesReportTheTruth(t *testing.T) {
	a, raw := newTestAdapter(t)
	const n, k = 100, 4 // writers, writes each
	release := holdLeader(t, a)
	errs := make([][k]error, n)
	cancels := make([]context.CancelFunc, n)
	var wg sync.WaitGroup
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			for j := range k {
				id := fmt.Sprintf("u%d-%d", i, j)
				_, errs[i][j] = a.CreateUser(ctx, core.User{ID: id, Email: id + "@e"})
			}
		}()
	}
	waitQueued(t, a, n)
	for i := 0; i < n; i += 8 {
		cancels[i]()
	}
	waitQueued(t, a, n-(n+7)/8)
	for i := range n {
		if i%4 != 0 { // every fourth writer keeps its context
			time.AfterFunc(rand.N(2*time.Millisecond), cancels[i])
		}
	}
	release()
	wg.Wait()
	us, err := raw.Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, u := range us {
		stored[u.ID] = true
	}
	var ok, cancelled int
	for i := range n {
		for j, err := range errs[i] {
			id := fmt.Sprintf("u%d-%d", i, j)
			switch {
			case err == nil && !stored[id]:
				t.Errorf("%s: nil error but not stored", id)
			case err == nil:
				ok++
				if i%8 == 0 {
					t.Errorf("%s: cancelled while queued, but committed", id)
				}
			case !errors.Is(err, context.Canceled):
				t.Errorf("%s: %v", id, err)
			case stored[id]:
				t.Errorf("%s: committed, but reported %v", id, err)
			case i%4 == 0 && i%8 != 0:
				t.Errorf("%s: context never cancelled, but got %v", id, err)
			default:
				cancelled++
			}
		}
	}
	t.Logf("%d committed, %d cancelled, largest group %d, %d solo reruns", ok, cancelled, a.grouper.maxGroup.Load(), a.grouper.solo.Load())
	done := make(chan error, 1)
	go func() {
		_, err := a.CreateUser(context.Background(), core.User{ID: "last", Email: "last@e"})
		done <- err
	}()
	if err := within(t, "a write after the cancellations", done); err != nil {
		t.Error(err)
	}
	if err := a.CheckConsistency(context.Background()); err != nil {
		t.Error(err)
	}
}

// The caller at the head of the queue may be told to lead the next group
// just as its context is done. It must pass the lead on (to the next queued
// call, or by marking the grouper idle), or every later write would wait
// for ever.
func TestGroupCancelledNextLeaderPassesTheLead(t *testing.T) {
	var g grouper
	c1 := &groupCall{ch: make(chan error, 1)}
	c2 := &groupCall{ch: make(chan error, 1)}
	g.running = true
	g.queue = []*groupCall{c1, c2}
	c1.ch <- errLead // the leader that finished handed over to c1
	if !g.leave(c1) {
		t.Fatal("leave(c1) = false for a call still queued")
	}
	select {
	case err := <-c2.ch:
		if err != errLead {
			t.Fatalf("c2 got %v, want errLead", err)
		}
	default:
		t.Fatal("c1 left without passing the lead to c2")
	}
	if len(g.queue) != 1 || g.queue[0] != c2 || !g.running {
		t.Fatalf("after c1 left: queue %v, running %v", g.queue, g.running)
	}
	c2.ch <- errLead // as if c2 had not received it yet
	if !g.leave(c2) || len(g.queue) != 0 || g.running {
		t.Fatalf("after the last queued call left: queue %v, running %v; want idle", g.queue, g.running)
	}
	if g.leave(c1) {
		t.Error("leave of a call no longer queued = true")
	}
}

// A panic in a write is an error on every path: alone, in every write
// mode, and when it shared a group and was sent back to run alone.
func TestPanicInWriteIsAnErrorOnEveryPath(t *testing.T) {
	boom := func(*bolt.Tx) error { panic("boom") }
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		a, _ := newTestAdapter(t, WithWriteMode(mode))
		err := noPanic(t, mode.String(), func() error { return a.update(context.Background(), boom) })
		if err == nil || !strings.Contains(err.Error(), "panic in write: boom") {
			t.Errorf("%v: panicking write = %v, want a panic error", mode, err)
		}
	}
	a, _ := newTestAdapter(t)
	release := holdLeader(t, a)
	boomed, ok := make(chan error, 1), make(chan error, 1)
	go func() {
		boomed <- noPanic(t, "grouped", func() error { return a.update(context.Background(), boom) })
	}()
	waitQueued(t, a, 1)
	go func() { ok <- a.update(context.Background(), putKey("ok")) }()
	waitQueued(t, a, 2)
	release()
	if err := within(t, "panicking write", boomed); err == nil || !strings.Contains(err.Error(), "panic in write: boom") {
		t.Errorf("panicking write sent back from a group = %v, want a panic error", err)
	}
	if err := within(t, "its group mate", ok); err != nil || !hasKey(t, a, "ok") {
		t.Errorf("write grouped with a panicking one = %v", err)
	}
	if s := a.grouper.solo.Load(); s != 1 {
		t.Errorf("%d solo reruns, want 1", s)
	}
}

// A panic in bbolt (here a commit handler; bbolt's own assertions panic
// the same way) outside the writes' code: every member of the group gets an
// error, no panic escapes, and later writes still go through.
func TestPanicInCommitDoesNotWedgeTheGroup(t *testing.T) {
	a, _ := newTestAdapter(t)
	bad := func(tx *bolt.Tx) error {
		tx.OnCommit(func() { panic("in commit") })
		return putKey("bad")(tx)
	}
	ctx := context.Background()
	if err := noPanic(t, "lone", func() error { return a.update(ctx, bad) }); err == nil || !strings.Contains(err.Error(), "in commit") {
		t.Errorf("lone write whose commit panics = %v, want a panic error", err)
	}
	next := make(chan error, 1)
	go func() { next <- a.update(ctx, putKey("next")) }()
	if err := within(t, "write after a panicking commit", next); err != nil {
		t.Errorf("write after a panicking commit = %v", err)
	}

	release := holdLeader(t, a)
	r1, r2 := make(chan error, 1), make(chan error, 1)
	go func() { r1 <- noPanic(t, "grouped", func() error { return a.update(ctx, bad) }) }()
	waitQueued(t, a, 1)
	go func() { r2 <- noPanic(t, "group mate", func() error { return a.update(ctx, putKey("mate")) }) }()
	waitQueued(t, a, 2)
	release()
	for _, r := range []chan error{r1, r2} {
		if err := within(t, "member of a group whose commit panics", r); err == nil || !strings.Contains(err.Error(), "in commit") {
			t.Errorf("member of a group whose commit panics = %v, want a panic error", err)
		}
	}
	go func() { next <- a.update(ctx, putKey("after")) }()
	if err := within(t, "write after a panicking group commit", next); err != nil || !hasKey(t, a, "after") {
		t.Errorf("write after a panicking group commit = %v", err)
	}
}

// When a group's commit fails (no member's fault), each member is rerun in
// a transaction of its own rather than all failing together.
func TestGroupCommitFailureRerunsMembersAlone(t *testing.T) {
	a, raw := newTestAdapter(t)
	errDisk := errors.New("injected commit failure")
	var calls, failed atomic.Int64
	a.grouper.update = func(fn func(*bolt.Tx) error) error {
		if calls.Add(1) != 2 { // 1 is the held write; 2 the queued group
			return a.DB().Update(fn)
		}
		failed.Add(1)
		err := a.DB().Update(func(tx *bolt.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return errDisk // every member succeeded; the "commit" fails
		})
		return err
	}
	release := holdLeader(t, a)
	const n = 3
	res := make(chan error, n)
	for i := range n {
		go func() {
			_, err := a.CreateUser(context.Background(), core.User{ID: fmt.Sprintf("u%d", i), Email: fmt.Sprintf("u%d@e", i)})
			res <- err
		}()
	}
	waitQueued(t, a, n)
	release()
	for range n {
		if err := within(t, "member of a group whose commit failed", res); err != nil {
			t.Errorf("member of a group whose commit failed = %v, want nil after its rerun", err)
		}
	}
	if failed.Load() != 1 {
		t.Fatalf("the injected failure hit %d commits, want 1", failed.Load())
	}
	if us, _ := raw.Users(context.Background()); len(us) != n {
		t.Errorf("%d users stored, want %d", len(us), n)
	}
	if g := a.grouper.maxGroup.Load(); g != n {
		t.Errorf("largest group %d, want %d", g, n)
	}
	if err := a.CheckConsistency(context.Background()); err != nil {
		t.Error(err)
	}
}
