package betterauth

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/core/ratelimit"
)

// TestRateLimiter checks Better Auth's fixed window in its keys: the
// counter at prefix+<ip>|<path>, with the window's TTL from the first
// event, shared with what the app counted there.
func TestRateLimiter(t *testing.T) {
	c := redistest.SingleNode(t)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	prefix := redistest.UniqueName(t, "authport-test-ba-rl:") + ":"
	redistest.CleanupPrefix(t, c, prefix)
	r, err := NewRateLimiter(c, prefix)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("window_then_refused", func(t *testing.T) {
		k, l := RateLimitKey("203.0.113.7", "/sign-in/email"), ratelimit.Limit{Events: 3, Period: 10 * time.Second}
		for i := range 3 {
			if res, err := r.Allow(ctx, k, l); err != nil || !res.Allowed {
				t.Fatalf("event %d of 3: %+v, %v", i+1, res, err)
			}
		}
		res, err := r.Allow(ctx, k, l)
		if err != nil || res.Allowed || res.RetryAfter <= 0 || res.RetryAfter > l.Period {
			t.Fatalf("4th event: %+v, %v; want refused with a retry within the window", res, err)
		}
		if n, _ := c.Get(ctx, prefix+"203.0.113.7|/sign-in/email").Int(); n != 3 {
			t.Errorf("counter = %d, want 3 (refused events are not counted)", n)
		}
		if ttl, _ := c.TTL(ctx, prefix+k).Result(); ttl <= 0 || ttl > 10*time.Second {
			t.Errorf("counter TTL = %v, want the window", ttl)
		}
	})
	t.Run("the_window_ends", func(t *testing.T) {
		k, l := RateLimitKey("203.0.113.8", "/sign-up/email"), ratelimit.Limit{Events: 1, Period: time.Second}
		if res, _ := r.Allow(ctx, k, l); !res.Allowed {
			t.Fatal("first event refused")
		}
		if res, _ := r.Allow(ctx, k, l); res.Allowed {
			t.Fatal("second event in the window allowed")
		}
		time.Sleep(1100 * time.Millisecond)
		if res, err := r.Allow(ctx, k, l); err != nil || !res.Allowed {
			t.Fatalf("after the window: %+v, %v; want allowed", res, err)
		}
	})
	t.Run("shares_the_apps_count", func(t *testing.T) {
		// Better Auth's increment: INCR, and the TTL on creation.
		k, l := RateLimitKey("no-trusted-ip", "/sign-in/email"), ratelimit.Limit{Events: 3, Period: 10 * time.Second}
		for range 2 {
			if n, _ := c.Incr(ctx, prefix+k).Result(); n == 1 {
				c.Expire(ctx, prefix+k, 10*time.Second)
			}
		}
		if res, _ := r.Allow(ctx, k, l); !res.Allowed {
			t.Fatal("the 3rd event (2 counted by the app) refused")
		}
		if res, _ := r.Allow(ctx, k, l); res.Allowed {
			t.Fatal("the 4th event allowed")
		}
	})
	t.Run("atomic_under_concurrency", func(t *testing.T) {
		k, l := RateLimitKey("203.0.113.9", "/x"), ratelimit.Limit{Events: 5, Period: time.Hour}
		var mu sync.Mutex
		var wg sync.WaitGroup
		allowed := 0
		for range 40 {
			wg.Go(func() {
				res, err := r.Allow(ctx, k, l)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if allowed != 5 {
			t.Errorf("40 concurrent events against 5 per hour: %d allowed", allowed)
		}
	})
	t.Run("bad_limit_and_cancelled_context", func(t *testing.T) {
		if _, err := r.Allow(ctx, "k", ratelimit.Limit{}); err == nil {
			t.Error("a disabled limit gave no error")
		}
		cc, cancel := context.WithCancel(ctx)
		cancel()
		if res, err := r.Allow(cc, "k", ratelimit.Limit{Events: 1, Period: time.Hour}); err == nil || res.Allowed {
			t.Errorf("cancelled context: %+v, %v; want an error", res, err)
		}
		if _, err := NewRateLimiter(nil, ""); err == nil {
			t.Error("NewRateLimiter(nil) gave no error")
		}
	})
}
