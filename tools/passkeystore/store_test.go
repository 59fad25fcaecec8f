package passkeystore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	goredis "github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	postgresgorm "github.com/authport/authport/adapters/postgres-gorm"
	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/passkey/passkeytest"
)

func randomName(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "passkey_" + hex.EncodeToString(b)
}

// TestRedis runs the ceremonies on a Redis server, each scenario under a
// key prefix of its own, removed afterwards.
func TestRedis(t *testing.T) {
	passkeytest.Run(t, func(t *testing.T) passkeytest.Store {
		opt, err := goredis.ParseURL(provision.Redis(t))
		if err != nil {
			t.Fatalf("AUTHPORT_REDIS_URL: %v", err)
		}
		client := goredis.NewClient(opt)
		prefix := randomName(t) + ":"
		t.Cleanup(func() {
			ctx := context.Background()
			iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
			for iter.Next(ctx) {
				client.Del(ctx, iter.Val())
			}
			_ = client.Close()
		})
		a, err := redisadapter.New(context.Background(), client, redisadapter.WithPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		return a
	})
}

// TestPostgres runs the ceremonies on PostgreSQL through GORM, each
// scenario in a schema of its own, dropped afterwards.
func TestPostgres(t *testing.T) {
	passkeytest.Run(t, func(t *testing.T) passkeytest.Store {
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
	})
}
