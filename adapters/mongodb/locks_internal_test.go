package mongoadapter

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRecordLocks checks the per-record lock used where updates are not
// atomic: a second lock of one record waits for the first and gives up when
// its context ends; a nil *recordLocks (MongoDB) locks nothing.
func TestRecordLocks(t *testing.T) {
	ctx := context.Background()
	var none *recordLocks
	u1, err := none.lock(ctx, lockUser, "u")
	if err != nil {
		t.Fatal(err)
	}
	u2, err := none.lock(ctx, lockUser, "u")
	if err != nil {
		t.Fatalf("nil recordLocks: second lock = %v", err)
	}
	u1()
	u2()

	l := newRecordLocks(nil)
	unlock, err := l.lock(ctx, lockSession, "s")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := l.lock(short, lockSession, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock of a locked record = %v, want the context's error", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := l.lock(ctx, lockSession, "s")
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("lock of a locked record returned %v before the unlock", err)
	case <-time.After(20 * time.Millisecond):
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("lock after the unlock = %v", err)
	}
}
