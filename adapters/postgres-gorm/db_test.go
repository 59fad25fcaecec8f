package gormadapter

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"
	sqlite3 "github.com/mattn/go-sqlite3"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Each test gets a database of its own on the shared servers: a fresh
// PostgreSQL schema, a fresh MySQL database, a fresh SQLite file. Everything
// is dropped in t.Cleanup.

var backends = []string{"postgres", "mysql", "sqlite"}

// variant is a backend with options, named name in subtests.
type variant struct {
	name, backend string
	opts          []Option
}

// pathVariants are the three backends and the transactional paths taken
// where the server has no RETURNING (MySQL, MariaDB < 10.5, SQLite <
// 3.35), forced on MariaDB and SQLite.
func pathVariants() []variant {
	return []variant{
		{"postgres", "postgres", nil}, {"mysql", "mysql", nil}, {"sqlite", "sqlite", nil},
		{"mysql_without_returning", "mysql", []Option{withoutReturning()}},
		{"sqlite_without_returning", "sqlite", []Option{withoutReturning()}},
	}
}

// testDB is one test's isolated database.
type testDB struct {
	dialect string
	gdb     *gorm.DB
	sqlDB   *sql.DB
	// name is the PostgreSQL schema or MySQL database; "" for SQLite.
	name string
	// counter counts the statements run through gdb when the database was
	// opened with counting on.
	counter *counter
}

func randomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "authport_" + hex.EncodeToString(b)
}

// scratch creates a new SCHEMA or DATABASE (kind) through driver on dsn
// and returns its name; it is dropped (DROP kind name dropSuffix) when the
// test ends, after the pools opened later are closed.
func scratch(t testing.TB, driver, dsn, kind, dropSuffix string) string {
	t.Helper()
	admin, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	name := randomName()
	if _, err := admin.ExecContext(context.Background(), "CREATE "+kind+" "+name); err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP "+kind+" "+name+dropSuffix); err != nil {
			t.Errorf("drop %s %s: %v", kind, name, err)
		}
	})
	return name
}

func gormConfig() *gorm.Config {
	return &gorm.Config{Logger: logger.Discard}
}

// openDB opens an isolated, empty database on the backend; with counting,
// every statement run through it is counted.
func openDB(t testing.TB, backend string, counting bool) *testDB {
	t.Helper()
	switch backend {
	case "postgres":
		return openPostgres(t, counting)
	case "postgres-ha":
		return openPostgresAt(t, provision.PostgresHA(t), counting, nil)
	case "mysql":
		return openMySQL(t, counting)
	case "sqlite":
		return openSQLite(t, counting)
	}
	t.Fatalf("unknown backend %q", backend)
	return nil
}

func openPostgres(t testing.TB, counting bool) *testDB {
	t.Helper()
	return openPostgresWith(t, counting, nil)
}

// openPostgresWith is openPostgres with extra DSN parameters (pgx's
// default_query_exec_mode, say).
func openPostgresWith(t testing.TB, counting bool, params map[string]string) *testDB {
	t.Helper()
	return openPostgresAt(t, provision.Postgres(t), counting, params)
}

// openPostgresAt is openPostgresWith on the server (or, with a multi-host
// URL, the highly available formation) base names.
func openPostgresAt(t testing.TB, base string, counting bool, params map[string]string) *testDB {
	t.Helper()
	schema := scratch(t, "pgx", base, "SCHEMA", " CASCADE")
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("PostgreSQL URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	dsn := u.String()

	c := newCounter(counting)
	sqlDB := openPool(t, "pgx", stdlib.GetDefaultDriver(), dsn, c) // closed before the schema is dropped
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), gormConfig())
	if err != nil {
		t.Fatalf("gorm.Open postgres: %v", err)
	}
	return &testDB{dialect: "postgres", gdb: gdb, sqlDB: sqlDB, name: schema, counter: c}
}

func openMySQL(t testing.TB, counting bool) *testDB {
	t.Helper()
	return openMySQLWith(t, counting, true, time.UTC)
}

