package gormadapter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/authport/authport/core"
)

// SQLiteTimeFormat is how times are stored in SQLite, which has no time
// type of its own. It matters only on SQLite; reading understands all three
// forms whatever the setting.
type SQLiteTimeFormat int

const (
	// SQLiteTimeText stores "2006-01-02 15:04:05.000" text in UTC, which
	// sorts in time order and which SQLite's date functions understand. It
	// is the default.
	SQLiteTimeText SQLiteTimeFormat = iota
	// SQLiteTimeUnixMilli stores INTEGER milliseconds since the Unix epoch,
	// as drizzle-orm's integer({ mode: "timestamp_ms" }) columns of Auth.js's
	// Drizzle schema do. [Adapter.Migrate] then creates INTEGER columns.
	SQLiteTimeUnixMilli
	// SQLiteTimeISO8601 stores "2006-01-02T15:04:05.000Z" text, JavaScript's
	// Date.toISOString form, as Auth.js's Kysely adapter does on SQLite.
	SQLiteTimeISO8601
)

// WithSQLiteTimes sets how times are written to, and compared in, SQLite
// (default [SQLiteTimeText]). Every writer of a table must use one form:
// expiry is compared in SQL, and values of two forms do not compare.
func WithSQLiteTimes(f SQLiteTimeFormat) Option {
	return func(c *config) {
		if f < SQLiteTimeText || f > SQLiteTimeISO8601 {
			if c.stampErr == nil {
				c.stampErr = fmt.Errorf("WithSQLiteTimes: unknown format %d", int(f))
			}
			return
		}
		c.sqliteTimes = f
	}
}

// WithSerialUserIDs tells the adapter that users.id is a PostgreSQL SERIAL
// (integer) column, as in Auth.js's pg adapter schema: [Adapter.NewUserID]
// then takes the next value of the column's sequence, so that ids made by
// authport and by Auth.js (which lets the database number its users) never
// collide. PostgreSQL only; [New] refuses it on other databases.
func WithSerialUserIDs() Option {
	return func(c *config) { c.serialIDs = true }
}

// NewUserID returns an id for a new user, for authport's
// auth.Config.GenerateUserID (ExampleAdapter_NewUserID wires it):
//
//	GenerateUserID: func() (string, error) { return store.NewUserID(context.Background()) }
//
// With [WithSerialUserIDs] it is the next value of the users.id column's
// sequence (nextval(pg_get_serial_sequence(…))), as a decimal string;
// otherwise a random UUID (version 4), the same form as authport's default
// and as the ids Auth.js's Drizzle, Kysely and Prisma adapters make.
func (a *Adapter) NewUserID(ctx context.Context) (string, error) {
	return guard(a, a.enter, func() (string, error) {
		if !a.serialIDs {
			return core.NewUUID(), nil
		}
		var n int64
		err := a.db.QueryRowContext(ctx, "SELECT nextval(pg_get_serial_sequence($1, $2))",
			a.d.table(a.names.Users), a.names.User.ID).Scan(&n)
		if err != nil {
			return "", fmt.Errorf("gormadapter: NewUserID: taking the next id of %s.%s's sequence (is it SERIAL?): %w", a.names.Users, a.names.User.ID, err)
		}
		return strconv.FormatInt(n, 10), nil
	})
}

// accountColumnsAuthJS are the account columns of every Auth.js SQL schema:
// none has expires_in, authorization_details or a password hash.
func accountColumnsAuthJS() AccountColumns {
	return AccountColumns{ExpiresIn: Omit, AuthorizationDetails: Omit, Password: Omit}
}

// userColumnsAuthJS are the user columns of every Auth.js SQL schema: the
// standard names and no username.
func userColumnsAuthJS() UserColumns {
	return UserColumns{Username: Omit}
}

// authJSNames names the tables of an Auth.js schema, whose account columns
// are accountColumnsAuthJS and whose sessions table has no metadata
// columns (sessionColumnsOmitted); authenticators may be [Omit]; there is
// no factors table.
func authJSNames(users, accounts, sessions, tokens, authenticators string) Option {
	return WithNames(Names{
		Users: users, Accounts: accounts, Sessions: sessions,
		VerificationTokens: tokens, Authenticators: authenticators, Factors: Omit,
		User: userColumnsAuthJS(), Account: accountColumnsAuthJS(), Session: sessionColumnsOmitted(),
	})
}

