package betterauth

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/ratelimit"
)

// RateLimitKey returns the key under which Better Auth counts a request
// with secondary-storage rate limiting (createRateLimitKey): the client's
// address ("no-trusted-ip" when it has none it trusts) and the request's
// path below the app's base path (as "/sign-in/email"), joined by '|'.
func RateLimitKey(ip, path string) string { return ip + "|" + path }

// RateLimiter is a [ratelimit.Store] that counts as a Better Auth app with
// secondaryStorage on Redis does, in the same keys: a counter at
// prefix+key, created at 1 with a TTL of the limit's period (whole
// seconds, at least one) and never extended, an event allowed while the
// counter is at most the limit's Events. So a Go service that limits
// under [RateLimitKey] shares its budget with the app's rule of the same
// window and max.
//
// That is a fixed window, not the GCRA of authport's other stores: a key
// may have Events events at the end of one window and Events more at the
// start of the next. A refused event is not counted (Better Auth counts
// it, which changes none of its answers: the counter is past the max
// either way). It is safe for concurrent use; each Allow is one script.
type RateLimiter struct {
	c      redis.UniversalClient
	prefix string
	script *redis.Script
}

var _ ratelimit.Store = (*RateLimiter)(nil)

// luaRateLimit: KEYS the counter; ARGV the max, the window in seconds.
// Returns {1, 0} for an allowed event, {0, PTTL} for a refused one.
const luaRateLimit = `
local n = tonumber(redis.call('GET', KEYS[1])) or 0
if n >= tonumber(ARGV[1]) then return {0, redis.call('PTTL', KEYS[1])} end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return {1, 0}
`

// NewRateLimiter returns a RateLimiter on client whose keys start with
// prefix, the prefix the app's secondaryStorage uses (that of [New]). On
// Redis Cluster each counter is one key: any prefix works.
func NewRateLimiter(client redis.UniversalClient, prefix string) (*RateLimiter, error) {
	if client == nil {
		return nil, fmt.Errorf("betterauth: the rate limiter's client is nil: %w", core.ErrInvalidInput)
	}
	return &RateLimiter{c: client, prefix: prefix, script: redis.NewScript(luaRateLimit)}, nil
}

// Allow implements [ratelimit.Store]: it counts one event for key against
// limit in Better Auth's fixed window. A refused event's RetryAfter is
// what is left of the window.
func (r *RateLimiter) Allow(ctx context.Context, key string, limit ratelimit.Limit) (ratelimit.Result, error) {
	if err := limit.Check(); err != nil {
		return ratelimit.Result{}, err
	}
	window := int64(math.Ceil(limit.Period.Seconds()))
	res, err := r.script.Run(ctx, r.c, []string{r.prefix + key}, limit.Events, max(window, 1)).Int64Slice()
	if err != nil {
		return ratelimit.Result{}, err
	}
	if len(res) != 2 {
		return ratelimit.Result{}, fmt.Errorf("betterauth: unexpected rate-limit script reply %v", res)
	}
	if res[0] == 1 {
		return ratelimit.Result{Allowed: true}, nil
	}
	retry := time.Duration(res[1]) * time.Millisecond
	if res[1] < 0 { // a counter without a TTL (written by someone else)
		retry = time.Duration(max(window, 1)) * time.Second
	}
	return ratelimit.Result{RetryAfter: retry}, nil
}
