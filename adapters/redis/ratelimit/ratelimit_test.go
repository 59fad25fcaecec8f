package ratelimit_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/ratelimit"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core/ratelimit/ratelimittest"
)

// TestRedis runs the store contract on a single Redis node.
func TestRedis(t *testing.T) {
	opt, err := redis.ParseURL(provision.Redis(t))
	if err != nil {
		t.Fatalf("AUTHPORT_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	ratelimittest.Run(t, ratelimit.New(c))
}

// TestRedisCluster runs it on Redis Cluster: one key per call, so no
// cross-slot errors, and the counting stays atomic.
func TestRedisCluster(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: provision.RedisCluster(t)})
	t.Cleanup(func() { c.Close() })
	ratelimittest.Run(t, ratelimit.New(c, ratelimit.WithPrefix("authport-test:")))
}
