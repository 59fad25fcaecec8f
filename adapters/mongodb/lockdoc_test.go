package mongoadapter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
	"github.com/authport/authport/core"
)

// TestLockDocuments checks the lock that serialises updates across
// processes on a server whose updates are not atomic (the FerretDB
// stand-in): an update waits while another process holds the record's lock
// document, gives up when its context ends with nothing changed, proceeds
// once the lock is released, and takes over a lock whose holder stopped
// (expires passed). Each update leaves no lock document behind.
func TestLockDocuments(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	if a.Capabilities().AtomicFindAndModify {
		t.Skip("the server's updates are atomic: no lock documents")
	}
	ctx := context.Background()
	locks := db.Collection(mongoadapter.DefaultCollections().Locks)
	u, err := a.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	id := mongoadapter.LockIDForTest(u.ID)
	hold := func(expires time.Time) {
		t.Helper()
		if _, err := locks.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "owner", Value: "another process"},
			{Key: "expires", Value: bson.NewDateTimeFromTime(expires)}}); err != nil {
			t.Fatal(err)
		}
	}

	// Held by another process: the update waits, then gives up.
	hold(time.Now().Add(time.Minute))
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, err = a.UpdateUser(short, core.UserUpdate{ID: u.ID, Name: core.Set(new("held"))})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("updateUser while another process holds the lock = %v, want context.DeadlineExceeded", err)
	}
	if got, err := a.GetUser(ctx, u.ID); err != nil || got.Name != nil {
		t.Fatalf("after the update that gave up: %+v, %v; want the user unchanged", got, err)
	}

	// Released while waiting: the update proceeds.
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = locks.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	}()
	got, err := a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Name: core.Set(new("after release"))})
	if err != nil || got.Name == nil || *got.Name != "after release" {
		t.Fatalf("updateUser after the lock's release = %+v, %v", got, err)
	}

	// Left by a holder that stopped: taken over.
	hold(time.Now().Add(-time.Second))
	got, err = a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Name: core.Set(new("taken over"))})
	if err != nil || got.Name == nil || *got.Name != "taken over" {
		t.Fatalf("updateUser with an expired lock document = %+v, %v", got, err)
	}
	n, err := locks.CountDocuments(ctx, bson.D{})
	if err != nil || n != 0 {
		t.Fatalf("lock documents left after the updates: %d, %v; want 0", n, err)
	}
}
