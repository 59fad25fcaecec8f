package redisadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/conformance/provision"
)

// backend is one Redis deployment the tests run against.
type backend struct {
	name    string
	once    sync.Once
	client  redis.UniversalClient
	connect func(t testing.TB) redis.UniversalClient
}

func singleNode(t testing.TB) redis.UniversalClient {
	opt, err := redis.ParseURL(provision.Redis(t))
	if err != nil {
		t.Fatalf("AUTHPORT_REDIS_URL: %v", err)
	}
	return redis.NewClient(opt)
}

func cluster(t testing.TB) redis.UniversalClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: provision.RedisCluster(t)})
}

// sentinel connects through go-redis's failover client to the master the
// sentinels of AUTHPORT_REDIS_SENTINEL_URL name.
func sentinel(t testing.TB) redis.UniversalClient {
	opt, err := redis.ParseFailoverURL(provision.RedisSentinel(t))
	if err != nil {
		t.Fatalf("AUTHPORT_REDIS_SENTINEL_URL: %v", err)
	}
	return redis.NewFailoverClient(opt)
}

// get returns the backend's shared client, connecting once. It skips or
// fails t (through provision) when the backend is not there.
func (b *backend) get(t testing.TB) redis.UniversalClient {
	t.Helper()
	b.once.Do(func() { b.client = b.connect(t) })
	if b.client == nil {
		if provision.Required(b.name) {
			t.Fatalf("%s: required but not available", b.name)
		}
		t.Skipf("%s: not available", b.name)
	}
	return b.client
}

// uniquePrefix returns a key prefix no other test run uses.
func uniquePrefix(t testing.TB) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "authport-test:" + hex.EncodeToString(b[:]) + ":"
}

// fixture returns an adapter on a fresh prefix whose keys are deleted when
// t ends.
func fixture(t testing.TB, c redis.UniversalClient, opts ...Option) (*Adapter, rawView) {
	t.Helper()
	prefix := uniquePrefix(t)
	a, err := New(c, append([]Option{WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := deletePrefix(ctx, c, prefix); err != nil {
			t.Errorf("cleaning up prefix %s: %v", prefix, err)
		}
	})
	return a, rawView{c: c, prefix: prefix}
}

func TestConformance(t *testing.T) {
	for _, b := range []*backend{
		{name: "redis", connect: singleNode},
		{name: "redis-cluster", connect: cluster},
		{name: "redis-sentinel", connect: sentinel},
	} {
		conformance.Run(t, conformance.Harness{
			Name: b.name,
			New: func(t testing.TB) conformance.Fixture {
				a, raw := fixture(t, b.get(t))
				if want := b.name == "redis-cluster"; a.ClusterMode() != want {
					t.Fatalf("cluster mode = %v, want %v", a.ClusterMode(), want)
				}
				return conformance.Fixture{Adapter: a, Raw: raw, Peer: func(t testing.TB) any {
					// A second instance with a client of its own.
					c := b.connect(t)
					t.Cleanup(func() { _ = c.Close() })
					p, err := New(c, WithPrefix(raw.prefix))
					if err != nil {
						t.Fatalf("second New on the same prefix: %v", err)
					}
					return p
				}}
			},
		})
		if b.client != nil {
			_ = b.client.Close()
		}
	}
}
