// Package gormadapter is an authport adapter for SQL databases reached
// through gorm: PostgreSQL (gorm.io/driver/postgres, pgx), MySQL and MariaDB
// (gorm.io/driver/mysql) and SQLite (gorm.io/driver/sqlite).
//
// [New] takes the application's own *gorm.DB, so pooling, TLS, logging and
// instrumentation stay the application's. The adapter implements all 19
// methods of the adapter contract ([github.com/authport/authport/core.Adapter]),
// [github.com/authport/authport/core.ExpiredPurger], the counter, account
// listing, account update and session extension
// ([github.com/authport/authport/core.SessionExtender]: one conditional
// UPDATE) extensions, the session inventory
// ([github.com/authport/authport/core.SessionsByUserLister]: one SELECT on
// the sessions' userId index; [github.com/authport/authport/core.SessionsByUserDeleter]:
// one DELETE … RETURNING, or a transaction), application fields on users
// ([github.com/authport/authport/core.User.Data]) as extra columns of the
// users table, and session metadata (created, last updated, IP address,
// user agent) in nullable columns of the sessions table ([SessionColumns];
// none on the Auth.js presets' tables unless named, see
// [WithSessionMetadataColumns]). Call it through core.Store (core/auth does), which checks
// input and names the method in errors; the adapter holds only storage.
//
// A user's e-mail address is optional ("" is stored as NULL, unique only
// among the users that have one). Usernames
// ([github.com/authport/authport/core.UserByUsernameGetter]) live in a
// nullable, unique username column and password hashes
// ([github.com/authport/authport/core.PasswordHashSwapper]: one
// conditional UPDATE) in a nullable password column of the accounts
// table; the Auth.js presets keep neither unless [WithUsernameColumn] and
// [WithPasswordHashColumn] name the columns, and list the two methods in
// [Adapter.OmittedMethods] until then. [Adapter.Migrate] brings tables made
// before up to this: it adds the columns and makes a NOT NULL e-mail
// column nullable (rebuilding the table on SQLite).
//
// Each operation is one SQL statement where the dialect allows it:
// getSessionAndUser and getUserByAccount are one JOIN, useVerificationToken,
// deleteSession, unlinkAccount and deleteUser one DELETE … RETURNING
// (deleteUser relies on ON DELETE CASCADE foreign keys), and updateUser,
// updateSession and updateAuthenticatorCounter one UPDATE … RETURNING.
// Where a dialect lacks RETURNING (MySQL; MariaDB has DELETE … RETURNING
// since 10.5 but no UPDATE … RETURNING) the operation runs as two statements
// in one transaction. The statements are built once, in [New] (again when
// the users table gains an application column), and run on
// the *sql.DB behind the *gorm.DB, not through gorm's query builder.
//
// The schema (tables, foreign keys, unique constraints, indexes) is created
// by [Adapter.Migrate] or by the SQL files shipped in the schema directory
// ([SchemaSQL]); the names of tables and columns can be changed with
// [WithNames], to use an existing schema such as the one Auth.js's pg
// adapter or Prisma schema creates. [WithTimestampColumns] makes the adapter
// fill in created/updated columns that have no default (Prisma's
// "updatedAt"), and [WithoutForeignKeys] makes it check users and cascade
// deleteUser itself on a schema without foreign keys (Auth.js's pg
// adapter's).
//
// To share tables with an Auth.js app, use the preset for the schema its
// adapter created: [AuthJSPg] (@auth/pg-adapter), [AuthJSDrizzle]
// (@auth/drizzle-adapter, PostgreSQL, MySQL/MariaDB and SQLite),
// [AuthJSKysely] (@auth/kysely-adapter, the same three) or [AuthJSPrisma]
// (@auth/prisma-adapter). Each sets the names, omitted columns, foreign key
// handling, id generation ([Adapter.NewUserID]) and SQLite time format
// ([WithSQLiteTimes]) of that schema; the module's interop suite runs each
// against the real npm package.
//
// To share tables with a Better Auth app, use [BetterAuth] (tables made by
// its migrate) or [BetterAuthDrizzle] (its CLI's Drizzle schema): Better
// Auth's user, session, account and verification tables, with its boolean
// emailVerified, NOT NULL e-mail and name, row ids, account expiry as a
// time and no account type (each decision documented on [BetterAuth]).
//
// [Adapter.Close] releases the prepared statements; it waits for calls in
// progress, and every later call fails with [ErrClosed].
//
// Database errors are mapped by driver error code: a unique violation
// matches core.ErrAlreadyExists, a foreign key violation (a record for a
// user that does not exist) core.ErrNotFound, and a value the database
// cannot hold (a NUL byte in PostgreSQL text, a value too long for a MySQL
// column) core.ErrInvalidInput. The package imports no database driver
// (it recognises each driver's error by its shape), so a program links only
// the driver of the dialector it opens: pgx alone for PostgreSQL,
// go-sql-driver/mysql alone for MySQL, go-sqlite3 (cgo) alone for SQLite.
//
// Times are stored in UTC, truncated to the millisecond: TIMESTAMP(3) WITH
// TIME ZONE on PostgreSQL, DATETIME(3) on MySQL (use parseTime=true in the
// DSN; with a loc other than the default UTC the driver stores that zone's
// wall-clock time, and times still come back in UTC), and text "YYYY-MM-DD
// HH:MM:SS.mmm" on SQLite (or another form, [WithSQLiteTimes]).
//
// SQLite must be opened with foreign keys enforced ("_foreign_keys=on" for
// go-sqlite3), or New returns an error: deleteUser relies on the cascade.
// Use "_busy_timeout=…" and WAL mode for concurrent writers.
package gormadapter
