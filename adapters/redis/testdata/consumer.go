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

	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/redis/go-redis/v9"
)

func open(ctx context.Context) (any, func() error, error) {
	opts, err := redis.ParseURL(os.Getenv("AUTHPORT_REDIS_URL"))
	if err != nil {
		return nil, nil, fmt.Errorf("AUTHPORT_REDIS_URL: %w", err)
	}
	client := redis.NewClient(opts)
	prefix := fmt.Sprintf("authport-consumer-%d:", time.Now().UnixNano())
	store, err := redisadapter.New(ctx, client, redisadapter.WithPrefix(prefix))
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return store, func() error {
		// Remove whatever the run left under its own prefix.
		var errs []error
		iter := client.Scan(context.Background(), 0, prefix+"*", 100).Iterator()
		for iter.Next(context.Background()) {
			errs = append(errs, client.Del(context.Background(), iter.Val()).Err())
		}
		errs = append(errs, iter.Err(), client.Close())
		return errors.Join(errs...)
	}, nil
}
