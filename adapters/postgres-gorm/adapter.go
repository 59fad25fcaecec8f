package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/core"
	"gorm.io/gorm"
)

// Adapter stores authport records in a SQL database through a *gorm.DB. It
// implements every method of the adapter contract ([core.Adapter]) and
// [core.ExpiredPurger]. It is safe for concurrent use, [Adapter.Close]
// included.
type Adapter struct {
	db         *sql.DB
	d          dialect
	names      Names
	q          *queries
	now        func() time.Time
	translator gorm.ErrorTranslator
	// stamps are the timestamp columns per table (WithTimestampColumns).
	stamps [numTables]stampCols
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
func (a *Adapter) enter(m string) error {
	a.life.RLock()
	if a.closed {
		a.life.RUnlock()
		return fmt.Errorf("%s: %w", m, ErrClosed)
	}
	return nil
}

func (a *Adapter) leave() { a.life.RUnlock() }

var (
	_ core.Adapter                      = (*Adapter)(nil)
	_ core.ExpiredPurger                = (*Adapter)(nil)
	_ core.AuthenticatorCounterAdvancer = (*Adapter)(nil)
)

// Option configures an [Adapter].
type Option func(*config)

type config struct {
	names  Names
	now    func() time.Time
	stamps [numTables]stampCols
	// stampErr is the first invalid WithTimestampColumns call.
	stampErr error
	noFK     bool
	// noReturning makes the adapter behave as on a server without
	// RETURNING (MySQL, MariaDB < 10.5, SQLite < 3.35); tests use it to
	// run the transactional paths on the servers at hand.
	noReturning bool
	// sqliteTimes and serialIDs: WithSQLiteTimes, WithSerialUserIDs.
	sqliteTimes SQLiteTimeFormat
	serialIDs   bool
	// allowCICollation: WithCaseInsensitiveCollation.
	allowCICollation bool
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

// Table names one of the adapter's five tables, for the options that apply
// to one table.
type Table int

// The tables, as [Table] values.
const (
	TableUsers Table = iota + 1
	TableAccounts
	TableSessions
	TableVerificationTokens
	TableAuthenticators

	numTables = int(TableAuthenticators) + 1
)

// String returns the table's default name ("users", "verification_token", …),
// the name it has unless a table-name option or a preset renames it.
func (t Table) String() string {
	switch t {
	case TableUsers:
		return "users"
	case TableAccounts:
		return "accounts"
	case TableSessions:
		return "sessions"
	case TableVerificationTokens:
		return "verification_token"
	case TableAuthenticators:
		return "authenticators"
	}
	return fmt.Sprintf("Table(%d)", int(t))
}

// stampCols are one table's timestamp columns; "" is none.
type stampCols struct{ created, updated string }

// WithTimestampColumns names the columns in which table t records when a
// row was created and when it was last updated, for schemas whose columns
// are NOT NULL without a default, such as Prisma's
// "updatedAt DateTime @updatedAt" (TIMESTAMP(3) NOT NULL: Prisma's client,
// not the database, fills it in). The adapter writes the adapter's clock
// ([WithClock]) in UTC, to the millisecond, into created (if not "") on
// insert and into updated (if not "") on insert and on every update
// (updateUser, updateSession, updateAuthenticatorCounter). Leave created
// empty to let a database default fill it. [Adapter.Migrate] creates the
// columns (NOT NULL timestamps) in the tables it creates. Call it once per
// table that has such columns.
func WithTimestampColumns(t Table, created, updated string) Option {
	return func(c *config) {
		if t < TableUsers || t > TableAuthenticators {
			if c.stampErr == nil {
				c.stampErr = fmt.Errorf("WithTimestampColumns: unknown table %v", t)
			}
			return
		}
		c.stamps[t] = stampCols{created, updated}
	}
}

// WithoutForeignKeys tells the adapter that the schema has no foreign keys
// from accounts, sessions and authenticators to users, as in the schema of
// Auth.js's pg adapter (@auth/pg-adapter). The adapter then does itself
// what the ON DELETE CASCADE foreign keys would do: deleteUser deletes the
// user, its sessions, accounts and authenticators in one transaction, and
// linkAccount, createSession, createAuthenticator and an updateSession
// that moves a session to another user check, in the transaction of their
// INSERT or UPDATE and with the user's row locked against a concurrent
// deleteUser, that the user exists ([core.ErrNotFound] if not).
// [Adapter.Migrate] then creates no foreign keys, and SQLite is accepted
// without PRAGMA foreign_keys.
func WithoutForeignKeys() Option {
	return func(c *config) { c.noFK = true }
}

// New returns an adapter that reads and writes through db's connection pool.
// The dialect is db's: "postgres" (gorm.io/driver/postgres), "mysql"
// (gorm.io/driver/mysql, MySQL or MariaDB) or "sqlite" (gorm.io/driver/sqlite
// or another gorm SQLite dialector).
//
// New asks the server, once, for what it supports (its version, and for
// SQLite whether foreign keys are enforced), using db's context (set it with
// db.WithContext). On MySQL and MariaDB it also reads the collation of the
// existing key columns (session and verification tokens, identifier,
// e-mail, provider and provider account id, credential id) and fails when
// one does not compare exactly, naming the column and the ALTER TABLE that
// fixes it, unless [WithCaseInsensitiveCollation] is given. SQLite must enforce foreign keys on every connection or
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
	if c.stampErr != nil {
		return nil, fmt.Errorf("gormadapter.New: %w", c.stampErr)
	}
	names := c.names.withDefaults()
	if err := names.validate(); err != nil {
		return nil, fmt.Errorf("gormadapter.New: %w", err)
	}
	if err := names.validateStamps(c.stamps); err != nil {
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
	a := &Adapter{db: sqlDB, names: names, now: c.now, stamps: c.stamps, noFK: c.noFK, serialIDs: c.serialIDs}
	a.d.name = db.Dialector.Name()
	a.d.sqliteTimes = c.sqliteTimes
	if c.serialIDs && a.d.name != "postgres" {
		return nil, fmt.Errorf("gormadapter.New: WithSerialUserIDs needs PostgreSQL (a SERIAL users.id), not %s", a.d.name)
	}
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
		if !c.allowCICollation {
			if err := a.checkCollations(ctx); err != nil {
				return nil, fmt.Errorf("gormadapter.New: %w", err)
			}
		}
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
		if fk != 1 && !c.noFK {
			return nil, errors.New(`gormadapter.New: SQLite does not enforce foreign keys, so deleteUser would not cascade; ` +
				`open the database with "_foreign_keys=on" in the DSN (or "_pragma=foreign_keys(1)"), or use WithoutForeignKeys`)
		}
	default:
		return nil, fmt.Errorf("gormadapter.New: unsupported gorm dialect %q (want postgres, mysql or sqlite)", a.d.name)
	}
	if c.noReturning {
		a.d.deleteReturning, a.d.updateReturning = false, false
	}
	a.q = buildQueries(&a.d, names, c.stamps, c.noFK)
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
// when the dialect does not prepare, preparing failed or ctx ended while
// waiting for another caller's prepare (the query then runs unprepared and
// reports any error itself, ctx's included).
//
// No lock is held while the server prepares: one caller prepares, with its
// own context, and the others wait for it or for their own context to end,
// whichever comes first. If that prepare fails, the next caller tries.
func (a *Adapter) stmt(ctx context.Context, s *statement) *sql.Stmt {
	if !a.d.prepare {
		return nil
	}
	for {
		if p := s.prepared.Load(); p != nil {
			return p
		}
		s.mu.Lock()
		if p := s.prepared.Load(); p != nil {
			s.mu.Unlock()
			return p
		}
		if wait := s.preparing; wait != nil {
			s.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		done := make(chan struct{})
		s.preparing = done
		s.mu.Unlock()

		p, err := a.db.PrepareContext(ctx, s.sql)

		s.mu.Lock()
		if err == nil {
			s.prepared.Store(p)
		}
		s.preparing = nil
		close(done)
		s.mu.Unlock()
		if err != nil {
			return nil
		}
		return p
	}
}

// txStmt returns the prepared form of s for use in tx, or nil. It never
// prepares: preparing goes through the pool, and waiting for a second
// connection while tx holds one deadlocks a pool whose connections are all
// held by transactions (SQLite with SetMaxOpenConns(1), say). inTx
// prepares the transaction's statements before it begins; tx.StmtContext
// then re-prepares on tx's own connection where needed.
func (a *Adapter) txStmt(ctx context.Context, tx *sql.Tx, s *statement) *sql.Stmt {
	if !a.d.prepare {
		return nil
	}
	if p := s.prepared.Load(); p != nil {
		return tx.StmtContext(ctx, p)
	}
	return nil
}

func (a *Adapter) queryRow(ctx context.Context, tx *sql.Tx, s *statement, args ...any) *sql.Row {
	if tx != nil {
		if p := a.txStmt(ctx, tx, s); p != nil {
			return p.QueryRowContext(ctx, args...)
		}
		return tx.QueryRowContext(ctx, s.sql, args...)
	}
	if p := a.stmt(ctx, s); p != nil {
		return p.QueryRowContext(ctx, args...)
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
	if tx != nil {
		if p := a.txStmt(ctx, tx, s); p != nil {
			return p.ExecContext(ctx, args...)
		}
		return tx.ExecContext(ctx, s.sql, args...)
	}
	if p := a.stmt(ctx, s); p != nil {
		return p.ExecContext(ctx, args...)
	}
	return a.db.ExecContext(ctx, s.sql, args...)
}

// stampArgs returns the values of table t's timestamp columns
// (WithTimestampColumns), the adapter's clock now: created and updated for
// an INSERT, updated for an UPDATE; nil when t has none.
func (a *Adapter) stampArgs(t Table, insert bool) []any {
	s := a.stamps[t]
	if s.updated == "" && (!insert || s.created == "") {
		return nil
	}
	now := a.d.timeArg(core.NormalizeTime(a.now()))
	out := make([]any, 0, 2)
	if insert && s.created != "" {
		out = append(out, now)
	}
	if s.updated != "" {
		out = append(out, now)
	}
	return out
}

// errNoUser is requireUser's report of a missing user.
var errNoUser = errors.New("no such user")

// requireUser checks, in tx, that the user exists, and locks its row
// against a concurrent deleteUser until tx ends (WithoutForeignKeys). An id
// the users.id column cannot hold (see keyUnusable) is reported as the
// database's error, core.ErrInvalidInput once wrapped, as the INSERT would
// report it with foreign keys.
func (a *Adapter) requireUser(ctx context.Context, tx *sql.Tx, userID string) error {
	var one int
	err := a.queryRow(ctx, tx, a.q.lockUser, userID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return errNoUser
	}
	return err
}

// insertForUser runs the INSERT s of a record belonging to userID: alone
// where a foreign key checks the user, else in one transaction after
// requireUser. It returns the method's error.
func (a *Adapter) insertForUser(ctx context.Context, m, userID string, s *statement, args ...any) error {
	if !a.noFK {
		_, err := a.exec(ctx, nil, s, args...)
		return a.wrap(m, err)
	}
	err := a.inTx(ctx, []*statement{a.q.lockUser, s}, func(tx *sql.Tx) error {
		if err := a.requireUser(ctx, tx, userID); err != nil {
			return err
		}
		_, err := a.exec(ctx, tx, s, args...)
		return err
	})
	if errors.Is(err, errNoUser) {
		return fmt.Errorf("%s: user %q: %w", m, userID, core.ErrNotFound)
	}
	return a.wrap(m, err)
}

// inTx runs fn in a transaction, committing when it returns nil. uses are
// the statements fn may run: they are prepared (where the dialect
// prepares) before the transaction takes its connection (see txStmt).
func (a *Adapter) inTx(ctx context.Context, uses []*statement, fn func(tx *sql.Tx) error) error {
	for _, s := range uses {
		if s != nil {
			a.stmt(ctx, s)
		}
	}
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if a.d.mysql() {
		return commitMySQL(ctx, tx)
	}
	return tx.Commit()
}

// commitMySQL commits tx within ctx. database/sql's Tx.Commit takes no
// context, and go-sql-driver/mysql watches a context only during the calls
// that take one, so a COMMIT the server does not answer would hold the
// caller for as long as the server stalls, whatever its deadline. The
// COMMIT is therefore sent as a statement with ctx: when ctx ends first,
// the driver closes the connection and the call returns ctx's error at
// once. The transaction then either committed or not (the server may have
// committed before the connection closed), as with any reply lost, and the
// error says so.
//
// After a COMMIT that succeeded, the server has no open transaction, and
// tx is ended with a Rollback (a no-op on the server; database/sql needs it
// to release the connection): one more round trip. It is waited for while
// ctx lasts, so that ctx's end does not make database/sql discard the
// connection; should the server stall then, the call returns at ctx's end,
// nil (the commit is done), and the Rollback finishes in the background.
func commitMySQL(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, "COMMIT"); err != nil {
		_ = tx.Rollback()
		if ctx.Err() != nil {
			return fmt.Errorf("commit cut short, the transaction may or may not have been committed: %w", err)
		}
		return err
	}
	ended := make(chan struct{})
	go func() {
		_ = tx.Rollback()
		close(ended)
	}()
	select {
	case <-ended:
	case <-ctx.Done():
	}
	return nil
}

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
	for _, s := range a.q.all() {
		if s == nil {
			continue
		}
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
		q.lockUser, q.deleteUserSessions, q.deleteUserAccounts, q.deleteUserAuthenticators,
	}
}
