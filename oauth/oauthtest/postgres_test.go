package oauthtest

import (
	"net/url"
	"os"
	"strings"
	"testing"
)

// Each scratch object is named under the prefix, takes a table while its
// test runs, and is gone after the test: a database (the URL's path) and a
// schema (the URL's search_path, reached through admin's connection).
func TestPostgresScratch(t *testing.T) {
	admin := os.Getenv("AUTHPORT_POSTGRES_URL")
	if admin == "" {
		t.Skip("AUTHPORT_POSTGRES_URL is not set")
	}
	for _, tc := range []struct {
		kind string
		make func(t testing.TB, admin, prefix string) string
		// name is the object's name in the URL; conn and table say where
		// psql creates a table in it.
		name  func(u *url.URL) string
		conn  func(made string) string
		table func(name string) string
	}{
		{"database", PostgresDatabase, func(u *url.URL) string { return strings.TrimPrefix(u.Path, "/") },
			func(made string) string { return made }, func(string) string { return "t" }},
		{"schema", PostgresSchema, func(u *url.URL) string { return u.Query().Get("search_path") },
			func(string) string { return admin }, func(name string) string { return name + ".t" }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var conn, table string
			t.Run("create", func(t *testing.T) {
				made := tc.make(t, admin, "authport_oauthtest_")
				u, err := url.Parse(made)
				if err != nil {
					t.Fatal(err)
				}
				name := tc.name(u)
				if !strings.HasPrefix(name, "authport_oauthtest_") {
					t.Errorf("%s %q in %s: want the prefix", tc.kind, name, made)
				}
				conn, table = tc.conn(made), tc.table(name)
				if err := psql(conn, "CREATE TABLE "+table+" (id int)"); err != nil {
					t.Errorf("using the %s: %v", tc.kind, err)
				}
			})
			if conn == "" {
				t.FailNow()
			}
			if err := psql(conn, "CREATE TABLE "+table+"2 (id int)"); err == nil {
				t.Errorf("the %s of %s is still there after its test", tc.kind, table)
			}
		})
	}
}
