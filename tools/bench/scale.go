package main

import (
	"context"
	"errors"
	"io"
)

// scaleResult is one backend's scale and purge figures.
type scaleResult struct {
	Backend string `json:"backend"`
}

func runScale(ctx context.Context, names []string, users, purge int, out io.Writer) (*report, error) {
	return nil, errors.New("not yet")
}
