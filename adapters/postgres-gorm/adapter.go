package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/authport/authport/core"
	"gorm.io/gorm"
)

// Adapter stores authport records in a SQL database through a *gorm.DB. It
// implements every method of the adapter contract ([core.Adapter]) and
// [core.ExpiredPurger]. It is safe for concurrent use, [Adapter.Close]
// included.
type Adapter struct {
	db    *sql.DB
	d     dialect
	names Names
	// q holds the statements; they are rebuilt when the users table's
	// application columns change (refreshUserColumns, under rebuild),
	// and the statements replaced are kept in retired for Close.
	q          atomic.Pointer[queries]
	rebuild    sync.Mutex
	retired    []*queries
	now        func() time.Time
	translator gorm.ErrorTranslator
	// stamps are the timestamp columns per table (WithTimestampColumns),
	// but for those of sessions that are its metadata columns (see
	// mergeSessionStamps).
	stamps [numTables]stampCols
	// meta is the configured session metadata columns; the statements'
	// (queries.meta) leave out those missing from an existing table.
	meta sessionMeta
	// noFK: the schema has no foreign keys; the adapter checks the user
	// and cascades deleteUser itself (WithoutForeignKeys).
	noFK bool
	// serialIDs: user ids come from the users.id column's sequence
	// (WithSerialUserIDs), see NewUserID.
	serialIDs bool
	// purgeBatch overrides the number of rows per statement of
	// PurgeExpired (purgeBatch when 0), and afterPurgeBatch, when set, is
	// called after each of its statements with the rows it deleted: both
	// for tests.
	purgeBatch      int
	afterPurgeBatch func(deleted int)
	// reader reads getSessionAndUser's row when set (WithRowReader).
	reader RowReader

	// life is held shared by every call in progress and exclusively by
	// Close, which sets closed.
	life   sync.RWMutex
	closed bool
}

// ErrClosed is returned (wrapped with the method name) by every method of
// an [Adapter] called after [Adapter.Close]. It also matches net.ErrClosed.
var ErrClosed = fmt.Errorf("gormadapter: adapter is closed: %w", net.ErrClosed)

// enter starts a call: it fails with ErrClosed once Close has been called,
// and otherwise keeps Close from releasing the statements until the call
// ends with leave. Only the exported methods call it, once each, and never
// call one another: a nested read lock would deadlock with a waiting
// Close.
func (a *Adapter) enter() error {
	a.life.RLock()
	if a.closed {
		a.life.RUnlock()
		return ErrClosed
	}
	return nil
}

func (a *Adapter) leave() { a.life.RUnlock() }

// guard runs f, a method's body, between enter (a.enter, or
// a.enterAuthenticators for the authenticator methods) and leave.
func guard[T any](a *Adapter, enter func() error, f func() (T, error)) (T, error) {
	if err := enter(); err != nil {
		var zero T
		return zero, err
	}
	defer a.leave()
	return f()
}

// created runs insert, the body of a method that creates rec, between
// enter and leave, and returns rec as insert left it (as stored).
func created[T any](a *Adapter, enter func() error, rec T, insert func(*T) error) (*T, error) {
	return guard(a, enter, func() (*T, error) {
		if err := insert(&rec); err != nil {
			return nil, err
		}
		return &rec, nil
	})
}

var (
	_ core.Adapter                      = (*Adapter)(nil)
	_ core.ExpiredPurger                = (*Adapter)(nil)
	_ core.AuthenticatorCounterAdvancer = (*Adapter)(nil)
	_ core.AccountsByUserLister         = (*Adapter)(nil)
	_ core.AccountUpdater               = (*Adapter)(nil)
	_ core.MethodOmitter                = (*Adapter)(nil)
	_ core.SessionExtender              = (*Adapter)(nil)
	_ core.SessionsByUserLister         = (*Adapter)(nil)
	_ core.SessionsByUserDeleter        = (*Adapter)(nil)
	_ core.SessionMetadataKeeper        = (*Adapter)(nil)
	_ core.UserByUsernameGetter         = (*Adapter)(nil)
	_ core.PasswordHashSwapper          = (*Adapter)(nil)
)

