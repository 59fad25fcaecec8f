// Package ratelimittest checks that a [ratelimit.Store] keeps the
// contract: bursts, refusals with a retry time, refill, independent keys,
// and atomic counting under concurrent use. Store tests call [Run].
package ratelimittest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core/ratelimit"
)

// Run checks the store on real time, with fresh random keys (so a shared
// server needs no cleaning).
func Run(t *testing.T, s ratelimit.Store) {
	ctx := context.Background()
	key := func() string {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		return "ratelimittest:" + hex.EncodeToString(b)
	}
	t.Run("burst_then_refused", func(t *testing.T) {
		k, l := key(), ratelimit.Limit{Events: 3, Period: time.Hour}
		for i := range 3 {
			if r, err := s.Allow(ctx, k, l); err != nil || !r.Allowed {
				t.Fatalf("event %d of a burst of 3: %+v, %v", i+1, r, err)
			}
		}
		r, err := s.Allow(ctx, k, l)
		if err != nil || r.Allowed {
			t.Fatalf("4th event: %+v, %v; want refused", r, err)
		}
		if r.RetryAfter <= 0 || r.RetryAfter > l.Interval()+time.Second {
			t.Errorf("RetryAfter %v; want about %v", r.RetryAfter, l.Interval())
		}
		if r, _ := s.Allow(ctx, key(), l); !r.Allowed {
			t.Error("another key was refused: keys must be independent")
		}
	})
	t.Run("refills", func(t *testing.T) {
		k, l := key(), ratelimit.Limit{Events: 2, Period: 600 * time.Millisecond}
		for range 2 {
			if r, err := s.Allow(ctx, k, l); err != nil || !r.Allowed {
				t.Fatalf("burst: %+v, %v", r, err)
			}
		}
		if r, _ := s.Allow(ctx, k, l); r.Allowed {
			t.Fatal("3rd event allowed")
		}
		time.Sleep(l.Interval() + 100*time.Millisecond)
		if r, err := s.Allow(ctx, k, l); err != nil || !r.Allowed {
			t.Fatalf("after one interval: %+v, %v; want allowed", r, err)
		}
	})
	t.Run("atomic_under_concurrency", func(t *testing.T) {
		k, l := key(), ratelimit.Limit{Events: 5, Period: time.Hour}
		var mu sync.Mutex
		var wg sync.WaitGroup
		allowed := 0
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.Allow(ctx, k, l)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if allowed != 5 {
			t.Errorf("40 concurrent events against 5 per hour: %d allowed", allowed)
		}
	})
	t.Run("cancelled_context", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		if r, err := s.Allow(c, key(), ratelimit.Limit{Events: 1, Period: time.Hour}); err == nil || r.Allowed {
			t.Errorf("cancelled context: %+v, %v; want an error", r, err)
		}
	})
}
