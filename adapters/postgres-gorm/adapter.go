package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/core"
	"gorm.io/gorm"
)

// Adapter stores authport records in a SQL database through a *gorm.DB. It
// implements every method of the adapter contract ([core.Adapter]) and
// [core.ExpiredPurger]. It is safe for concurrent use.
type Adapter struct {
	db         *sql.DB
	d          dialect
	names      Names
	q          *queries
	now        func() time.Time
	translator gorm.ErrorTranslator
}

var (
	_ core.Adapter       = (*Adapter)(nil)
	_ core.ExpiredPurger = (*Adapter)(nil)
)

// Option configures an [Adapter].
type Option func(*config)

type config struct {
	names Names
	now   func() time.Time
	// noReturning makes the adapter behave as on a server without
	// RETURNING (MySQL, MariaDB < 10.5, SQLite < 3.35); tests use it to
	// run the transactional paths on the servers at hand.
	noReturning bool
}

// withoutReturning is the unexported option behind config.noReturning.
func withoutReturning() Option {
	return func(c *config) { c.noReturning = true }
}

// WithNames sets the table and column names (see [Names]); names left empty
// keep their defaults.
func WithNames(n Names) Option {
	return func(c *config) { c.names = n }
}

// WithClock sets the clock the adapter compares expiry times with (default
// time.Now). Tests use it to move time.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// New returns an adapter that reads and writes through db's connection pool.
// The dialect is db's: "postgres" (gorm.io/driver/postgres), "mysql"
// (gorm.io/driver/mysql, MySQL or MariaDB) or "sqlite" (gorm.io/driver/sqlite
// or another gorm SQLite dialector).
//
// New asks the server, once, for what it supports (its version, and for
// SQLite whether foreign keys are enforced), using db's context (set it with
// db.WithContext). SQLite must enforce foreign keys on every connection or
// deleteUser would not cascade: open it with "_foreign_keys=on" in the DSN
// (go-sqlite3) or "_pragma=foreign_keys(1)" (modernc), or New fails.
//
// New creates no tables; call [Adapter.Migrate] or apply the shipped DDL.
func New(db *gorm.DB, opts ...Option) (*Adapter, error) {
	if db == nil || db.Dialector == nil {
		return nil, errors.New("gormadapter.New: nil *gorm.DB")
	}
	c := config{now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	names := c.names.withDefaults()
	if err := names.validate(); err != nil {
		return nil, fmt.Errorf("gormadapter.New: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("gormadapter.New: no *sql.DB behind the *gorm.DB: %w", err)
	}
	ctx := context.Background()
	if db.Statement != nil && db.Statement.Context != nil {
		ctx = db.Statement.Context
	}
	a := &Adapter{db: sqlDB, names: names, now: c.now}
	a.d.name = db.Dialector.Name()
	if t, ok := db.Dialector.(gorm.ErrorTranslator); ok {
		a.translator = t
	}
	switch a.d.name {
	case "postgres":
		a.d.deleteReturning, a.d.updateReturning = true, true
		if err := sqlDB.QueryRowContext(ctx, "SHOW server_version").Scan(&a.d.version); err != nil {
			return nil, fmt.Errorf("gormadapter.New: reading the server version: %w", err)
		}
	case "mysql":
		a.d.prepare = true
		if err := sqlDB.QueryRowContext(ctx, "SELECT VERSION()").Scan(&a.d.version); err != nil {
			return nil, fmt.Errorf("gormadapter.New: reading the server version: %w", err)
		}
		a.d.mariadb = strings.Contains(strings.ToLower(a.d.version), "mariadb")
		// MariaDB has DELETE … RETURNING since 10.5; MySQL has none, and
		// neither has UPDATE … RETURNING.
		a.d.deleteReturning = a.d.mariadb && versionAtLeast(a.d.version, 10, 5)
	case "sqlite":
		a.d.prepare = true
		if err := sqlDB.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&a.d.version); err != nil {
			return nil, fmt.Errorf("gormadapter.New: reading the SQLite version: %w", err)
		}
		ret := versionAtLeast(a.d.version, 3, 35)
		a.d.deleteReturning, a.d.updateReturning = ret, ret
		var fk int
		if err := sqlDB.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			return nil, fmt.Errorf("gormadapter.New: reading PRAGMA foreign_keys: %w", err)
		}
		if fk != 1 {
			return nil, errors.New(`gormadapter.New: SQLite does not enforce foreign keys, so deleteUser would not cascade; ` +
				`open the database with "_foreign_keys=on" in the DSN (or "_pragma=foreign_keys(1)")`)
		}
	default:
		return nil, fmt.Errorf("gormadapter.New: unsupported gorm dialect %q (want postgres, mysql or sqlite)", a.d.name)
	}
	if c.noReturning {
		a.d.deleteReturning, a.d.updateReturning = false, false
	}
	a.q = buildQueries(&a.d, names)
	return a, nil
}

