package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// TestServes starts the stand-in on a free port, round-trips a document
// through a MongoDB driver, and checks that it stops when its context ends.
func TestServes(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data") // created by newServer
	f, err := newServer("127.0.0.1:0", data, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()

	client, err := mongo.Connect(ctx, options.Client().ApplyURI(f.MongoDBURI()).SetServerSelectionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	coll := client.Database("standin").Collection("docs")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	var got struct{ N int }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.N != 1 {
		t.Errorf("read back n=%d, want 1", got.N)
	}
	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Run did not return after its context was canceled")
	}
}
