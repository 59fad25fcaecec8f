//go:build authport_consumer

// The consumer check's opener of this adapter (tools/release, consumer.go):
// with its program, open is built into a module outside the repository
// that uses the adapter through the released modules only.
package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
)

func open(ctx context.Context) (any, func() error, error) {
	dir, err := os.MkdirTemp("", "authport-consumer")
	if err != nil {
		return nil, nil, err
	}
	store, err := bboltadapter.Open(ctx, filepath.Join(dir, "auth.db"), bboltadapter.WithLockTimeout(time.Second))
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return store, func() error {
		defer os.RemoveAll(dir)
		return store.Close()
	}, nil
}