// New returns an adapter that reads and writes through db's connection pool.
// The dialect is db's: "postgres" (gorm.io/driver/postgres), "mysql"
// (gorm.io/driver/mysql, MySQL or MariaDB) or "sqlite" (gorm.io/driver/sqlite
// or another gorm SQLite dialector).
//
// New asks the server, once, within ctx, for what it supports (its version,
// and for SQLite whether foreign keys are enforced), and reads the columns
// of the users table (its application fields, see [core.User.Data]). On MySQL and MariaDB it also reads the collation of the
// existing key columns (session and verification tokens, identifier,
// e-mail, provider and provider account id, credential id) and fails when
// one does not compare exactly, naming the column and the ALTER TABLE that
// fixes it, unless [WithCaseInsensitiveCollation] is given. SQLite must enforce foreign keys on every connection or
// deleteUser would not cascade: open it with "_foreign_keys=on" in the DSN
// (go-sqlite3) or "_pragma=foreign_keys(1)" (modernc), or New fails.
//
// New creates no tables; call [Adapter.Migrate] or apply the shipped DDL.
func New(ctx context.Context, db *gorm.DB, opts ...Option) (*Adapter, error) {
	if ctx == nil {
		return nil, errors.New("gormadapter: nil context")
	}
	if db == nil || db.Dialector == nil {
		return nil, errors.New("gormadapter: nil *gorm.DB")
	}
	c := config{now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.stampErr != nil {
		return nil, fmt.Errorf("gormadapter: %w", c.stampErr)
	}
	names, stamps, stamped, err := mergeSessionStamps(c.names, c.stamps)
	if err != nil {
		return nil, fmt.Errorf("gormadapter: %w", err)
	}
	names = names.withDefaults()
	if err := names.validate(); err != nil {
		return nil, fmt.Errorf("gormadapter: %w", err)
	}
	if err := names.validateStamps(stamps); err != nil {
		return nil, fmt.Errorf("gormadapter: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("gormadapter: no *sql.DB behind the *gorm.DB: %w", err)
	}
	a := &Adapter{db: sqlDB, names: names, now: c.now, stamps: stamps, noFK: c.noFK, serialIDs: c.serialIDs,
		meta: sessionMeta{cols: names.Session.metadata(), stamped: stamped}}
	a.d.name = db.Dialector.Name()
	a.d.sqliteTimes = c.sqliteTimes
	a.d.shape = c.shape
	if c.serialIDs && a.d.name != "postgres" {
		return nil, fmt.Errorf("gormadapter: WithSerialUserIDs needs PostgreSQL (a SERIAL users.id), not %s", a.d.name)
	}
	if t, ok := db.Dialector.(gorm.ErrorTranslator); ok {
		a.translator = t
	}
	switch a.d.name {
	case "postgres":
		a.d.deleteReturning, a.d.updateReturning = true, true
		if err := sqlDB.QueryRowContext(ctx, "SHOW server_version").Scan(&a.d.version); err != nil {
			return nil, fmt.Errorf("gormadapter: reading the server version: %w", err)
		}
	case "mysql":
		a.d.prepare = true
		if err := sqlDB.QueryRowContext(ctx, "SELECT VERSION()").Scan(&a.d.version); err != nil {
			return nil, fmt.Errorf("gormadapter: reading the server version: %w", err)
		}
		a.d.mariadb = strings.Contains(strings.ToLower(a.d.version), "mariadb")
		// MariaDB has DELETE … RETURNING since 10.5; MySQL has none, and
		// neither has UPDATE … RETURNING.
		a.d.deleteReturning = a.d.mariadb && versionAtLeast(a.d.version, 10, 5)
		if !c.allowCICollation {
			if err := a.checkCollations(ctx); err != nil {
				return nil, fmt.Errorf("gormadapter: %w", err)
			}
		}
	case "sqlite":
		a.d.prepare = true
		if err := sqlDB.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&a.d.version); err != nil {
			return nil, fmt.Errorf("gormadapter: reading the SQLite version: %w", err)
		}
		ret := versionAtLeast(a.d.version, 3, 35)
		a.d.deleteReturning, a.d.updateReturning = ret, ret
		var fk int
		if err := sqlDB.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			return nil, fmt.Errorf("gormadapter: reading PRAGMA foreign_keys: %w", err)
		}
		if fk != 1 && !c.noFK {
			return nil, errors.New(`gormadapter: SQLite does not enforce foreign keys, so deleteUser would not cascade; ` +
				`open the database with "_foreign_keys=on" in the DSN (or "_pragma=foreign_keys(1)"), or use WithoutForeignKeys`)
		}
	default:
		return nil, fmt.Errorf("gormadapter: unsupported gorm dialect %q (want postgres, mysql or sqlite)", a.d.name)
	}
	if c.noReturning {
		a.d.deleteReturning, a.d.updateReturning = false, false
	}
	if c.reader != nil {
		if err := a.checkRowReader(ctx, c.reader); err != nil {
			return nil, fmt.Errorf("gormadapter: %w", err)
		}
		a.reader = c.reader
	}
	a.q.Store(buildQueries(&a.d, names, stamps, c.noFK, nil, a.meta))
	if _, err := a.refreshUserColumns(ctx); err != nil {
		return nil, fmt.Errorf("gormadapter: %w", err)
	}
	return a, nil
}

// qs returns the statements in use.
func (a *Adapter) qs() *queries { return a.q.Load() }

// Dialect returns the dialect name: "postgres", "mysql" or "sqlite".
func (a *Adapter) Dialect() string { return a.d.name }

// Names returns the table and column names in use, defaults filled in.
func (a *Adapter) Names() Names { return a.names }

// Close releases the statements the adapter prepared. It does not close
// the *gorm.DB, which stays the caller's. Close waits for the calls in
// progress to return; every call made after it (and Close again) finds
// the adapter closed: methods return an error matching [ErrClosed] (and
// net.ErrClosed), and nothing is prepared any more.
func (a *Adapter) Close() error {
	a.life.Lock()
	defer a.life.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var errs []error
	a.rebuild.Lock()
	defer a.rebuild.Unlock()
	for _, q := range append(a.retired, a.qs()) {
		for _, s := range q.all() {
			if s == nil {
				continue
			}
			if p := s.prepared.Swap(nil); p != nil {
				errs = append(errs, p.Close())
			}
		}
	}
	return errors.Join(errs...)
}