// preset combines options into one.
func preset(opts ...Option) Option {
	return func(c *config) {
		for _, o := range opts {
			o(c)
		}
	}
}

// AuthJSPg configures the adapter for the tables of Auth.js's pg adapter
// (@auth/pg-adapter), both as its documentation gives them (no foreign keys,
// no unique constraints) and as its repository's schema.sql has them
// (foreign keys with ON DELETE CASCADE, unique e-mail, session token and
// account): tables users, accounts, sessions, verification_token; SERIAL
// integer ids ([WithSerialUserIDs]: give authport [Adapter.NewUserID] as its
// GenerateUserID); no authenticators table; no expires_in or
// authorization_details column; no session metadata, username or password
// hash columns and no factors table (see [WithSessionMetadataColumns],
// [WithUsernameColumn], [WithPasswordHashColumn], [WithFactorsTable]);
// [WithoutForeignKeys], so that deleteUser
// deletes the user's sessions and accounts on either schema. PostgreSQL
// only. Options after it override what it sets ([WithNames] replaces all
// its names).
func AuthJSPg() Option {
	return preset(
		WithNames(Names{Authenticators: Omit, Factors: Omit, User: userColumnsAuthJS(), Account: accountColumnsAuthJS(), Session: sessionColumnsOmitted()}),
		WithoutForeignKeys(),
		WithSerialUserIDs(),
	)
}

// AuthJSDrizzle configures the adapter for the default tables of Auth.js's
// Drizzle adapter (@auth/drizzle-adapter, as its documentation shows them
// for PostgreSQL, MySQL/MariaDB and SQLite): tables user, account, session,
// verificationToken, authenticator; text ids (drizzle makes random UUIDs);
// no expires_in or authorization_details column; no session metadata,
// username or password hash columns, no factors table; foreign keys with
// ON DELETE CASCADE; on SQLite, times as INTEGER milliseconds ([SQLiteTimeUnixMilli]). One preset serves the three dialects: the names
// are the same and the column types are the database's concern. Options
// after it override what it sets.
func AuthJSDrizzle() Option {
	return preset(
		authJSNames("user", "account", "session", "verificationToken", "authenticator"),
		WithSQLiteTimes(SQLiteTimeUnixMilli),
	)
}

// AuthJSKysely configures the adapter for the tables of Auth.js's Kysely
// adapter (@auth/kysely-adapter, as its documentation creates them on
// PostgreSQL, MySQL/MariaDB and SQLite): tables User, Account, Session,
// VerificationToken; uuid ids on PostgreSQL (authport's default ids are
// UUIDs); no authenticators table; no expires_in or authorization_details
// column; no session metadata, username or password hash columns, no
// factors table; foreign keys with ON DELETE CASCADE; on SQLite, times as
// ISO 8601 text
// ([SQLiteTimeISO8601]). Options after it override what it sets.
func AuthJSKysely() Option {
	return preset(
		authJSNames("User", "Account", "Session", "VerificationToken", Omit),
		WithSQLiteTimes(SQLiteTimeISO8601),
	)
}

// AuthJSPrisma configures the adapter for the tables `prisma migrate`
// makes of the schema in Auth.js's Prisma adapter documentation (models
// User, Account, Session, VerificationToken, Authenticator): those table
// names; no expires_in, authorization_details, username or password hash
// column and no factors table; the createdAt and updatedAt columns of
// User, Account and Session written by the adapter
// ([WithTimestampColumns]: "updatedAt" is NOT NULL without a database
// default). It keeps no session metadata; given
// WithSessionMetadataColumns("", "", "ipAddress", "userAgent") after it
// (with those two columns added to Session), the Session's createdAt and
// updatedAt become its CreatedAt and UpdatedAt. Tested on PostgreSQL.
// Options after it override what it sets.
func AuthJSPrisma() Option {
	return preset(
		authJSNames("User", "Account", "Session", "VerificationToken", "Authenticator"),
		WithTimestampColumns(TableUsers, "createdAt", "updatedAt"),
		WithTimestampColumns(TableAccounts, "createdAt", "updatedAt"),
		WithTimestampColumns(TableSessions, "createdAt", "updatedAt"),
	)
}
