//go:build authport_consumer

// The consumer check's opener of this adapter (tools/release, consumer.go):
// with its program, open is built into a module outside the repository
// that uses the adapter through the released modules only.
package main

import (
	"context"

	"github.com/authport/authport/adapters/memory"
)

func open(context.Context) (any, func() error, error) {
	return memory.New(), func() error { return nil }, nil
}
