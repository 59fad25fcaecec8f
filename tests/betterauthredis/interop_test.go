package betterauthredis

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/redis/betterauth"
	interop "github.com/authport/authport/conformance/interop/betterauth"
	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
)

// nodeDir holds the npm packages of the row: better-auth, pg and ioredis,
// pinned in its package-lock.json (npm ci there).
const nodeDir = "npm"

var nodeNeed = []string{"better-auth/package.json", "pg/package.json", "ioredis/package.json"}

// TestInteropBetterAuthRedis runs the Better Auth interop suite with
// Better Auth's users and accounts in PostgreSQL (a fresh schema, tables
// made by its own migrate) and its sessions and verification values in
// Redis (secondaryStorage, keys under a fresh prefix): authport opens
// postgres-gorm with the BetterAuth preset on the schema, and the Redis
// layout of adapters/redis/betterauth over it on the same prefix.
func TestInteropBetterAuthRedis(t *testing.T) {
	interop.Run(t, interop.Pairing{Name: "postgres+redis", Setup: setup})
}

func setup(t *testing.T) *interop.Fixture {
	t.Helper()
	nodeproc.Check(t, nodeDir, nodeNeed...)
	redisURL := provision.Redis(t)
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	opt.ContextTimeoutEnabled = true
	rc := redis.NewClient(opt)
	t.Cleanup(func() { _ = rc.Close() })
	prefix := interop.Unique("authport-test-ba-row:") + ":"
	t.Cleanup(func() { deletePrefix(t, rc, prefix) })

	base := provision.Postgres(t)
	dsn, schema := provision.PostgresSchema(t, "pgx", base)
	sqlDB, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() }) // before the schema is dropped
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}

	secret := interop.NewSecret()
	var opened struct{ DDL string }
	node := interop.Start(t, nodeproc.Config{Dir: nodeDir, Script: "app.mjs", Need: nodeNeed}, secret,
		map[string]any{"url": base, "schema": schema, "redis": redisURL, "prefix": prefix}, &opened)
	if !strings.Contains(opened.DDL, `"user"`) {
		t.Fatalf("Better Auth's migrate ran %q, without the user table", opened.DDL)
	}
	primary, err := gormadapter.New(context.Background(), gdb, gormadapter.BetterAuth())
	if err != nil {
		t.Fatalf("postgres-gorm with BetterAuth() on the tables Better Auth's migrate made: %v\nits SQL:\n%s", err, opened.DDL)
	}
	t.Cleanup(func() { _ = primary.Close() })
	a, err := betterauth.New(context.Background(), rc, prefix, primary)
	if err != nil {
		t.Fatal(err)
	}
	return &interop.Fixture{
		Adapter: a, Node: node, Secret: secret,
		Leftovers:        func(t testing.TB, id string) []string { return leftovers(t, rc, prefix, sqlDB, id) },
		SecondaryStorage: true,
		// Both sides consume a verification value in one Redis command:
		// Better Auth's GETDEL (getAndDelete), authport's script.
		AtomicConsume: true,
	}
}

// leftovers describes what the stores still hold of the user: its rows in
// Better Auth's user and account tables (its migrate makes no session
// table when the app has secondaryStorage), and the Redis keys under
// the prefix whose name or value mentions its id, but its
// revoked-sessions-before key, which Better Auth's deleteUser and
// authport's write on purpose and which expires by itself.
func leftovers(t testing.TB, rc *redis.Client, prefix string, db *sql.DB, id string) []string {
	t.Helper()
	var out []string
	for _, q := range []struct{ what, table, col string }{
		{"users", "user", "id"}, {"accounts", "account", "userId"},
	} {
		var n int
		if err := db.QueryRow(fmt.Sprintf(`SELECT COUNT(*) FROM %q WHERE %q = $1`, q.table, q.col), id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			out = append(out, fmt.Sprintf("%d %s", n, q.what))
		}
	}
	ctx := context.Background()
	for _, k := range scan(t, rc, prefix) {
		name := strings.TrimPrefix(k, prefix)
		if name == "revoked-sessions-before-"+id {
			continue
		}
		v, err := rc.Get(ctx, k).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		if strings.Contains(name, id) || strings.Contains(v, id) {
			out = append(out, "redis key "+name)
		}
	}
	slices.Sort(out)
	return out
}

func scan(t testing.TB, rc *redis.Client, prefix string) []string {
	t.Helper()
	var out []string
	iter := rc.Scan(context.Background(), 0, strings.NewReplacer("*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(prefix)+"*", 10000).Iterator()
	for iter.Next(context.Background()) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func deletePrefix(t testing.TB, rc *redis.Client, prefix string) {
	for _, k := range scan(t, rc, prefix) {
		_ = rc.Del(context.Background(), k).Err()
	}
}
