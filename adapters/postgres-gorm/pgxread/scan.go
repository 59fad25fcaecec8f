package pgxread

import (
	"database/sql"
	"fmt"
	"time"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/jackc/pgx/v5/pgtype"
)

// The destinations gormadapter passes as database/sql's Null types, read
// with pgx's own scanner interfaces: pgx hands a column's value to them as
// its own type, where scanning into a sql.Scanner makes it convert the
// value to a driver.Value first (a string or a boxed time.Time, an
// allocation each). Each is the Null type itself under another name, so
// substituting one for the other in dest allocates nothing.
type (
	nullString sql.NullString
	nullTime   sql.NullTime
	nullBool   sql.NullBool
)

// substitute replaces dest's database/sql Null types with the scanners
// above, in place, and reports whether dest holds other destinations than
// those and *string (an application column's sql.Scanner).
func substitute(dest []any) (others bool) {
	for i, d := range dest {
		switch p := d.(type) {
		case *string:
		case *sql.NullString:
			dest[i] = (*nullString)(p)
		case *sql.NullTime:
			dest[i] = (*nullTime)(p)
		case *sql.NullBool:
			dest[i] = (*nullBool)(p)
		default:
			others = true
		}
	}
	return others
}

// ScanText implements pgtype.TextScanner.
func (n *nullString) ScanText(v pgtype.Text) error {
	n.String, n.Valid = v.String, v.Valid
	return nil
}

// ScanTimestamptz implements pgtype.TimestamptzScanner.
func (n *nullTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	return n.scan(v.Time, v.InfinityModifier, v.Valid)
}

// ScanTimestamp implements pgtype.TimestampScanner.
func (n *nullTime) ScanTimestamp(v pgtype.Timestamp) error {
	return n.scan(v.Time, v.InfinityModifier, v.Valid)
}

// ScanDate implements pgtype.DateScanner.
func (n *nullTime) ScanDate(v pgtype.Date) error {
	return n.scan(v.Time, v.InfinityModifier, v.Valid)
}

// scan refuses an infinite time, as database/sql's conversion of the
// "infinity" text the stdlib driver gives does: no time.Time stands for
// it.
func (n *nullTime) scan(t time.Time, inf pgtype.InfinityModifier, valid bool) error {
	switch {
	case !valid:
		n.Time, n.Valid = time.Time{}, false
	case inf != pgtype.Finite:
		return fmt.Errorf("pgxread: cannot read a time from %s", inf)
	default:
		n.Time, n.Valid = t, true
	}
	return nil
}

// Scan implements sql.Scanner, which pgx falls back on for a column none
// of the scanners above takes: a time kept in a text column, read as the
// adapter reads it through database/sql (gormadapter.ParseTime).
func (n *nullTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		n.Time, n.Valid = time.Time{}, false
		return nil
	case time.Time:
		n.Time, n.Valid = v, true
		return nil
	case string:
		return n.parse(v)
	case []byte:
		return n.parse(string(v))
	}
	return fmt.Errorf("pgxread: cannot read a time from %T", src)
}

func (n *nullTime) parse(s string) error {
	t, err := gormadapter.ParseTime(s)
	if err != nil {
		return err
	}
	n.Time, n.Valid = t, true
	return nil
}

// ScanBool implements pgtype.BoolScanner.
func (n *nullBool) ScanBool(v pgtype.Bool) error {
	n.Bool, n.Valid = v.Bool, v.Valid
	return nil
}
