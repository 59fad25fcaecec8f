package provision

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recorder is a database/sql driver that records the statements it is
// given and fails those that start with fail.
type recorder struct {
	mu    sync.Mutex
	execs []string
	fail  string
}

func (r *recorder) Open(string) (driver.Conn, error) { return recConn{r}, nil }

func (r *recorder) statements() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.execs)
}

type recConn struct{ r *recorder }

func (c recConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not supported") }
func (c recConn) Close() error                        { return nil }
func (c recConn) Begin() (driver.Tx, error)           { return nil, errors.New("not supported") }

func (c recConn) ExecContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Result, error) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.r.execs = append(c.r.execs, query)
	if c.r.fail != "" && strings.HasPrefix(query, c.r.fail) {
		return nil, errors.New("refused")
	}
	return driver.RowsAffected(0), nil
}

// openRecorder opens a *sql.DB on a new recorder.
func openRecorder(t *testing.T, fail string) (*sql.DB, *recorder) {
	r := &recorder{fail: fail}
	db := sql.OpenDB(connector{r})
	t.Cleanup(func() { _ = db.Close() })
	return db, r
}

type connector struct{ r *recorder }

func (c connector) Connect(context.Context) (driver.Conn, error) { return recConn{c.r}, nil }
func (c connector) Driver() driver.Driver                        { return c.r }

func TestNewName(t *testing.T) {
	a, b := NewName("authport_"), NewName("authport_")
	if !regexp.MustCompile(`^authport_[0-9a-f]{10}$`).MatchString(a) || a == b {
		t.Errorf("NewName = %q, %q; want authport_ and ten hex digits, different each time", a, b)
	}
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name             string
		create           func(context.Context, *sql.DB, string) (string, func(context.Context) error, error)
		created, dropped string // with NAME for the name
	}{
		{"schema", CreateSchema, "CREATE SCHEMA NAME", "DROP SCHEMA NAME CASCADE"},
		{"database", CreateDatabase, "CREATE DATABASE NAME", "DROP DATABASE NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, r := openRecorder(t, "")
			name, drop, err := tt.create(ctx, db, "bench_")
			if err != nil || !strings.HasPrefix(name, "bench_") {
				t.Fatalf("create = %q, %v; want a name starting bench_", name, err)
			}
			if err := drop(ctx); err != nil {
				t.Fatalf("drop: %v", err)
			}
			want := []string{strings.ReplaceAll(tt.created, "NAME", name), strings.ReplaceAll(tt.dropped, "NAME", name)}
			if got := r.statements(); !slices.Equal(got, want) {
				t.Errorf("statements = %q, want %q", got, want)
			}

			db, _ = openRecorder(t, "CREATE")
			if _, _, err := tt.create(ctx, db, "bench_"); err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("create on a refusing server: err = %v, want it to wrap the refusal", err)
			}
			db, _ = openRecorder(t, "DROP")
			_, drop, err = tt.create(ctx, db, "bench_")
			if err != nil {
				t.Fatal(err)
			}
			if err := drop(ctx); err == nil || !strings.Contains(err.Error(), "drop it by hand") {
				t.Errorf("drop on a refusing server: err = %v, want the refusal and what to do", err)
			}
		})
	}
}

func TestInSchema(t *testing.T) {
	got, err := InSchema("postgres://u@h:5432/db?sslmode=disable", "authport_x")
	if want := "postgres://u@h:5432/db?search_path=authport_x&sslmode=disable"; err != nil || got != want {
		t.Errorf("InSchema = %q, %v; want %q", got, err, want)
	}
	if _, err := InSchema("postgres://h:bad port/db", "s"); err == nil {
		t.Error("InSchema of a malformed URL: no error")
	}
}

func TestQuery(t *testing.T) {
	const q = `SELECT "id" FROM "users" WHERE "email" = ? AND "name" = ?`
	tests := []struct{ backend, want string }{
		{BackendPostgres, `SELECT "id" FROM "users" WHERE "email" = $1 AND "name" = $2`},
		{BackendPostgresHA, `SELECT "id" FROM "users" WHERE "email" = $1 AND "name" = $2`},
		{BackendMySQL, "SELECT `id` FROM `users` WHERE `email` = ? AND `name` = ?"},
		{"sqlite", q},
	}
	for _, tt := range tests {
		if got := Query(tt.backend, q); got != tt.want {
			t.Errorf("Query(%q) = %q, want %q", tt.backend, got, tt.want)
		}
	}
}

func TestPostgresSchema(t *testing.T) {
	r := &recorder{}
	name := NewName("provision-recorder-") // a new name each run: -count=2 may not register one twice
	sql.Register(name, r)
	var schema string
	t.Run("test", func(t *testing.T) {
		var dsn string
		dsn, schema = PostgresSchema(t, name, "postgres://h/db")
		if want := "postgres://h/db?search_path=" + schema; dsn != want || !strings.HasPrefix(schema, "authport_") {
			t.Errorf("PostgresSchema = %q, %q; want %q", dsn, schema, want)
		}
		if got := r.statements(); !slices.Equal(got, []string{"CREATE SCHEMA " + schema}) {
			t.Errorf("statements during the test = %q", got)
		}
	})
	if got, want := r.statements(), []string{"CREATE SCHEMA " + schema, "DROP SCHEMA " + schema + " CASCADE"}; !slices.Equal(got, want) {
		t.Errorf("statements after the test = %q, want %q", got, want)
	}
}
