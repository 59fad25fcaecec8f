//go:build authport_consumer

// The consumer check's opener of this adapter (tools/release, consumer.go):
// with its program, open is built into a module outside the repository
// that uses the adapter through the released modules only.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func open(ctx context.Context) (any, func() error, error) {
	client, err := mongo.Connect(options.Client().ApplyURI(os.Getenv("AUTHPORT_MONGODB_URL")))
	if err != nil {
		return nil, nil, fmt.Errorf("AUTHPORT_MONGODB_URL: %w", err)
	}
	// The run works in a database of its own and drops it at the end.
	db := client.Database(fmt.Sprintf("authport_consumer_%d", time.Now().UnixNano()))
	cleanup := func() error {
		return errors.Join(db.Drop(context.Background()), client.Disconnect(context.Background()))
	}
	store, err := mongoadapter.New(ctx, db)
	if err == nil {
		err = store.Migrate(ctx)
	}
	if err != nil {
		return nil, nil, errors.Join(err, cleanup())
	}
	return store, cleanup, nil
}