// openMySQLWith is openMySQL with the DSN's parseTime and loc.
func openMySQLWith(t testing.TB, counting, parseTime bool, loc *time.Location) *testDB {
	t.Helper()
	cfg, err := mysqldriver.ParseDSN(provision.MySQL(t))
	if err != nil {
		t.Fatalf("AUTHPORT_MYSQL_URL: %v", err)
	}
	cfg.ParseTime = parseTime
	cfg.Loc = loc
	name := scratch(t, "mysql", cfg.FormatDSN(), "DATABASE", "")
	cfg.DBName = name
	dsn := cfg.FormatDSN()
	c := newCounter(counting)
	sqlDB := openPool(t, "mysql", &mysqldriver.MySQLDriver{}, dsn, c)
	gdb, err := gorm.Open(mysql.New(mysql.Config{Conn: sqlDB}), gormConfig())
	if err != nil {
		t.Fatalf("gorm.Open mysql: %v", err)
	}
	return &testDB{dialect: "mysql", gdb: gdb, sqlDB: sqlDB, name: name, counter: c}
}

// sqliteDSN is how the tests (and the README) open SQLite: foreign keys on
// (required), a busy timeout and WAL for concurrent writers.
func sqliteDSN(path string) string { return sqliteDSNBusy(path, 10*time.Second) }

// sqliteDSNBusy is sqliteDSN with another busy timeout.
func sqliteDSNBusy(path string, busy time.Duration) string {
	return fmt.Sprintf("file:%s?_foreign_keys=on&_busy_timeout=%d&_journal_mode=WAL&_txlock=immediate", path, busy.Milliseconds())
}

func openSQLite(t testing.TB, counting bool) *testDB {
	t.Helper()
	return openSQLiteCounted(t, newCounter(counting))
}

// openSQLiteCounted opens a fresh SQLite file, through a counting
// connector with c's hooks unless c is nil.
func openSQLiteCounted(t testing.TB, c *counter) *testDB {
	t.Helper()
	sqlDB := openPool(t, "sqlite3", &sqlite3.SQLiteDriver{}, sqliteDSN(filepath.Join(t.TempDir(), "auth.db")), c)
	gdb, err := gorm.Open(sqlite.New(sqlite.Config{Conn: sqlDB}), gormConfig())
	if err != nil {
		t.Fatalf("gorm.Open sqlite: %v", err)
	}
	return &testDB{dialect: "sqlite", gdb: gdb, sqlDB: sqlDB, counter: c}
}

// newCounter returns a counter when counting, else nil.
func newCounter(counting bool) *counter {
	if counting {
		return &counter{}
	}
	return nil
}

// openPool opens dsn with the driver registered as name, or, when c is
// not nil, with drv through a connector that counts into c. The pool is
// closed when the test ends.
func openPool(t testing.TB, name string, drv driver.Driver, dsn string, c *counter) *sql.DB {
	t.Helper()
	var db *sql.DB
	if c != nil {
		db = sql.OpenDB(&countingConnector{dsn: dsn, drv: drv, c: c})
	} else {
		var err error
		if db, err = sql.Open(name, dsn); err != nil {
			t.Fatal(err)
		}
	}
	if name != "sqlite3" {
		db.SetMaxOpenConns(serverPoolLimit)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// serverPoolLimit caps the connections of one test's pool on a shared
// PostgreSQL or MariaDB. The suites run side by side (TestConformance*),
// and the test command runs other modules beside this one, all on the same
// servers: a rule racing 50 callers would otherwise open 50 connections,
// and a few such rules at once exhaust PostgreSQL's default
// max_connections of 100 ("sorry, too many clients already"). The callers
// still race, 12 statements at a time, and wait for a connection as an
// application's bounded pool makes them wait.
const serverPoolLimit = 12

// mustNew returns an adapter on db made with opts, closed when the test
// ends.
func mustNew(t testing.TB, db *testDB, opts ...Option) *Adapter {
	t.Helper()
	a, err := New(context.Background(), db.gdb, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// migrated is mustNew with the adapter's tables migrated.
func migrated(t testing.TB, db *testDB, opts ...Option) *Adapter {
	t.Helper()
	a := mustNew(t, db, opts...)
	if err := a.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return a
}

// newAdapter returns a migrated adapter on a fresh database.
func newAdapter(t testing.TB, backend string, counting bool, opts ...Option) (*Adapter, *testDB) {
	t.Helper()
	db := openDB(t, backend, counting)
	return migrated(t, db, opts...), db
}

var _ driver.Connector = (*countingConnector)(nil)
