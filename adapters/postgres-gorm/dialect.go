package gormadapter

import (
	"strconv"
	"strings"
	"time"
)

// dialect is what the adapter needs to know about the database it talks to.
type dialect struct {
	name string // "postgres", "mysql" or "sqlite"

	// mariadb is set for MariaDB (dialect name "mysql").
	mariadb bool
	// version is the server (or SQLite library) version string.
	version string

	// deleteReturning reports DELETE … RETURNING (PostgreSQL, SQLite ≥
	// 3.35, MariaDB ≥ 10.5).
	deleteReturning bool
	// updateReturning reports UPDATE … RETURNING (PostgreSQL, SQLite ≥
	// 3.35; never MySQL or MariaDB).
	updateReturning bool
	// prepare tells the adapter to prepare its statements once per
	// connection with database/sql. pgx caches prepared statements by
	// itself, so PostgreSQL does not need it; go-sql-driver/mysql would
	// otherwise prepare and close a statement around every query.
	prepare bool
	// sqliteTimes is how times are stored in SQLite (WithSQLiteTimes).
	sqliteTimes SQLiteTimeFormat
	// shape is how the schema's tables differ from authport's (the
	// Better Auth presets).
	shape shape
}

func (d *dialect) postgres() bool { return d.name == "postgres" }
func (d *dialect) mysql() bool    { return d.name == "mysql" }
func (d *dialect) sqlite() bool   { return d.name == "sqlite" }

// ident quotes one identifier.
func (d *dialect) ident(s string) string {
	if d.mysql() {
		return "`" + strings.ReplaceAll(s, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// table quotes a table name that may be qualified with a schema.
func (d *dialect) table(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = d.ident(p)
	}
	return strings.Join(parts, ".")
}

// placeholders numbers bind parameters for one statement.
type placeholders struct {
	d *dialect
	n int
}

// next returns the next bind parameter: $1, $2 … on PostgreSQL, ? elsewhere.
func (p *placeholders) next() string {
	p.n++
	if p.d.postgres() {
		return "$" + strconv.Itoa(p.n)
	}
	return "?"
}

// list returns n bind parameters separated by commas.
func (p *placeholders) list(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = p.next()
	}
	return strings.Join(ps, ", ")
}

// sqliteTime is the text form in which times are stored in SQLite: UTC,
// always three decimals, so that stored values sort as text in time order
// and SQLite's date functions understand them.
const sqliteTime = "2006-01-02 15:04:05.000"

// sqliteISOTime is JavaScript's Date.prototype.toISOString form, in which
// Auth.js's Kysely adapter stores times in SQLite.
const sqliteISOTime = "2006-01-02T15:04:05.000Z"

// timeArg converts a (normalised) time to a bind parameter.
func (d *dialect) timeArg(t time.Time) any {
	t = t.UTC()
	if d.sqlite() {
		switch d.sqliteTimes {
		case SQLiteTimeUnixMilli:
			return t.UnixMilli()
		case SQLiteTimeISO8601:
			return t.Format(sqliteISOTime)
		}
		return t.Format(sqliteTime)
	}
	return t
}

// timePtrArg is timeArg for a nullable time.
func (d *dialect) timePtrArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.timeArg(*t)
}

// versionAtLeast compares a dotted version prefix ("10.11.6-MariaDB-…",
// "3.45.1") with major.minor.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	num := func(i int) int {
		if i >= len(parts) {
			return 0
		}
		s := parts[i]
		end := 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		n, _ := strconv.Atoi(s[:end])
		return n
	}
	if num(0) != major {
		return num(0) > major
	}
	return num(1) >= minor
}
