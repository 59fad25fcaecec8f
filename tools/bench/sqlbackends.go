package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mattn/go-sqlite3"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// sqlStore is one SQL database opened for the bench: the *sql.DB the
// adapter runs on (through gorm) and the raw baseline runs on too.
type sqlStore struct {
	dialect string // postgres, mysql, sqlite
	db      *sql.DB
	adapter *gormadapter.Adapter
	rt      *roundTrips
	cleanup []func()
}

func (s *sqlStore) close() {
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
}

// q turns a query written with "double-quoted" names and ? placeholders
// into the dialect's.
func (s *sqlStore) q(query string) string {
	return provision.Query(s.dialect, query)
}

func (s *sqlStore) timeArg(t time.Time) any {
	t = t.UTC().Truncate(time.Millisecond)
	if s.dialect == "sqlite" {
		return t.Format("2006-01-02 15:04:05.000")
	}
	return t
}

// openDB opens s.db on c, its pool sized for concurrency 32, closed at
// close.
func (s *sqlStore) openDB(c driver.Connector) {
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	s.db = db
	s.cleanup = append(s.cleanup, func() { _ = db.Close() })
}

// openAdapter opens s.db on c and the migrated gorm adapter on it, through
// the dialector dialect makes of s.db; on an error it closes s.
func (s *sqlStore) openAdapter(c driver.Connector, dialect func(*sql.DB) gorm.Dialector) (*sqlStore, error) {
	s.openDB(c)
	if err := newGormAdapter(s, dialect(s.db)); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func newGormAdapter(s *sqlStore, dialector gorm.Dialector) error {
	gdb, err := gorm.Open(dialector, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return err
	}
	a, err := gormadapter.New(context.Background(), gdb)
	if err != nil {
		return err
	}
	s.cleanup = append(s.cleanup, func() { _ = a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	s.adapter = a
	return nil
}

// openPostgres makes a schema of its own on AUTHPORT_POSTGRES_URL's
// database (dropped at close) and opens it through pgx's database/sql
// driver with a counting dialer.
func openPostgres(ctx context.Context, base string, wrap wrapper) (*sqlStore, error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, err
	}
	s := &sqlStore{dialect: "postgres", rt: &roundTrips{}}
	s.cleanup = append(s.cleanup, func() { _ = admin.Close() })
	cfg, _, err := s.schema(ctx, admin, base, "authport_bench_")
	if err != nil {
		s.close()
		return nil, err
	}
	cfg.DialFunc = s.rt.dial
	return s.openAdapter(wrap.apply(stdlib.GetConnector(*cfg)), func(db *sql.DB) gorm.Dialector {
		return postgres.New(postgres.Config{Conn: db})
	})
}

var registerMySQLDial sync.Once

// mysqlCounter is the counter of the "authport-bench" network the MySQL
// driver dials through (a driver-wide registration, made once).
var mysqlCounter = &roundTrips{}

// openMySQL makes a database of its own on AUTHPORT_MYSQL_URL's server
// (dropped at close).
func openMySQL(ctx context.Context, base string, wrap wrapper) (*sqlStore, error) {
	registerMySQLDial.Do(func() {
		mysql.RegisterDialContext("authport-bench", func(ctx context.Context, addr string) (net.Conn, error) { return mysqlCounter.dial(ctx, "tcp", addr) })
	})
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		return nil, err
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	adminCfg := cfg.Clone()
	adminCfg.DBName = ""
	admin, err := sql.Open("mysql", adminCfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	s := &sqlStore{dialect: "mysql", rt: mysqlCounter}
	s.cleanup = append(s.cleanup, func() { _ = admin.Close() })
	name, drop, err := provision.CreateDatabase(ctx, admin, "authport_bench_")
	if err != nil {
		s.close()
		return nil, err
	}
	s.cleanup = append(s.cleanup, func() { _ = drop(context.Background()) })
	cfg.DBName = name
	cfg.Net = "authport-bench"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		s.close()
		return nil, err
	}
	return s.openAdapter(wrap.apply(conn), func(db *sql.DB) gorm.Dialector {
		return gormmysql.New(gormmysql.Config{Conn: db})
	})
}

// openSQLite opens a new file in dir with the DSN adapters/postgres-gorm
// documents (foreign keys on, WAL, a busy timeout, immediate write
// transactions), removed at close.
func openSQLite(dir string, wrap wrapper) (*sqlStore, error) {
	d, err := os.MkdirTemp(dir, "authport-bench-sqlite-")
	if err != nil {
		return nil, err
	}
	s := &sqlStore{dialect: "sqlite"}
	s.cleanup = append(s.cleanup, func() { _ = os.RemoveAll(d) })
	dsn := "file:" + filepath.Join(d, "auth.db") + "?_foreign_keys=on&_busy_timeout=10000&_journal_mode=WAL&_txlock=immediate"
	return s.openAdapter(wrap.apply(dsnConnector{dsn: dsn, drv: &sqlite3.SQLiteDriver{}}), func(db *sql.DB) gorm.Dialector {
		return sqlite.New(sqlite.Config{Conn: db})
	})
}

// wrapper wraps the connector a SQL store opens its *sql.DB with (the
// index test records the adapter's statements so); nil leaves it as is.
type wrapper func(driver.Connector) driver.Connector

func (w wrapper) apply(c driver.Connector) driver.Connector {
	if w == nil {
		return c
	}
	return w(c)
}

// dsnConnector is a driver.Connector for a driver that has none (SQLite).
type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (d dsnConnector) Connect(context.Context) (driver.Conn, error) { return d.drv.Open(d.dsn) }
func (d dsnConnector) Driver() driver.Driver                        { return d.drv }

// flexTime scans a timestamp as the drivers return it: time.Time
// (PostgreSQL, MariaDB with parseTime) or text (SQLite).
type flexTime struct{ t time.Time }

func (f *flexTime) Scan(v any) error {
	switch x := v.(type) {
	case time.Time:
		f.t = x
		return nil
	case string:
		return f.parse(x)
	case []byte:
		return f.parse(string(x))
	}
	return fmt.Errorf("cannot scan %T as a time", v)
}

func (f *flexTime) parse(s string) error {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			f.t = t
			return nil
		}
	}
	return fmt.Errorf("cannot parse time %q", s)
}

