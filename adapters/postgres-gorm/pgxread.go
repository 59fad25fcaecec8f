package gormadapter

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
)

// The read path on pgx. When the *sql.DB behind the *gorm.DB runs pgx's
// database/sql driver (github.com/jackc/pgx/v5/stdlib, what
// gorm.io/driver/postgres opens), getSessionAndUser borrows a connection
// of that pool (database/sql's Conn.Raw) and runs its SELECT with pgx
// itself, scanning into the row's fields. It is the same statement on the
// same connection, prepared once per connection by pgx's statement cache
// as through database/sql; what it leaves out is database/sql's rows and
// the driver's conversion of every column to a driver.Value and back,
// which made most of the read's allocations (see docs/performance.md, "The
// read path against its limit"). The pool stays database/sql's, so its
// settings and its statistics hold.

// pgxConner is pgx's database/sql connection (stdlib.Conn): it gives its
// *pgx.Conn.
type pgxConner interface {
	Conn() *pgx.Conn
}

// runsPgx reports whether db's connections are pgx's (stdlib.Conn), which
// queryRowPgx can use.
func runsPgx(ctx context.Context, db *sql.DB) (bool, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	var ok bool
	err = c.Raw(func(dc any) error {
		_, ok = dc.(pgxConner)
		return nil
	})
	return ok, err
}

// queryRowPgx runs s with args on a connection of the pool through pgx
// and scans its one row into dest, as database/sql's QueryRow would: no
// row is sql.ErrNoRows. The connections must be pgx's (runsPgx).
func (a *Adapter) queryRowPgx(ctx context.Context, s *statement, dest []any, args ...any) error {
	c, err := a.db.Conn(ctx)
	if err != nil {
		return err
	}
	err = c.Raw(func(dc any) error {
		pc, ok := dc.(pgxConner)
		if !ok {
			return errors.New("gormadapter: the pool's connection is not pgx's")
		}
		return pc.Conn().QueryRow(ctx, s.sql, args...).Scan(dest...)
	})
	_ = c.Close()
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}
