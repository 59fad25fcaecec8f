package oauthtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// PostgresDatabase creates a database of t's own on the PostgreSQL server
// of admin (a postgres:// URL of a user allowed to create databases),
// named prefix and random letters and digits, and returns its URL: for
// [DexConfig.PostgresURL], or the application's own database. It is dropped
// when t ends. Like [PostgresSchema] it runs PostgreSQL's own client,
// psql, installed with the server: a Go driver here would be a dependency
// of every module that requires oauth. A failure fails t.
func PostgresDatabase(t testing.TB, admin, prefix string) string {
	t.Helper()
	return postgresScratch(t, admin, prefix, "DATABASE", " WITH (FORCE)", func(u *url.URL, name string) { u.Path = "/" + name })
}

// PostgresSchema creates a schema of t's own in the database of admin,
// named prefix and random letters and digits, and returns admin's URL with
// the schema as its search_path (a parameter pgx and lib/pq pass on, psql
// does not take); it is dropped with what it holds when t ends. A schema is
// quicker to make than a database; dex needs a database.
func PostgresSchema(t testing.TB, admin, prefix string) string {
	t.Helper()
	return postgresScratch(t, admin, prefix, "SCHEMA", " CASCADE", func(u *url.URL, name string) {
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
	})
}

// postgresScratch creates the object of the kind (DATABASE or SCHEMA) with
// psql, drops it with the drop options when t ends, and returns admin's
// URL changed by point to use it.
func postgresScratch(t testing.TB, admin, prefix, kind, dropOptions string, point func(u *url.URL, name string)) string {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("the PostgreSQL URL %q: %v", admin, err)
	}
	name := prefix + strings.ToLower(rand.Text())
	if err := psql(admin, "CREATE "+kind+" "+name); err != nil {
		t.Fatalf("creating the %s %s: %v", strings.ToLower(kind), name, err)
	}
	t.Cleanup(func() {
		if err := psql(admin, "DROP "+kind+" IF EXISTS "+name+dropOptions); err != nil {
			t.Errorf("dropping the %s %s: %v", strings.ToLower(kind), name, err)
		}
	})
	point(u, name)
	return u.String()
}

// psql runs one SQL statement on the server of the URL.
func psql(url, statement string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", statement).CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql -c %q: %w: %s (is PostgreSQL's client psql on PATH?)", statement, err, out)
	}
	return nil
}
