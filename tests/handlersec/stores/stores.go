// Package stores opens real stores for tests, each fresh for one test and
// removed when it ends: a bbolt file, a PostgreSQL schema (through GORM)
// and a Redis key prefix. The servers are the ones conformance/provision
// names (AUTHPORT_POSTGRES_URL, AUTHPORT_REDIS_URL); without one a test
// skips, or fails when AUTHPORT_REQUIRE names it. The PostgreSQL schema
// is made with psql (oauthtest.PostgresSchema). The handler's security
// checks (tests/handlersec) and the passkey ceremonies
// (tests/passkeystore) run on them.
package stores

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
	goredis "github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	postgresgorm "github.com/authport/authport/adapters/postgres-gorm"
	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/oauth/oauthtest"
)

// RandomName returns prefix followed by 16 random hex digits: a schema
// name, key prefix or token no other test uses.
func RandomName(t testing.TB, prefix string) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// Bbolt opens a bbolt adapter on a file in t's temporary directory, closed
// when t ends.
func Bbolt(t *testing.T) *bboltadapter.Adapter {
	t.Helper()
	a, err := bboltadapter.Open(t.Context(), filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// RedisClient returns a client of the Redis server of AUTHPORT_REDIS_URL,
// closed when t ends.
func RedisClient(t *testing.T) *goredis.Client {
	t.Helper()
	opt, err := goredis.ParseURL(provision.Redis(t))
	if err != nil {
		t.Fatalf("AUTHPORT_REDIS_URL: %v", err)
	}
	c := goredis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Redis returns a Redis adapter under a key prefix of its own (prefix and
// random digits); the keys under it are deleted when t ends.
func Redis(t *testing.T, prefix string) *redisadapter.Adapter {
	t.Helper()
	client := RedisClient(t)
	keys := RandomName(t, prefix) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, keys+"*", 1000).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	a, err := redisadapter.New(context.Background(), client, redisadapter.WithPrefix(keys))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Postgres returns a migrated PostgreSQL (GORM) adapter in a schema of its
// own (prefix and random characters), dropped when t ends.
func Postgres(t *testing.T, prefix string) *postgresgorm.Adapter {
	t.Helper()
	db, err := sql.Open("pgx", oauthtest.PostgresSchema(t, provision.Postgres(t), prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // before the schema is dropped
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: db}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := postgresgorm.New(ctx, gdb)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}
