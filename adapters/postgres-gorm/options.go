package gormadapter

import (
	"fmt"
	"time"
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
	// shape: how Better Auth's tables differ from authport's beyond
	// their names (the BetterAuth presets).
	shape shape
	// reader: WithRowReader.
	reader RowReader
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

// Table names one of the adapter's six tables, for the options that apply
// to one table.
type Table int

// The tables, as [Table] values.
const (
	TableUsers Table = iota + 1
	TableAccounts
	TableSessions
	TableVerificationTokens
	TableAuthenticators
	TableFactors

	numTables = int(TableFactors) + 1
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
	case TableFactors:
		return "factors"
	}
	return fmt.Sprintf("Table(%d)", int(t))
}

// stampCols are one table's timestamp columns and its row id column; ""
// is none. The row id column (withRowIDColumn) is the table's primary key,
// a random id the adapter generates on insert and never reads (Better
// Auth's sessions, accounts and verification values have one).
type stampCols struct{ created, updated, id string }

// WithSessionMetadataColumns names the sessions table's metadata columns
// (see [SessionColumns]): when the session was created and last updated
// (timestamps), the client's IP address and its User-Agent (text); "" keeps
// the default name ("createdAt", "updatedAt", "ipAddress", "userAgent"),
// [Omit] keeps no such column. Unlike [WithNames] it changes no other name,
// so it can follow a preset: the Auth.js presets keep no metadata, and
// after adding the columns to an Auth.js sessions table, say
//
//	gormadapter.New(ctx, db, gormadapter.AuthJSDrizzle(),
//		gormadapter.WithSessionMetadataColumns("createdAt", "updatedAt", "ipAddress", "userAgent"))
//
// (Auth.js's own adapters go on working on such a table: they neither
// write nor read the extra columns, which must therefore be nullable or
// have defaults.)
func WithSessionMetadataColumns(createdAt, updatedAt, ipAddress, userAgent string) Option {
	return func(c *config) {
		s := &c.names.Session
		s.CreatedAt, s.UpdatedAt, s.IPAddress, s.UserAgent = createdAt, updatedAt, ipAddress, userAgent
	}
}

// WithUsernameColumn names the users table's username column
// ([UserColumns.Username]: nullable, with a unique index), so that the
// adapter keeps usernames ([github.com/authport/authport/core.User.Username])
// and offers getUserByUsername; [Omit] keeps none. Unlike [WithNames] it
// changes no other name, so it can follow a preset: the Auth.js presets
// keep no usernames, and after adding the column to an Auth.js users
// table (nullable, unique; [Adapter.Migrate] adds it, or see the README),
// say
//
//	gormadapter.New(ctx, db, gormadapter.AuthJSDrizzle(), gormadapter.WithUsernameColumn("username"))
//
// Auth.js's own adapters go on working on such a table: they neither write
// nor read the column.
func WithUsernameColumn(column string) Option {
	return func(c *config) { c.names.User.Username = column }
}

// WithPasswordHashColumn names the accounts table's password hash column
// ([AccountColumns.Password]: nullable text, Better Auth's "password"), so
// that the adapter keeps password accounts' hashes
// ([github.com/authport/authport/core.Account.PasswordHash]) and offers
// swapPasswordHash; [Omit] keeps none. Like [WithUsernameColumn] it can
// follow a preset, after the column is added to the Auth.js accounts
// table:
//
//	gormadapter.New(ctx, db, gormadapter.AuthJSKysely(), gormadapter.WithPasswordHashColumn("password"))
func WithPasswordHashColumn(column string) Option {
	return func(c *config) { c.names.Account.Password = column }
}

