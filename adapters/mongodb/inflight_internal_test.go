package mongoadapter

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestInflightWait: wait returns at once for a key with nothing in flight,
// waits for every write begun under the key (not for other keys), and gives
// up with its context's error.
func TestInflightWait(t *testing.T) {
	var f inflight
	ctx := context.Background()
	if err := f.wait(ctx, "a"); err != nil {
		t.Fatalf("wait with nothing in flight: %v", err)
	}
	end1 := f.begin("a")
	end2 := f.begin("a")
	endB := f.begin("b")
	done := make(chan error, 1)
	go func() { done <- f.wait(ctx, "a") }()
	endB()
	end1()
	end1() // a second call changes nothing
	select {
	case err := <-done:
		t.Fatalf("wait returned (%v) with a write still in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := f.wait(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait with a write in flight and a short context = %v; want its deadline", err)
	}
	end2()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wait = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return once the writes ended")
	}
	if len(f.m) != 0 {
		t.Errorf("keys left: %d; want 0", len(f.m))
	}
}

// TestSettleSendsNothingOnceEnded: settle does not start the write when
// the context has already ended.
func TestSettleSendsNothingOnceEnded(t *testing.T) {
	var a Adapter
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := a.settle(ctx, "k", func(context.Context) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("settle = %v, ran %v; want context.Canceled and not run", err, ran)
	}
}