// rawSQL is the raw baseline: one hand-written statement per operation
// (prepared once, as a program that cares would), on the adapter's own
// *sql.DB. MariaDB has no UPDATE … RETURNING, so its updateSession is an
// UPDATE and a SELECT in a transaction, as the adapter's is.
func (s *sqlStore) rawSQL(ctx context.Context) (*rawOps, error) {
	prep := func(dst **sql.Stmt, query string) error {
		st, err := s.db.PrepareContext(ctx, s.q(query))
		if err != nil {
			return fmt.Errorf("prepare %q: %w", query, err)
		}
		*dst = st
		s.cleanup = append(s.cleanup, func() { _ = st.Close() })
		return nil
	}
	var getSU, getUA, updS, extS, selS, insT, useT, insS, delU, listS *sql.Stmt
	// The extension's condition, as the adapter writes it: the stored
	// expiry before the one read plus a millisecond (SQLite stores text:
	// compared as julianday).
	before := `"expires" < ?`
	if s.dialect == "sqlite" {
		before = `julianday("expires") < julianday(?)`
	}
	steps := []error{
		prep(&getSU, `SELECT s."sessionToken", s."userId", s."expires", u."id", u."email", u."emailVerified", u."name", u."image" FROM "sessions" s JOIN "users" u ON u."id" = s."userId" WHERE s."sessionToken" = ?`),
		prep(&getUA, `SELECT u."id", u."email", u."emailVerified", u."name", u."image" FROM "users" u JOIN "accounts" a ON a."userId" = u."id" WHERE a."provider" = ? AND a."providerAccountId" = ?`),
		prep(&insT, `INSERT INTO "verification_token" ("identifier", "token", "expires") VALUES (?, ?, ?)`),
		prep(&useT, `DELETE FROM "verification_token" WHERE "identifier" = ? AND "token" = ? RETURNING "identifier", "token", "expires"`),
		prep(&insS, `INSERT INTO "sessions" ("sessionToken", "userId", "expires") VALUES (?, ?, ?)`),
		prep(&delU, `DELETE FROM "users" WHERE "id" = ? RETURNING "id", "email", "emailVerified", "name", "image"`),
		prep(&listS, `SELECT "sessionToken", "userId", "expires", "createdAt", "updatedAt", "ipAddress", "userAgent" FROM "sessions" WHERE "userId" = ? AND "expires" > ? ORDER BY "sessionToken"`),
	}
	update, extend := `UPDATE "sessions" SET "expires" = ? WHERE "sessionToken" = ?`, `UPDATE "sessions" SET "expires" = ?, "updatedAt" = ? WHERE "sessionToken" = ? AND `+before
	if s.dialect == "mysql" {
		steps = append(steps, prep(&selS, `SELECT "sessionToken", "userId", "expires" FROM "sessions" WHERE "sessionToken" = ?`))
	} else {
		const returning = ` RETURNING "sessionToken", "userId", "expires"`
		update, extend = update+returning, extend+returning
	}
	steps = append(steps, prep(&updS, update), prep(&extS, extend))
	if err := errors.Join(steps...); err != nil {
		return nil, err
	}
	type userCols struct {
		id, email  string
		verified   sql.Null[flexTime]
		name, imag sql.NullString
	}
	// read is getSessionAndUser: the session's expiry, checked with its
	// user.
	read := func(ctx context.Context, token, want string) (time.Time, error) {
		var tok, uid string
		var exp flexTime
		var u userCols
		if err := getSU.QueryRowContext(ctx, token).Scan(&tok, &uid, &exp, &u.id, &u.email, &u.verified, &u.name, &u.imag); err != nil {
			return time.Time{}, err
		}
		if u.id != want || !exp.t.After(time.Now()) {
			return time.Time{}, fmt.Errorf("session %s: user %s, expires %v", token, u.id, exp.t)
		}
		return exp.t, nil
	}
	// write runs st, an UPDATE of the session with the token (args: its
	// arguments), and reads the session back: by RETURNING, or on MariaDB
	// by a SELECT in the UPDATE's transaction. It reports whether the
	// UPDATE changed a row; on PostgreSQL and SQLite, a session it did not
	// change is sql.ErrNoRows.
	write := func(ctx context.Context, st *sql.Stmt, token string, args ...any) (bool, error) {
		var tok, uid string
		var exp flexTime
		if s.dialect != "mysql" {
			err := st.QueryRowContext(ctx, args...).Scan(&tok, &uid, &exp)
			return err == nil, err
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return false, err
		}
		defer func() { _ = tx.Rollback() }()
		res, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, err
		}
		if err := tx.StmtContext(ctx, selS).QueryRowContext(ctx, token).Scan(&tok, &uid, &exp); err != nil {
			return false, err
		}
		return n == 1, tx.Commit()
	}
	return &rawOps{
		getSessionAndUser: func(ctx context.Context, token, want string) error {
			_, err := read(ctx, token, want)
			return err
		},
		getUserByAccount: func(ctx context.Context, acct, want string) error {
			var u userCols
			if err := getUA.QueryRowContext(ctx, provider, acct).Scan(&u.id, &u.email, &u.verified, &u.name, &u.imag); err != nil {
				return err
			}
			if u.id != want {
				return fmt.Errorf("account %s: user %s, want %s", acct, u.id, want)
			}
			return nil
		},
		updateSession: func(ctx context.Context, token string, expires time.Time) error {
			_, err := write(ctx, updS, token, s.timeArg(expires), token)
			return err
		},
		createAndUseToken: func(ctx context.Context, identifier, token string, expires time.Time) error {
			if _, err := insT.ExecContext(ctx, identifier, token, s.timeArg(expires)); err != nil {
				return err
			}
			var id, tok string
			var exp flexTime
			if err := useT.QueryRowContext(ctx, identifier, token).Scan(&id, &tok, &exp); err != nil {
				return err
			}
			if id != identifier || !exp.t.After(time.Now()) {
				return fmt.Errorf("token %s: got %s, expires %v", identifier, id, exp.t)
			}
			return nil
		},
		createSession: func(ctx context.Context, token, user string, expires time.Time) error {
			_, err := insS.ExecContext(ctx, token, user, s.timeArg(expires))
			return err
		},
		deleteUser: func(ctx context.Context, id string) error {
			var u userCols
			if err := delU.QueryRowContext(ctx, id).Scan(&u.id, &u.email, &u.verified, &u.name, &u.imag); err != nil {
				return err
			}
			if u.id != id {
				return fmt.Errorf("deleted %s, want %s", u.id, id)
			}
			return nil
		},
		listSessions: func(ctx context.Context, user string, want []string) error {
			rows, err := listS.QueryContext(ctx, user, s.timeArg(time.Now()))
			if err != nil {
				return err
			}
			defer rows.Close()
			got := make([]string, 0, len(want))
			for rows.Next() {
				var tok, uid string
				var exp flexTime
				var created, updated sql.Null[flexTime]
				var ip, ua sql.NullString
				if err := rows.Scan(&tok, &uid, &exp, &created, &updated, &ip, &ua); err != nil {
					return err
				}
				got = append(got, tok)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			return checkTokens(user, want, len(got), func(j int) string { return got[j] })
		},
		refresh: func(ctx context.Context, token, want string) error {
			exp, err := read(ctx, token, want)
			if err != nil {
				return err
			}
			from := core.NormalizeTime(exp)
			next := nextExpiry(from)
			wrote, err := write(ctx, extS, token, s.timeArg(next), s.timeArg(time.Now()), token, s.timeArg(from.Add(core.TimePrecision)))
			if err == nil && !wrote {
				err = fmt.Errorf("session %s: not extended from %v", token, from)
			}
			return err
		},
	}, nil
}

// schema makes a schema named from prefix on admin's server, dropped at
// close, and returns the connection configuration of the PostgreSQL URL
// base with it as the search_path, and its name.
func (s *sqlStore) schema(ctx context.Context, admin *sql.DB, base, prefix string) (*pgx.ConnConfig, string, error) {
	schema, drop, err := provision.CreateSchema(ctx, admin, prefix)
	if err != nil {
		return nil, "", err
	}
	s.cleanup = append(s.cleanup, func() { _ = drop(context.Background()) })
	dsn, err := provision.InSchema(base, schema)
	if err != nil {
		return nil, "", err
	}
	cfg, err := pgx.ParseConfig(dsn)
	return cfg, schema, err
}