// Dialect returns the dialect name: "postgres", "mysql" or "sqlite".
func (a *Adapter) Dialect() string { return a.d.name }

// Names returns the table and column names in use, defaults filled in.
func (a *Adapter) Names() Names { return a.names }

func validUTF8(s string) bool { return utf8.ValidString(s) }

// querier is *sql.DB or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// stmt returns the prepared form of s, preparing it on first use, or nil
// when the dialect does not prepare or preparing failed (the query then
// runs unprepared and reports any error itself).
func (a *Adapter) stmt(ctx context.Context, s *statement) *sql.Stmt {
	if !a.d.prepare {
		return nil
	}
	if p := s.prepared.Load(); p != nil {
		return p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.prepared.Load(); p != nil {
		return p
	}
	p, err := a.db.PrepareContext(ctx, s.sql)
	if err != nil {
		return nil
	}
	s.prepared.Store(p)
	return p
}

func (a *Adapter) queryRow(ctx context.Context, tx *sql.Tx, s *statement, args ...any) *sql.Row {
	if p := a.stmt(ctx, s); p != nil {
		if tx != nil {
			p = tx.StmtContext(ctx, p)
		}
		return p.QueryRowContext(ctx, args...)
	}
	if tx != nil {
		return tx.QueryRowContext(ctx, s.sql, args...)
	}
	return a.db.QueryRowContext(ctx, s.sql, args...)
}

func (a *Adapter) query(ctx context.Context, s *statement, args ...any) (*sql.Rows, error) {
	if p := a.stmt(ctx, s); p != nil {
		return p.QueryContext(ctx, args...)
	}
	return a.db.QueryContext(ctx, s.sql, args...)
}

func (a *Adapter) exec(ctx context.Context, tx *sql.Tx, s *statement, args ...any) (sql.Result, error) {
	if p := a.stmt(ctx, s); p != nil {
		if tx != nil {
			p = tx.StmtContext(ctx, p)
		}
		return p.ExecContext(ctx, args...)
	}
	if tx != nil {
		return tx.ExecContext(ctx, s.sql, args...)
	}
	return a.db.ExecContext(ctx, s.sql, args...)
}

// inTx runs fn in a transaction, committing when it returns nil.
func (a *Adapter) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Close releases the statements the adapter prepared. It does not close
// the *gorm.DB, which stays the caller's.
func (a *Adapter) Close() error {
	var errs []error
	for _, s := range a.q.all() {
		if p := s.prepared.Swap(nil); p != nil {
			errs = append(errs, p.Close())
		}
	}
	return errors.Join(errs...)
}

func (q *queries) all() []*statement {
	return []*statement{
		q.createUser, q.getUser, q.getUserByEmail, q.getUserByAccount,
		q.updateUser, q.selectUserForUpdate, q.deleteUser, q.deleteUserPlain,
		q.linkAccount, q.getAccount, q.unlinkAccount, q.selectAccountForUpdate, q.unlinkAccountPlain,
		q.createSession, q.getSessionAndUser, q.updateSession, q.selectSession,
		q.deleteSession, q.selectSessionForUpdate, q.deleteSessionPlain,
		q.createToken, q.useToken, q.selectTokenForUpdate, q.deleteTokenPlain,
		q.createAuthenticator, q.getAuthenticator, q.listAuthenticators, q.updateCounter,
		q.purgeSessions, q.purgeTokens,
	}
}
