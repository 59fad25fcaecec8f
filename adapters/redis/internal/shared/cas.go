package shared

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// casRetries bounds a compare-and-set loop; each lost round means another
// writer changed the record.
const casRetries = 1000

// ErrContention is returned when a compare-and-set loop keeps losing.
var ErrContention = errors.New("record changed by concurrent writers on every attempt; retry")

// CAS is the compare-and-set loop of read-modify-write operations: it runs
// round (read the record, compute the change, write it only if the record
// is still as read) until round reports done or fails, backing off a
// little after the first rounds. It gives up with [ErrContention] after
// many lost rounds, and with ctx's error when ctx ends between rounds.
func CAS[T any](ctx context.Context, round func() (T, bool, error)) (T, error) {
	var zero T
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return zero, err
		}
		v, done, err := round()
		if err != nil || done {
			return v, err
		}
	}
	return zero, ErrContention
}

// backoff waits a little before round attempt of a compare-and-set loop.
func backoff(ctx context.Context, attempt int) error {
	if attempt < 3 {
		return ctx.Err()
	}
	t := time.NewTimer(time.Duration(min(attempt, 20)) * 100 * time.Microsecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Enc encodes an optional stored value for a script's compare of a key
// with what was read: "0" for no key, "1" and the value otherwise.
func Enc(v string, present bool) string {
	if !present {
		return "0"
	}
	return "1" + v
}

// Get reads a key; present is false when it does not exist.
func Get(ctx context.Context, c redis.UniversalClient, key string) (string, bool, error) {
	v, err := c.Get(ctx, key).Result()
	if IsNil(err) {
		return "", false, nil
	}
	return v, err == nil, err
}
