package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
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

// The pgx scanners of nullTime: pgx hands a timestamptz, timestamp or date
// column's value to them as its own type, where its database/sql path (Scan)
// boxes a time.Time in an interface. Values are normalised as Scan's are;
// an infinite one is refused, as Scan refuses the "infinity" text the
// driver gives database/sql.

// ScanTimestamptz implements pgtype.TimestamptzScanner.
func (n *nullTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	return n.scanPg(v.Time, v.InfinityModifier, v.Valid)
}

// ScanTimestamp implements pgtype.TimestampScanner.
func (n *nullTime) ScanTimestamp(v pgtype.Timestamp) error {
	return n.scanPg(v.Time, v.InfinityModifier, v.Valid)
}

// ScanDate implements pgtype.DateScanner.
func (n *nullTime) ScanDate(v pgtype.Date) error {
	return n.scanPg(v.Time, v.InfinityModifier, v.Valid)
}

func (n *nullTime) scanPg(t time.Time, inf pgtype.InfinityModifier, valid bool) error {
	switch {
	case !valid:
		n.t, n.valid = time.Time{}, false
	case inf != pgtype.Finite:
		return fmt.Errorf("cannot read a time from %q", inf.String())
	default:
		n.t, n.valid = core.NormalizeTime(t), true
	}
	return nil
}

// sessionUserRow is getSessionAndUser's row read with pgx, and what it
// returns: one allocation holds the SessionAndUser, the values its pointers
// point to and the scan's destinations, in the order of the SELECT (the
// session's token, user id and expiry, then the user's columns as userRow
// scans them).
type sessionUserRow struct {
	su                           core.SessionAndUser
	expires, verified            nullTime
	verifiedBool                 pgtype.Bool // shape.boolVerified
	email, username, name, image pgtype.Text
	verifiedAt                   time.Time
	data                         []dataCell
	dest                         [16]any
}

// getSessionAndUserPgx reads the session and user of token with q's
// getSessionAndUser on pgx (nil, nil: none).
func (a *Adapter) getSessionAndUserPgx(ctx context.Context, q *queries, token string) (*core.SessionAndUser, error) {
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
	err := a.queryRowPgx(ctx, q.getSessionAndUser, dest, token)
	if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(err)
	}
	s.Expires = r.expires.t
	u.Email, u.Username = r.email.String, r.username.String
	switch {
	case q.shape.boolVerified:
		// Better Auth's boolean: true reads as the time it stands for
		// (userRow.user reads it the same way).
		if r.verifiedBool.Valid && r.verifiedBool.Bool {
			r.verifiedAt = verifiedUnknown
			u.EmailVerified = &r.verifiedAt
		}
	case r.verified.valid:
		r.verifiedAt = r.verified.t
		u.EmailVerified = &r.verifiedAt
	}
	if r.name.Valid && (r.name.String != "" || !q.shape.requireEmail) {
		u.Name = &r.name.String
	}
	if r.image.Valid {
		u.Image = &r.image.String
	}
	u.Data = dataMap(q.extras, r.data)
	return &r.su, nil
}
