package redisadapter

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/conformance"
)

func singleNode(t testing.TB) redis.UniversalClient { return redistest.SingleNode(t) }
func cluster(t testing.TB) redis.UniversalClient    { return redistest.Cluster(t) }

// uniquePrefix returns a key prefix no other test run uses.
func uniquePrefix(t testing.TB) string { return redistest.UniqueName(t, "authport-test:") + ":" }

// fixture returns an adapter on a fresh prefix whose keys are deleted when
// t ends.
func fixture(t testing.TB, c redis.UniversalClient, opts ...Option) (*Adapter, rawView) {
	t.Helper()
	prefix := uniquePrefix(t)
	a, err := New(context.Background(), c, append([]Option{WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupPrefix(t, c, prefix)
	return a, newRawView(c, prefix)
}

func TestConformance(t *testing.T) {
	redistest.Conformance(t, "", redistest.Backends(true), func(t testing.TB, b *redistest.Backend) (any, conformance.Raw, string) {
		a, raw := fixture(t, b.Get(t))
		if want := b.Name == "redis-cluster"; a.ClusterMode() != want {
			t.Fatalf("cluster mode = %v, want %v", a.ClusterMode(), want)
		}
		return a, raw, raw.Prefix
	}, func(c redis.UniversalClient, prefix string) (any, error) {
		return New(context.Background(), c, WithPrefix(prefix))
	})
}
