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
	"github.com/jackc/pgx/v5/pgtype"
)

// resultFormats asks for binary results only for the types database/sql's
// pgx driver (stdlib) does, so that a sql.Scanner destination gets the
// same value it would get through database/sql (text for arrays, ranges,
// time, …, where pgx would otherwise hand it the binary encoding).
func resultFormats() pgx.QueryResultFormatsByOID {
	return pgx.QueryResultFormatsByOID{pgtype.BoolOID: pgx.BinaryFormatCode, pgtype.ByteaOID: pgx.BinaryFormatCode, pgtype.CIDOID: pgx.BinaryFormatCode,
		pgtype.DateOID: pgx.BinaryFormatCode, pgtype.Float4OID: pgx.BinaryFormatCode, pgtype.Float8OID: pgx.BinaryFormatCode,
		pgtype.Int2OID: pgx.BinaryFormatCode, pgtype.Int4OID: pgx.BinaryFormatCode, pgtype.Int8OID: pgx.BinaryFormatCode,
		pgtype.OIDOID: pgx.BinaryFormatCode, pgtype.TimestampOID: pgx.BinaryFormatCode, pgtype.TimestamptzOID: pgx.BinaryFormatCode,
		pgtype.XIDOID: pgx.BinaryFormatCode}
}

// New returns the reader to pass to gormadapter.WithRowReader.
func New() gormadapter.RowReader { return reader{formats: resultFormats()} }

// reader implements gormadapter.RowReader with pgx.
type reader struct {
	// formats: resultFormats, the first argument of every query.
	formats pgx.QueryResultFormatsByOID
}

// pgxConn is what pgx's database/sql driver's connection (stdlib.Conn)
// gives: its *pgx.Conn.
type pgxConn interface {
	Conn() *pgx.Conn
}

// Accepts accepts a connection of pgx's database/sql driver.
func (reader) Accepts(conn any) error {
	if _, ok := conn.(pgxConn); !ok {
		return notPgx(conn)
	}
	return nil
}

func notPgx(conn any) error {
	return fmt.Errorf("pgxread: the pool's connections are %T, not pgx's database/sql driver's "+
		"(github.com/jackc/pgx/v5/stdlib, which gorm.io/driver/postgres opens); "+
		"a driver wrapping pgx's, for instrumentation, hides it: leave the option out there", conn)
}

// ReadRow runs query on conn's *pgx.Conn and scans the row into dest.
func (r reader) ReadRow(ctx context.Context, conn any, query string, args []any, dest []any) error {
	c, ok := conn.(pgxConn)
	if !ok {
		return notPgx(conn)
	}
	var err error
	if substitute(dest) {
		// An application's column (a sql.Scanner): its value must be
		// the one database/sql would hand it, text where the stdlib
		// driver asks for text.
		var buf [4]any
		err = c.Conn().QueryRow(ctx, query, append(append(buf[:0], r.formats), args...)...).Scan(dest...)
	} else {
		err = c.Conn().QueryRow(ctx, query, args...).Scan(dest...)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}
