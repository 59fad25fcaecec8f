package main

import (
	"context"
	"database/sql"
	"testing"

	"github.com/authport/authport/conformance/provision"
)

// TestPostgresSchema runs conformance/provision's PostgresSchema on the
// PostgreSQL server through pgx (which that package may not import): a
// table made through the URL it returns lands in the schema, and the
// schema is gone once the test that asked for it ended.
func TestPostgresSchema(t *testing.T) {
	base := provision.Postgres(t)
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var schema string
	t.Run("test", func(t *testing.T) {
		var dsn string
		dsn, schema = provision.PostgresSchema(t, "pgx", base)
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() }) // before the schema is dropped
		if _, err := db.ExecContext(ctx, "CREATE TABLE t (id int)"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 't'", schema).Scan(&n); err != nil || n != 1 {
			t.Errorf("tables named t in %s: %d, %v; want 1", schema, n, err)
		}
	})
	var n int
	if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema).Scan(&n); err != nil || n != 0 {
		t.Errorf("schemata named %s after the test: %d, %v; want 0", schema, n, err)
	}
}
