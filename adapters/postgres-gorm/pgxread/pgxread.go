// Package pgxread reads the PostgreSQL adapter's sessions with pgx itself.
//
// Every request with database sessions reads one session and its user
// (getSessionAndUser). Through database/sql, pgx's stdlib driver turns each
// column into a driver.Value and database/sql converts it again into the
// destination, which makes most of that read's allocations and about a
// tenth of the request's instructions. With this package's reader the
// adapter runs the same statement with pgx on a connection borrowed from
// the same *sql.DB (so its pool limits and statistics hold), prepared once
// per connection by pgx's statement cache as before:
//
//	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{})
//	…
//	a, err := gormadapter.New(ctx, db, gormadapter.AuthJSPg(), gormadapter.WithRowReader(pgxread.New()))
//
// It is a package of its own because the adapter's package imports no
// database driver: a MySQL or SQLite program links no pgx. A PostgreSQL
// program links pgx anyway, through gorm.io/driver/postgres.
//
// The pool's connections must be pgx's database/sql driver's
// (github.com/jackc/pgx/v5/stdlib, what gorm.io/driver/postgres opens);
// gormadapter.New fails otherwise, for example with a driver wrapped by
// instrumentation.
package pgxread

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/jackc/pgx/v5"
)

// New returns the reader to pass to gormadapter.WithRowReader.
func New() gormadapter.RowReader { return reader{} }

// reader implements gormadapter.RowReader with pgx.
type reader struct{}

// pgxConn is what pgx's database/sql driver's connection (stdlib.Conn)
// gives: its *pgx.Conn.
type pgxConn interface {
	Conn() *pgx.Conn
}

// Accepts reports whether conn is a connection of pgx's database/sql
// driver.
func (reader) Accepts(conn any) bool {
	_, ok := conn.(pgxConn)
	return ok
}

// ReadRow runs query on conn's *pgx.Conn and scans the row into dest.
func (reader) ReadRow(ctx context.Context, conn any, query string, args []any, dest []any) error {
	c, ok := conn.(pgxConn)
	if !ok {
		return fmt.Errorf("pgxread: the connection is a %T, not one of pgx's database/sql driver", conn)
	}
	substitute(dest)
	err := c.Conn().QueryRow(ctx, query, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}
