package coretest_test

import (
	"testing"
	"time"

	"github.com/authport/authport/core/coretest"
)

func TestClock(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	c := coretest.NewClock(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %v, want the start %v", got, start)
	}
	c.Add(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Add: Now() = %v, want %v", got, want)
	}
	c.Add(-30 * time.Second)
	if got, want := c.Now(), start.Add(time.Minute); !got.Equal(want) {
		t.Fatalf("after a negative Add: Now() = %v, want %v", got, want)
	}
	later := start.Add(24 * time.Hour)
	c.Set(later)
	if got := c.Now(); !got.Equal(later) {
		t.Fatalf("after Set: Now() = %v, want %v", got, later)
	}
}

// TestClockConcurrent moves and reads the clock from many goroutines; run
// with -race it shows the clock needs no locking of its own by its users.
func TestClockConcurrent(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	c := coretest.NewClock(start)
	coretest.Concurrently(16, func(int) {
		c.Add(time.Second)
		_ = c.Now()
	})
	if got, want := c.Now(), start.Add(16*time.Second); !got.Equal(want) {
		t.Fatalf("after 16 concurrent Adds of a second: Now() = %v, want %v", got, want)
	}
}
