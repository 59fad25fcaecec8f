package oauthtest

import (
	"net/url"
	"os"
	"strings"
	"testing"
)

// The database exists for the test's own use, under the prefix, and is
// gone after the test.
func TestPostgresDatabase(t *testing.T) {
	admin := os.Getenv("AUTHPORT_POSTGRES_URL")
	if admin == "" {
		t.Skip("AUTHPORT_POSTGRES_URL is not set")
	}
	var db string
	t.Run("create", func(t *testing.T) {
		db = PostgresDatabase(t, admin, "authport_oauthtest_")
		if !strings.Contains(db, "/authport_oauthtest_") {
			t.Errorf("database URL %s: want the prefix in the path", db)
		}
		if err := psql(db, "CREATE TABLE t (id int)"); err != nil {
			t.Errorf("using the database: %v", err)
		}
	})
	if db == "" {
		t.FailNow()
	}
	if err := psql(db, "SELECT 1"); err == nil {
		t.Errorf("the database %s is still there after its test", db)
	}
}

// The schema is the URL's search_path, under the prefix, and is gone after
// the test.
func TestPostgresSchema(t *testing.T) {
	admin := os.Getenv("AUTHPORT_POSTGRES_URL")
	if admin == "" {
		t.Skip("AUTHPORT_POSTGRES_URL is not set")
	}
	var schema string
	t.Run("create", func(t *testing.T) {
		u, err := url.Parse(PostgresSchema(t, admin, "authport_oauthtest_"))
		if err != nil {
			t.Fatal(err)
		}
		schema = u.Query().Get("search_path")
		if !strings.HasPrefix(schema, "authport_oauthtest_") {
			t.Errorf("search_path %q: want the prefix", schema)
		}
		if err := psql(admin, "CREATE TABLE "+schema+".t (id int)"); err != nil {
			t.Errorf("using the schema: %v", err)
		}
	})
	if schema == "" {
		t.FailNow()
	}
	if err := psql(admin, "CREATE TABLE "+schema+".t2 (id int)"); err == nil {
		t.Errorf("the schema %s is still there after its test", schema)
		_ = psql(admin, "DROP SCHEMA "+schema+" CASCADE")
	}
}
