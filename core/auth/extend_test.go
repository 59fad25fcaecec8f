package auth_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// slowSessionStore keeps one session; its UpdateSession takes a while (a
// networked store's round trip), so that concurrent requests overlap, and
// can be told to fail, or to wait until so many reads have been made (so
// that every request of a burst reads the session before the write ends,
// however the goroutines are scheduled).
type slowSessionStore struct {
	mu      sync.Mutex
	s       core.Session
	updates atomic.Int32
	fail    atomic.Int32 // this many next updates fail
	reads   atomic.Int32
	gate    atomic.Int32 // UpdateSession waits until reads reaches it (up to 10 s)
}

func (m *slowSessionStore) GetSessionAndUser(_ context.Context, token string) (*core.SessionAndUser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer m.reads.Add(1) // counted once the session is copied, before the lock is released
	if token != m.s.SessionToken {
		return nil, nil
	}
	return &core.SessionAndUser{Session: m.s, User: core.User{ID: m.s.UserID, Email: "a@example.com"}}, nil
}

var errStoreDown = errors.New("store down")

func (m *slowSessionStore) UpdateSession(_ context.Context, u core.SessionUpdate) (*core.Session, error) {
	m.updates.Add(1)
	time.Sleep(20 * time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); m.reads.Load() < m.gate.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if m.fail.Add(-1) >= 0 {
		return nil, errStoreDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u.Expires.Apply(&m.s.Expires)
	s := m.s
	return &s, nil
}

func (m *slowSessionStore) DeleteSession(context.Context, string) (*core.Session, error) {
	return nil, nil
}

// A burst of requests on a session due for extension (a page loading its
// API calls) writes the extension once, not once per request, and every
// request gets the new expiry. Before, each request wrote.
func TestConcurrentExtensionWritesOnce(t *testing.T) {
	var clock atomic.Int64
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock.Store(start.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	store, a := newSlowAuth(t, start, now, 0)
	burst := func(n int) (extended int32, expires []time.Time) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var ext atomic.Int32
		for range n {
			wg.Go(func() {
				su, x, err := a.Session(context.Background(), "tok")
				if err != nil || su == nil {
					t.Errorf("Session = %v, %v; want the session", su, err)
					return
				}
				if x {
					ext.Add(1)
				}
				mu.Lock()
				expires = append(expires, su.Session.Expires)
				mu.Unlock()
			})
		}
		wg.Wait()
		return ext.Load(), expires
	}

	clock.Store(start.Add(auth.DefaultUpdateAge + time.Second).UnixNano())
	const n = 32
	store.gate.Store(store.reads.Load() + n) // every request reads the due session before the write ends
	extended, expires := burst(n)
	store.gate.Store(0)
	if got := store.updates.Load(); got != 1 {
		t.Errorf("%d concurrent requests on a due session wrote %d extensions; want 1", n, got)
	}
	want := now().Add(auth.DefaultMaxAge)
	for _, e := range expires {
		if !e.Equal(want) {
			t.Errorf("a request got expires %v; want the extension's %v", e, want)
		}
	}
	if extended != n {
		t.Errorf("%d of %d requests reported the extension; want all (each re-sends the cookie)", extended, n)
	}

	// Not due again until UpdateAge has passed since that extension; then
	// one more write.
	if _, _ = burst(8); store.updates.Load() != 1 {
		t.Errorf("requests right after the extension wrote again: %d writes", store.updates.Load())
	}
	clock.Add(int64(auth.DefaultUpdateAge + time.Second))
	burst(8)
	if got := store.updates.Load(); got != 2 {
		t.Errorf("a burst in the next window: %d writes in all; want 2", got)
	}
}

// When the shared write fails, the requests that waited for it try for
// themselves (the failure may be the leader's own request ending), and a
// later request is not handed the failure.
func TestConcurrentExtensionFailureNotShared(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(auth.DefaultUpdateAge + time.Second) }
	_, a := newSlowAuth(t, start, now, 1)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range 4 {
		wg.Go(func() {
			if _, _, err := a.Session(context.Background(), "tok"); err != nil {
				if !errors.Is(err, errStoreDown) {
					t.Errorf("Session: %v", err)
				}
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 1 {
		t.Errorf("%d of 4 requests failed; want only the one whose write failed", failed.Load())
	}
	su, _, err := a.Session(context.Background(), "tok")
	if err != nil || su == nil || !su.Session.Expires.Equal(now().Add(auth.DefaultMaxAge)) {
		t.Errorf("after the failure: %v, %v; want the extended session", su, err)
	}
}

// newSlowAuth returns a slowSessionStore holding the session "tok" of u1,
// created at start, whose next fail updates fail, and the library on it
// with the clock now.
func newSlowAuth(t *testing.T, start time.Time, now func() time.Time, fail int32) (*slowSessionStore, *auth.Auth) {
	t.Helper()
	store := &slowSessionStore{s: core.Session{SessionToken: "tok", UserID: "u1", Expires: start.Add(auth.DefaultMaxAge)}}
	store.fail.Store(fail)
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{"a-secret-of-at-least-32-bytes-0123456789"},
		Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return store, a
}