// WithFactorsTable names the table of users' second factors
// ([Names.Factors], [FactorColumns]), so that the adapter keeps them
// ([github.com/authport/authport/core.Factor]) and offers createFactor,
// listFactorsByUserId, swapFactor and deleteFactor; [Omit] keeps none.
// The default names keep them in "factors"; the Auth.js presets keep none
// (Auth.js has no such table), and like [WithUsernameColumn] this option
// can follow a preset:
//
//	gormadapter.New(ctx, db, gormadapter.AuthJSDrizzle(), gormadapter.WithFactorsTable("factor"))
//
// [Adapter.Migrate] then creates the table (its userId column of the type
// of the users table's id, with a foreign key unless
// [WithoutForeignKeys]). Auth.js's own adapters go on working beside it:
// they never read it, and deleteUser's cascade removes a user's factors.
func WithFactorsTable(name string) Option {
	return func(c *config) { c.names.Factors = name }
}

// mergeSessionStamps makes the sessions table's timestamp columns
// (WithTimestampColumns) and its created/updated metadata columns one: a
// timestamp column whose metadata column is not [Omit] becomes the metadata
// column (n's name for it must be empty or the same), is dropped from the
// returned stamps, and is reported stamped (NOT NULL: the clock fills it
// when a session has no such time). n is as configured, before defaults.
func mergeSessionStamps(n Names, stamps [numTables]stampCols) (Names, [numTables]stampCols, [2]bool, error) {
	st := &stamps[TableSessions]
	var stamped [2]bool
	for i, p := range []struct {
		meta, stamp *string
		field       string
	}{{&n.Session.CreatedAt, &st.created, "CreatedAt"}, {&n.Session.UpdatedAt, &st.updated, "UpdatedAt"}} {
		switch {
		case *p.stamp == "" || *p.stamp == Omit || *p.meta == Omit: // none, invalid (see validateStamps), or kept apart
		case *p.meta == "" || *p.meta == *p.stamp:
			*p.meta, *p.stamp, stamped[i] = *p.stamp, "", true
		default:
			return n, stamps, stamped, fmt.Errorf("sessions: WithTimestampColumns names %q but SessionColumns.%s names %q: "+
				"a session has one %s time; name the same column, or Omit the metadata column", *p.stamp, p.field, *p.meta, p.field)
		}
	}
	return n, stamps, stamped, nil
}

// WithTimestampColumns names the columns in which table t records when a
// row was created and when it was last updated, for schemas whose columns
// are NOT NULL without a default, such as Prisma's
// "updatedAt DateTime @updatedAt" (TIMESTAMP(3) NOT NULL: Prisma's client,
// not the database, fills it in). The adapter writes the adapter's clock
// ([WithClock]) in UTC, to the millisecond, into created (if not "") on
// insert and into updated (if not "") on insert and on every update
// (updateUser, updateSession, updateAuthenticatorCounter, swapFactor). Leave created
// empty to let a database default fill it. [Adapter.Migrate] creates the
// columns (NOT NULL timestamps) in the tables it creates. Call it once per
// table that has such columns.
//
// On the sessions table these columns and the session metadata columns
// ([SessionColumns] CreatedAt and UpdatedAt) are one notion: unless
// SessionColumns names the metadata column [Omit] (as the Auth.js presets
// do), the timestamp column is the metadata column (a SessionColumns name
// left empty takes it; a different one is refused by [New]). Such a column
// then holds the session's CreatedAt or UpdatedAt when the session gives
// one and the adapter's clock when it does not (it is NOT NULL);
// extendSession writes the time seen into the updated column, and
// updateSession the update's UpdatedAt, or the clock when it sets none.
func WithTimestampColumns(t Table, created, updated string) Option {
	return func(c *config) {
		if t < TableUsers || t > TableFactors {
			if c.stampErr == nil {
				c.stampErr = fmt.Errorf("WithTimestampColumns: unknown table %v", t)
			}
			return
		}
		c.stamps[t].created, c.stamps[t].updated = created, updated
	}
}

// withRowIDColumn names table t's row id column (see stampCols.id).
func withRowIDColumn(t Table, column string) Option {
	return func(c *config) { c.stamps[t].id = column }
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
