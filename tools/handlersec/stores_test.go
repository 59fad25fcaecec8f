package handlersec

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	goredis "github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	postgresgorm "github.com/authport/authport/adapters/postgres-gorm"
	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

func randomName(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "handlersec_" + hex.EncodeToString(b)
}

// stores are the real stores the tests run on, each fresh for the test.
var stores = []struct {
	name string
	open func(t *testing.T) core.Adapter
}{
	{"bbolt", openBbolt},
	{"postgres", openPostgres},
	{"redis", openRedis},
}

func openBbolt(t *testing.T) core.Adapter {
	a, err := bboltadapter.Open(t.Context(), filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func redisClient(t *testing.T) *goredis.Client {
	opt, err := goredis.ParseURL(provision.Redis(t))
	if err != nil {
		t.Fatalf("AUTHPORT_REDIS_URL: %v", err)
	}
	c := goredis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func openRedis(t *testing.T) core.Adapter {
	client := redisClient(t)
	prefix := randomName(t) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	a, err := redisadapter.New(context.Background(), client, redisadapter.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func openPostgres(t *testing.T) core.Adapter {
	base := provision.Postgres(t)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	schema := randomName(t)
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("AUTHPORT_POSTGRES_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // before the schema is dropped
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: db}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	a, err := postgresgorm.New(ctx, gdb)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}
