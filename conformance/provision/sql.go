package provision

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// NewName returns prefix followed by ten random lowercase hexadecimal
// digits: the name of a database, schema, key prefix or collection that one
// test or run has to itself on a shared server.
func NewName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail
	return prefix + hex.EncodeToString(b)
}

// CreateSchema creates a PostgreSQL schema named [NewName](prefix) on the
// server admin is connected to. It returns the schema's name and drop, which
// drops the schema with everything in it; close the connections that use it
// first.
func CreateSchema(ctx context.Context, admin *sql.DB, prefix string) (name string, drop func(context.Context) error, err error) {
	return create(ctx, admin, "SCHEMA", prefix, " CASCADE")
}

// CreateDatabase creates a MySQL or MariaDB database named [NewName](prefix)
// on the server admin is connected to. It returns the database's name and
// drop, which drops it.
func CreateDatabase(ctx context.Context, admin *sql.DB, prefix string) (name string, drop func(context.Context) error, err error) {
	return create(ctx, admin, "DATABASE", prefix, "")
}

// create implements [CreateSchema] and [CreateDatabase]: kind is what the
// statements create and drop, dropSuffix ends the DROP statement.
func create(ctx context.Context, admin *sql.DB, kind, prefix, dropSuffix string) (string, func(context.Context) error, error) {
	name := NewName(prefix)
	if _, err := admin.ExecContext(ctx, "CREATE "+kind+" "+name); err != nil {
		return "", nil, fmt.Errorf("create %s %s (the user needs the right to create one): %w", strings.ToLower(kind), name, err)
	}
	drop := func(ctx context.Context) error {
		if _, err := admin.ExecContext(ctx, "DROP "+kind+" "+name+dropSuffix); err != nil {
			return fmt.Errorf("drop %s %s (drop it by hand): %w", strings.ToLower(kind), name, err)
		}
		return nil
	}
	return name, drop, nil
}

// InSchema returns the PostgreSQL URL base with schema as its search_path.
func InSchema(base, schema string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("PostgreSQL URL: %w (give a postgres:// URL)", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// PostgresSchema gives t a PostgreSQL schema of its own on the server at
// base (a URL from [Postgres] or [PostgresHA]), reached through the
// database/sql driver registered as driverName ("pgx" for jackc/pgx's
// stdlib). It returns base with the schema as its search_path, and the
// schema's name. The schema is dropped, with everything in it, when t ends;
// close the connections that use it in a t.Cleanup registered after this
// call, so that they close first. It fails t if it cannot.
func PostgresSchema(t testing.TB, driverName, base string) (dsn, schema string) {
	t.Helper()
	admin, err := sql.Open(driverName, base)
	if err != nil {
		t.Fatalf("open PostgreSQL through %q (import the driver): %v", driverName, err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	schema, drop, err := CreateSchema(context.Background(), admin, "authport_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if dsn, err = InSchema(base, schema); err != nil {
		t.Fatal(err)
	}
	return dsn, schema
}

// Query writes query, given with "double-quoted" names and ? placeholders,
// in the dialect of backend: with `backquoted` names for [BackendMySQL],
// with $1, $2… placeholders for [BackendPostgres] and [BackendPostgresHA],
// unchanged for any other (SQLite reads it as it is).
func Query(backend, query string) string {
	switch backend {
	case BackendMySQL:
		return strings.ReplaceAll(query, `"`, "`")
	case BackendPostgres, BackendPostgresHA:
		var b strings.Builder
		n := 0
		for _, c := range query {
			if c == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return query
}
