//go:build authport_consumer

package main

import (
	"context"

	"github.com/authport/authport/adapters/memory"
)

func open(context.Context) (any, func() error, error) {
	return memory.New(), func() error { return nil }, nil
}
