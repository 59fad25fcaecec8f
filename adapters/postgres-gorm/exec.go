package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/authport/authport/core"
)

// Running the statements: preparing them once, in and out of
// transactions, and committing within the caller's context.

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

// conn is what *sql.DB and *sql.Tx have in common.
type conn interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// runner runs one statement: its prepared form p when not nil, else its
// text sql on c. A value, so that choosing costs no allocation.
type runner struct {
	p   *sql.Stmt
	c   conn
	sql string
}

func (r runner) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	if r.p != nil {
		return r.p.QueryRowContext(ctx, args...)
	}
	return r.c.QueryRowContext(ctx, r.sql, args...)
}

func (r runner) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	if r.p != nil {
		return r.p.QueryContext(ctx, args...)
	}
	return r.c.QueryContext(ctx, r.sql, args...)
}

func (r runner) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	if r.p != nil {
		return r.p.ExecContext(ctx, args...)
	}
	return r.c.ExecContext(ctx, r.sql, args...)
}

// on returns what runs s in tx (nil: on the pool): its prepared form
// where there is one (see stmt and txStmt), else its text.
func (a *Adapter) on(ctx context.Context, tx *sql.Tx, s *statement) runner {
	if tx != nil {
		return runner{a.txStmt(ctx, tx, s), tx, s.sql}
	}
	return runner{a.stmt(ctx, s), a.db, s.sql}
}

func (a *Adapter) queryRow(ctx context.Context, tx *sql.Tx, s *statement, args ...any) *sql.Row {
	return a.on(ctx, tx, s).QueryRowContext(ctx, args...)
}

func (a *Adapter) exec(ctx context.Context, tx *sql.Tx, s *statement, args ...any) (sql.Result, error) {
	return a.on(ctx, tx, s).ExecContext(ctx, args...)
}

// affected runs s (in tx when not nil) and returns how many rows it
// changed.
func (a *Adapter) affected(ctx context.Context, tx *sql.Tx, s *statement, args ...any) (int64, error) {
	r, err := a.exec(ctx, tx, s, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// list runs the SELECT s (with args, the key first) of the rows belonging
// to a key, scans each with scan and returns them in the order of cmp
// (Go's byte order, whatever the columns' collation). A key the database
// cannot convert to its column's type (see keyUnusable) belongs to
// nothing: an empty list.
func list[T any](ctx context.Context, a *Adapter, s *statement, args []any, scan func(*sql.Rows) (T, error), cmp func(x, y T) int) ([]T, error) {
	out := []T{}
	rows, err := a.on(ctx, nil, s).QueryContext(ctx, args...)
	if keyUnusable(err) {
		return out, nil
	}
	if err != nil {
		return nil, a.wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, a.wrap(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); keyUnusable(err) {
		return []T{}, nil
	} else if err != nil {
		return nil, a.wrap(err)
	}
	slices.SortFunc(out, cmp)
	return out, nil
}

// stampArgs returns the values of table t's timestamp columns
// (WithTimestampColumns), the adapter's clock now: created and updated for
// an INSERT, updated for an UPDATE; then, for an INSERT, a new row id when
// t has a row id column (see stampCols); nil when t has none of them.
func (a *Adapter) stampArgs(t Table, insert bool) []any {
	s := a.stamps[t]
	if s.updated == "" && (!insert || (s.created == "" && s.id == "")) {
		return nil
	}
	now := a.d.timeArg(core.NormalizeTime(a.now()))
	out := make([]any, 0, 3)
	if insert && s.created != "" {
		out = append(out, now)
	}
	if s.updated != "" {
		out = append(out, now)
	}
	if insert && s.id != "" {
		out = append(out, newRowID())
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
	err := a.queryRow(ctx, tx, a.qs().lockUser, userID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return errNoUser
	}
	return err
}

// insertForUser runs the INSERT s of a record belonging to userID: alone
// where a foreign key checks the user, else in one transaction after
// requireUser. It returns the method's error.
func (a *Adapter) insertForUser(ctx context.Context, userID string, s *statement, args ...any) error {
	if !a.noFK {
		_, err := a.exec(ctx, nil, s, args...)
		return a.wrap(err)
	}
	err := a.inTx(ctx, []*statement{a.qs().lockUser, s}, func(tx *sql.Tx) error {
		if err := a.requireUser(ctx, tx, userID); err != nil {
			return err
		}
		_, err := a.exec(ctx, tx, s, args...)
		return err
	})
	if errors.Is(err, errNoUser) {
		return fmt.Errorf("user %q: %w", userID, core.ErrNotFound)
	}
	return a.wrap(err)
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
