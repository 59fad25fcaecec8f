package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/ratelimit"
	"github.com/authport/authport/core/ratelimit/ratelimittest"
)

func TestMemory(t *testing.T) { ratelimittest.Run(t, ratelimit.NewMemory()) }

func TestMemoryRate(t *testing.T) {
	c := coretest.NewClock(time.Unix(1_800_000_000, 0))
	m := ratelimit.NewMemory(ratelimit.WithClock(c.Now))
	ctx := context.Background()
	l := ratelimit.Limit{Events: 4, Period: time.Hour} // one per 15 minutes after the burst
	allowed := 0
	for range 10 {
		if r, _ := m.Allow(ctx, "k", l); r.Allowed {
			allowed++
		}
	}
	if allowed != 4 {
		t.Fatalf("burst: %d allowed, want 4", allowed)
	}
	r, _ := m.Allow(ctx, "k", l)
	if r.Allowed || r.RetryAfter != 15*time.Minute {
		t.Fatalf("after the burst: %+v; want refused for 15m", r)
	}
	c.Add(15 * time.Minute)
	if r, _ := m.Allow(ctx, "k", l); !r.Allowed {
		t.Fatal("one interval later: refused")
	}
	if r, _ := m.Allow(ctx, "k", l); r.Allowed {
		t.Fatal("the refill is one event per interval")
	}
	// Two hours on, "k" is back at a full burst: the periodic sweep
	// forgets it.
	c.Add(2 * time.Hour)
	if m.Allow(ctx, "other", l); m.Len() != 1 {
		t.Fatalf("Len %d, want 1 (other)", m.Len())
	}
	if _, err := m.Allow(ctx, "k", ratelimit.Limit{}); !errors.Is(err, core.ErrInvalidConfig) {
		t.Errorf("zero limit: %v", err)
	}
}

// TestMemoryBounded fills the store: a new key is refused, not an old one
// forgotten, until keys expire.
func TestMemoryBounded(t *testing.T) {
	c := coretest.NewClock(time.Unix(1_800_000_000, 0))
	m := ratelimit.NewMemory(ratelimit.WithClock(c.Now), ratelimit.WithMaxKeys(3))
	ctx := context.Background()
	l := ratelimit.Limit{Events: 1, Period: time.Minute}
	for _, k := range []string{"a", "b", "c"} {
		if r, _ := m.Allow(ctx, k, l); !r.Allowed {
			t.Fatalf("%s refused", k)
		}
	}
	if r, _ := m.Allow(ctx, "d", l); r.Allowed {
		t.Fatal("a 4th key was allowed in a store bounded to 3")
	}
	if r, _ := m.Allow(ctx, "a", l); r.Allowed {
		t.Fatal("a's limit was reset")
	}
	c.Add(time.Minute)
	if r, _ := m.Allow(ctx, "d", l); !r.Allowed {
		t.Fatal("d refused after the others expired")
	}
	if m.Len() != 1 {
		t.Errorf("Len %d, want 1", m.Len())
	}
}
