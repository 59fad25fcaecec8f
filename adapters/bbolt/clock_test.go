package bboltadapter

import (
	"sync"
	"testing"
	"time"
)

// readBetween fails t unless got lies between before and after, give or take
// slack.
func readBetween(t *testing.T, got, before, after time.Time) {
	t.Helper()
	const slack = time.Millisecond
	if got.Before(before.Add(-slack)) || got.After(after.Add(slack)) {
		t.Fatalf("clock read %v, outside [%v, %v]", got, before, after)
	}
}

func TestSystemClockFollowsTheSystem(t *testing.T) {
	var c systemClock
	for range 1000 {
		before := time.Now()
		got := c.now()
		readBetween(t, got, before, time.Now())
	}
}

// A base older than resync, and a base without a monotonic reading (as a
// wall clock step would leave it, seen through time.Since), are replaced
// by a full reading.
func TestSystemClockResyncs(t *testing.T) {
	for name, base := range map[string]time.Time{
		"older than resync":   time.Now().Add(-2 * resync),
		"a stepped wall time": time.Now().Round(0).Add(time.Hour),
		"in the future":       time.Now().Add(time.Hour),
	} {
		t.Run(name, func(t *testing.T) {
			var c systemClock
			c.base.Store(&base)
			before := time.Now()
			got := c.now()
			readBetween(t, got, before, time.Now())
			if b := c.base.Load(); b.Equal(base) {
				t.Fatalf("base kept at %v", base)
			}
		})
	}
}

// Concurrent readers share the clock (run with -race).
func TestSystemClockConcurrent(t *testing.T) {
	var c systemClock
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				before := time.Now()
				readBetween(t, c.now(), before, time.Now())
			}
		})
	}
	wg.Wait()
}

func BenchmarkClock(b *testing.B) {
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			_ = time.Now()
		}
	})
	b.Run("systemClock", func(b *testing.B) {
		var c systemClock
		for b.Loop() {
			_ = c.now()
		}
	})
}
