package gormadapter

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authport/authport/conformance/interop/betterauth"
	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

// baNodeDir holds the npm packages of the Better Auth rows: better-auth
// itself and the drivers its Kysely adapter is handed (pg, mysql2,
// better-sqlite3), pinned in its package-lock.json.
const baNodeDir = "betterauth-interop"

// baNodeNeed are the packages app.mjs needs under baNodeDir/node_modules.
var baNodeNeed = []string{
	"better-auth/package.json",
	"pg/package.json",
	"mysql2/package.json",
	"better-sqlite3/package.json",
}

// baRow is one backend of the Better Auth rows.
type baRow struct {
	backend string // postgres, mysql, sqlite
	// atomicConsume: Better Auth's consumeVerificationValue and
	// authport's useVerificationToken are atomic against each other there.
	atomicConsume bool
	// migrate: authport's Migrate makes the tables, before the app starts
	// (whose migrate must then find nothing to do); otherwise Better
	// Auth's migrate makes them.
	migrate bool
}

// setupBetterAuthRow makes a fresh database, has a Better Auth app create
// its tables there with its own migrate (getMigrations), and opens
// authport on them with the BetterAuth preset.
func setupBetterAuthRow(t *testing.T, r baRow) *betterauth.Fixture {
	t.Helper()
	nodeproc.Check(t, baNodeDir, baNodeNeed...) // before any database is made
	open := map[string]any{"dialect": r.backend}
	var gdb *gorm.DB
	var sqlDB *sql.DB
	switch r.backend {
	case "postgres":
		db := openPostgres(t, false)
		open["url"], open["schema"] = provision.Postgres(t), db.name
		gdb, sqlDB = db.gdb, db.sqlDB
	case "mysql":
		db := openMySQL(t, false)
		// Better Auth's migrate gives its columns the database's
		// collation, on most servers a case-insensitive one, which New
		// refuses for key columns (see WithCaseInsensitiveCollation); the
		// fix the preset's documentation gives is a database whose default
		// collation is binary, made before the app migrates. Migrate
		// makes its key columns binary itself: the database keeps the
		// server's default then.
		if !r.migrate {
			if _, err := db.sqlDB.ExecContext(context.Background(), "ALTER DATABASE "+db.name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
				t.Fatal(err)
			}
		}
		c, err := mysqldriver.ParseDSN(provision.MySQL(t))
		if err != nil {
			t.Fatal(err)
		}
		u := url.URL{Scheme: "mysql", Host: c.Addr, Path: "/" + db.name}
		if c.Passwd != "" {
			u.User = url.UserPassword(c.User, c.Passwd)
		} else {
			u.User = url.User(c.User)
		}
		open["url"] = u.String()
		gdb, sqlDB = db.gdb, db.sqlDB
	case "sqlite":
		path := filepath.Join(t.TempDir(), "shared.db")
		open["url"], open["busyTimeoutMs"] = path, interopSQLiteBusy.Milliseconds()
		var err error
		sqlDB, err = sql.Open("sqlite3", sqliteDSNBusy(path, interopSQLiteBusy))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sqlDB.Close() })
		gdb, err = gorm.Open(sqlite.New(sqlite.Config{Conn: sqlDB}), gormConfig())
		if err != nil {
			t.Fatal(err)
		}
	}
	if r.migrate {
		// authport's Migrate makes the tables; Better Auth's migrate then
		// finds nothing to do.
		a, err := New(context.Background(), gdb, BetterAuth())
		if err != nil {
			t.Fatalf("New with BetterAuth() on an empty database: %v", err)
		}
		if err := a.Migrate(context.Background()); err != nil {
			t.Fatalf("Migrate with BetterAuth(): %v", err)
		}
		_ = a.Close()
	}
	secret := betterauth.NewSecret()
	var opened struct{ DDL string }
	node := betterauth.Start(t, nodeproc.Config{Dir: baNodeDir, Script: "app.mjs", Need: baNodeNeed}, secret, open, &opened)
	if r.migrate {
		if strings.Trim(opened.DDL, "; \n") != "" {
			t.Errorf("Better Auth's migrate on the tables Migrate made ran:\n%s\nwant nothing", opened.DDL)
		}
	} else {
		checkBetterAuthMigrateDDL(t, r.backend, opened.DDL)
	}
	a, err := New(context.Background(), gdb, BetterAuth())
	if err != nil {
		t.Fatalf("New with BetterAuth() on the tables Better Auth's migrate made: %v\nits SQL:\n%s", err, opened.DDL)
	}
	t.Cleanup(func() { _ = a.Close() })
	f := &betterauth.Fixture{
		Adapter: a, Node: node, Secret: secret,
		Leftovers:     func(t testing.TB, id string) []string { return baLeftovers(t, a, sqlDB, id) },
		AtomicConsume: r.atomicConsume,
	}
	if r.backend == "sqlite" {
		f.Busy = func(err error) bool {
			return strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")
		}
	}
	return f
}

// baLeftovers counts, raw, the rows of Better Auth's tables that belong to
// the user: the user itself and the sessions and accounts naming it.
func baLeftovers(t testing.TB, a *Adapter, db *sql.DB, id string) []string {
	t.Helper()
	d := &a.d
	ph := "?"
	if d.postgres() {
		ph = "$1"
	}
	var out []string
	for _, q := range []struct{ what, table, col string }{
		{"users", "user", "id"}, {"sessions", "session", "userId"}, {"accounts", "account", "userId"},
	} {
		s := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s = %s", d.table(q.table), d.ident(q.col), ph)
		if n := count(t, db, s, id); n != 0 {
			out = append(out, fmt.Sprintf("%d %s", n, q.what))
		}
	}
	return out
}

// checkBetterAuthMigrateDDL compares the SQL Better Auth's migrate ran
// (its compileMigrations: statements ending in ";", a blank line apart)
// with betterAuthMigrateDDL, the copy the other tests of the preset run
// without Node, so that the copy is what the pinned package makes.
func checkBetterAuthMigrateDDL(t *testing.T, backend, ddl string) {
	t.Helper()
	var got []string
	for _, s := range strings.Split(ddl, ";\n") {
		if s = strings.TrimSuffix(strings.TrimSpace(s), ";"); s != "" {
			got = append(got, s)
		}
	}
	if want := betterAuthMigrateDDL[backend]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Better Auth's migrate ran, on %s:\n%s\nbetterAuthMigrateDDL has:\n%s", backend, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestInteropBetterAuth runs the Better Auth interop suite
// (conformance/interop/betterauth) on PostgreSQL, MariaDB and SQLite: a
// betterAuth() app (better-auth 1.7.25 from betterauth-interop's lock
// file, in a Node process) and authport with the BetterAuth preset share
// the tables Better Auth's own migrate made.
func TestInteropBetterAuth(t *testing.T) {
	rows := []baRow{
		{backend: "postgres", atomicConsume: true},
		{backend: "mysql", atomicConsume: true},
		{backend: "sqlite", atomicConsume: true},
		{backend: "postgres", atomicConsume: true, migrate: true},
		{backend: "mysql", atomicConsume: true, migrate: true},
		{backend: "sqlite", atomicConsume: true, migrate: true},
	}
	var ps []betterauth.Pairing
	for _, r := range rows {
		name := r.backend
		if r.migrate {
			name += "/authport-migrate"
		}
		ps = append(ps, betterauth.Pairing{Name: name, Setup: func(t *testing.T) *betterauth.Fixture { return setupBetterAuthRow(t, r) }})
	}
	betterauth.Run(t, ps...)
}
