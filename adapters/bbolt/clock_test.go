package bboltadapter

import (
	"sync"
	"testing"
	"time"
)

// readBetween reports an error unless got's wall time lies between
// before's and after's, give or take slack. The monotonic readings are
// stripped (Round(0)): with them the comparison would ignore the wall
// time, which is what the clock can get wrong.
func readBetween(t *testing.T, got, before, after time.Time) bool {
	t.Helper()
	const slack = time.Millisecond
	got, before, after = got.Round(0), before.Round(0), after.Round(0)
	if got.Before(before.Add(-slack)) || got.After(after.Add(slack)) {
		t.Errorf("clock read %v, outside [%v, %v]", got, before, after)
		return false
	}
	return true
}

func TestSystemClockFollowsTheSystem(t *testing.T) {
	var c systemClock
	for range 1000 {
		before := time.Now()
		got := c.now()
		if !readBetween(t, got, before, time.Now()) {
			return
		}
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
				if !readBetween(t, c.now(), before, time.Now()) {
					return
				}
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
