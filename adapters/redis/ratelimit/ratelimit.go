// Package ratelimit is a rate-limit store on Redis for authport's handler
// (handler.RateLimit.Store): every instance sharing the Redis deployment
// shares the limits.
//
// It implements the ratelimit.Store of github.com/authport/authport/core
// with github.com/go-redis/redis_rate (GCRA in one Lua script on one key),
// so each event is counted atomically on the server, with the server's
// clock, and it works on a single node, with Sentinel and on Redis Cluster
// (one key per call, so no cross-slot access). A key is forgotten (expires)
// once it is back at a full burst.
package ratelimit

import (
	"context"
	"fmt"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core/ratelimit"
)

// DefaultPrefix begins every key the store writes (after redis_rate's own
// "rate:").
const DefaultPrefix = "authport:"

// Store is a ratelimit.Store on Redis. It is safe for concurrent use.
type Store struct {
	limiter *redis_rate.Limiter
	prefix  string
}

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the prefix of the store's keys (default [DefaultPrefix]),
// e.g. to keep two applications on one Redis apart.
func WithPrefix(p string) Option { return func(s *Store) { s.prefix = p } }

// New returns a Store on the client: a *redis.Client, *redis.ClusterClient
// or any redis.UniversalClient.
func New(client redis.UniversalClient, opts ...Option) *Store {
	s := &Store{limiter: redis_rate.NewLimiter(client), prefix: DefaultPrefix}
	for _, o := range opts {
		o(s)
	}
	return s
}

var _ ratelimit.Store = (*Store)(nil)

// Allow implements ratelimit.Store: it counts one event for key against
// limit (a burst of limit.Events, refilled evenly over limit.Period).
func (s *Store) Allow(ctx context.Context, key string, limit ratelimit.Limit) (ratelimit.Result, error) {
	if err := limit.Check(); err != nil {
		return ratelimit.Result{}, err
	}
	res, err := s.limiter.Allow(ctx, s.prefix+key, redis_rate.Limit{Rate: limit.Events, Burst: limit.Events, Period: limit.Period})
	if err != nil {
		return ratelimit.Result{}, fmt.Errorf("redis rate limit: %w", err)
	}
	if res.Allowed > 0 {
		return ratelimit.Result{Allowed: true}, nil
	}
	return ratelimit.Result{RetryAfter: max(res.RetryAfter, 0)}, nil
}
