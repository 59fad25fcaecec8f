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
// when t ends. It runs PostgreSQL's own client, psql, installed with the
// server: a Go driver here would be a dependency of every module that
// requires oauth. A failure fails t.
func PostgresDatabase(t testing.TB, admin, prefix string) string {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("the PostgreSQL URL %q: %v", admin, err)
	}
	name := prefix + strings.ToLower(rand.Text())
	if err := psql(admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating the database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := psql(admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping the database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
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
