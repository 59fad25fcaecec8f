package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// A RowReader reads one row with a database driver's own API, on a
// connection of the adapter's pool, leaving out database/sql's rows and
// its driver's conversion of every column to a driver.Value and back,
// which on PostgreSQL make most of a session read's cost. Package
// [github.com/authport/authport/adapters/postgres-gorm/pgxread] has the
// one for pgx; see [WithRowReader].
//
// The adapter imports no database driver, so a MySQL or SQLite program
// links no pgx: a RowReader is how a PostgreSQL program opts in to reading
// through pgx without the adapter's package depending on it.
type RowReader interface {
	// Accepts returns nil when conn, a connection of the adapter's pool
	// as database/sql's Conn.Raw hands it over (the driver's
	// driver.Conn), is one ReadRow reads with, or an error that says
	// what the reader needs instead.
	Accepts(conn any) error
	// ReadRow runs query with args on conn, which Accepts accepted, and
	// scans the row into dest as database/sql's Row.Scan would; no row
	// is sql.ErrNoRows (errors.Is). dest's values are *string,
	// *sql.NullString, *sql.NullTime, *sql.NullBool and sql.Scanner
	// values (the application's columns), which must be handed what
	// the driver hands database/sql for the column (int64, float64,
	// bool, []byte, string, time.Time or nil); ReadRow may replace
	// dest's values with its own destinations that write to the same
	// variables. A time stored as text reads as [ParseTime] reads it.
	// A connection that broke during the read must report itself
	// invalid (driver.Validator) or ReadRow's error must match
	// driver.ErrBadConn, so that the pool does not hand it out again.
	// ReadRow must not keep conn, query, args or dest after it returns.
	ReadRow(ctx context.Context, conn any, query string, args []any, dest []any) error
}

// WithRowReader has the adapter read sessions with r: getSessionAndUser,
// the read of every request with database sessions, runs its SELECT (the
// same statement, on a connection borrowed from the same *sql.DB, whose
// limits and statistics hold) through r instead of database/sql's rows.
// The other methods keep database/sql. [New] fails when r does not accept
// the pool's connections (a driver other than the one r reads with, or
// one wrapped by instrumentation).
//
// With gorm.io/driver/postgres:
//
//	a, err := gormadapter.New(ctx, db, gormadapter.AuthJSPg(), gormadapter.WithRowReader(pgxread.New()))
//
// docs/performance.md ("The read path against its limit") gives what it
// saves.
func WithRowReader(r RowReader) Option {
	return func(c *config) { c.reader = r }
}

// checkRowReader fails when the pool's connections are not r's.
func (a *Adapter) checkRowReader(ctx context.Context, r RowReader) error {
	c, err := a.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("WithRowReader: borrowing a connection: %w", err)
	}
	defer c.Close()
	var refused error
	if err := c.Raw(func(dc any) error {
		refused = r.Accepts(dc)
		return nil
	}); err != nil {
		return fmt.Errorf("WithRowReader: reaching the driver's connection: %w", err)
	}
	if refused != nil {
		return fmt.Errorf("WithRowReader: the reader does not read with the pool's connections: %w", refused)
	}
	return nil
}

// readRow runs s with args through the RowReader on a connection borrowed
// from the pool and scans its row into dest.
func (a *Adapter) readRow(ctx context.Context, s *statement, dest []any, args ...any) error {
	c, err := a.db.Conn(ctx)
	if err != nil {
		return err
	}
	err = c.Raw(func(dc any) error { return a.reader.ReadRow(ctx, dc, s.sql, args, dest) })
	_ = c.Close()
	return err
}

// sessionUserRow is getSessionAndUser's row read through the RowReader,
// and what it returns: one allocation holds the SessionAndUser, the scan's
// destinations and the values its pointers point to. The destinations are
// *string and the database/sql Null types, which a RowReader can scan into
// with its driver's own types (pgxread does), in the order of the SELECT:
// the session's token, user id and expiry, then the user's columns as
// userRow scans them.
type sessionUserRow struct {
	su                           core.SessionAndUser
	expires, verified            sql.NullTime
	verifiedBool                 sql.NullBool // shape.boolVerified
	email, username, name, image sql.NullString
	data                         []dataCell
	dest                         [16]any
}

// getSessionAndUserRead reads the session and user of token with q's
// getSessionAndUser through the RowReader (nil, nil: none).
func (a *Adapter) getSessionAndUserRead(ctx context.Context, q *queries, token string) (*core.SessionAndUser, error) {
	r := &sessionUserRow{}
	s, u := &r.su.Session, &r.su.User
	dest := append(r.dest[:0], &s.SessionToken, &s.UserID, &r.expires, &u.ID, &r.email, &r.verified, &r.name, &r.image)
	if q.shape.boolVerified {
		dest[5] = &r.verifiedBool
	}
	if q.keepsUsernames() {
		dest = append(dest, &r.username)
	}
	if len(q.extras) > 0 {
		r.data = make([]dataCell, len(q.extras))
		for i, c := range q.extras {
			r.data[i].kind = c.kind
			dest = append(dest, &r.data[i])
		}
	}
	err := a.readRow(ctx, q.getSessionAndUser, dest, token)
	if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(err)
	}
	// As nullTime reads them: UTC, milliseconds; a NULL expiry (which no
	// schema of the adapter allows) is the zero time, long expired.
	if r.expires.Valid {
		s.Expires = core.NormalizeTime(r.expires.Time)
	}
	u.Email, u.Username = r.email.String, r.username.String
	switch {
	case q.shape.boolVerified:
		// Better Auth's boolean: true reads as the time it stands for, as
		// userRow.user reads it.
		if r.verifiedBool.Valid && r.verifiedBool.Bool {
			r.verified.Time = verifiedUnknown
			u.EmailVerified = &r.verified.Time
		}
	case r.verified.Valid:
		r.verified.Time = core.NormalizeTime(r.verified.Time)
		u.EmailVerified = &r.verified.Time
	}
	// Better Auth's name is NOT NULL: "" is no name there, as userRow.user
	// reads it.
	if r.name.Valid && (r.name.String != "" || !q.shape.requireEmail) {
		u.Name = &r.name.String
	}
	if r.image.Valid {
		u.Image = &r.image.String
	}
	u.Data = dataMap(q.extras, r.data)
	return &r.su, nil
}

// ParseTime reads a time kept as text in one of the forms the adapter
// reads through database/sql (where a schema keeps times in a text column:
// "2006-01-02 15:04:05.999", RFC 3339, a date), in UTC where the text has
// no offset, normalised as the adapter's times are (UTC, milliseconds). It
// is for a [RowReader] whose driver hands it such a column's text.
func ParseTime(s string) (time.Time, error) {
	var n nullTime
	if err := n.parse(s); err != nil {
		return time.Time{}, err
	}
	return n.t, nil
}
