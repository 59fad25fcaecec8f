package gormadapter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"

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

// betterAuthNames names Better Auth's four core tables (user, session,
// account, verification) with columns named by col, which turns Better
// Auth's field name into the column's: the identity for the tables its
// migrate (Kysely) creates, snake_case for its CLI's Drizzle schema.
func betterAuthNames(col func(string) string) Names {
	return Names{
		Users: "user", Accounts: "account", Sessions: "session", VerificationTokens: "verification",
		Authenticators: Omit, Factors: Omit,
		User: UserColumns{ID: "id", Email: "email", EmailVerified: col("emailVerified"), Name: "name", Image: "image", Username: Omit},
		Account: AccountColumns{
			UserID: col("userId"), Type: Omit, Provider: col("providerId"), ProviderAccountID: col("accountId"),
			AccessToken: col("accessToken"), AuthorizationDetails: Omit, ExpiresAt: col("accessTokenExpiresAt"),
			ExpiresIn: Omit, IDToken: col("idToken"), RefreshToken: col("refreshToken"), Scope: "scope",
			TokenType: Omit, SessionState: Omit, Password: "password",
		},
		Session: SessionColumns{SessionToken: "token", UserID: col("userId"), Expires: col("expiresAt"),
			CreatedAt: col("createdAt"), UpdatedAt: col("updatedAt"), IPAddress: col("ipAddress"), UserAgent: col("userAgent")},
		VerificationToken: VerificationTokenColumns{Identifier: "identifier", Token: "value", Expires: col("expiresAt")},
	}
}

// betterAuth is the preset of Better Auth's tables with columns named by
// col and times on SQLite in the form sqliteTimes.
func betterAuth(col func(string) string, sqliteTimes SQLiteTimeFormat) Option {
	created, updated := col("createdAt"), col("updatedAt")
	var extra [numTables][]string
	extra[TableAccounts] = []string{col("refreshTokenExpiresAt")}
	return preset(
		WithNames(betterAuthNames(col)),
		WithTimestampColumns(TableUsers, created, updated),
		WithTimestampColumns(TableAccounts, created, updated),
		WithTimestampColumns(TableSessions, created, updated),
		WithTimestampColumns(TableVerificationTokens, created, updated),
		withRowIDColumn(TableAccounts, "id"),
		withRowIDColumn(TableSessions, "id"),
		withRowIDColumn(TableVerificationTokens, "id"),
		WithSQLiteTimes(sqliteTimes),
		withShape(shape{boolVerified: true, requireEmail: true, expiryTime: true, baTypes: true, extraTimes: extra}),
	)
}

// BetterAuth configures the adapter for the tables of a Better Auth app
// (better-auth 1.x), as its own migrate (`npx auth migrate`, its built-in
// Kysely adapter) creates them on PostgreSQL, MySQL/MariaDB and SQLite:
// tables user, session, account and verification, their columns named as
// Better Auth's schema names its fields (camelCase). A Go service and the
// Better Auth app then share users, sessions, accounts (OAuth and
// password) and verification values. The mapping onto authport's records:
//
//   - user: id, email, name, image, emailVerified, createdAt, updatedAt.
//     emailVerified is a boolean: a user whose EmailVerified is set
//     writes true, nil writes false, and true reads as the Unix epoch
//     (1970-01-01T00:00:00Z: verified, when unknown). email and name
//     are NOT NULL: a user without an e-mail address is refused (an
//     [*core.InputError], nothing written), a nil name writes "" (as
//     Better Auth does for none) and "" reads as nil. createdAt and
//     updatedAt are written with the adapter's clock
//     ([WithTimestampColumns]). No username column (Better Auth's
//     username plugin adds one: [WithUsernameColumn]("username") after
//     the preset). Other columns, such as those plugins add, are
//     application fields ([core.User.Data]).
//   - session: id (a new random id on insert, as Better Auth makes them:
//     32 characters of [a-zA-Z0-9]), token (the SessionToken), userId,
//     expiresAt; createdAt, updatedAt, ipAddress and userAgent are the
//     session metadata (createdAt and updatedAt NOT NULL).
//   - account: id (generated), accountId (ProviderAccountID), providerId
//     (Provider), userId, accessToken, refreshToken, idToken, scope,
//     password (the password hash: [WithPasswordHashColumn]),
//     accessTokenExpiresAt (a timestamp: ExpiresAt's seconds, read back
//     to the second), createdAt, updatedAt. There is no type column: the
//     type reads as credentials for provider "credential"
//     ([core.PasswordProvider], Better Auth's and authport's password
//     accounts alike, with the user's id as account id) and as oauth for
//     every other; no expires_in, token_type, session_state or
//     authorization_details column ([Omit]: not kept, read as nil).
//     refreshTokenExpiresAt is neither written nor read (authport has no
//     such field; Migrate creates it).
//   - verification: id (generated), identifier, value (the Token),
//     expiresAt, createdAt, updatedAt. Better Auth has no unique key on
//     (identifier, value): a second createVerificationToken of the same
//     pair is not refused.
//   - times: TIMESTAMPTZ on PostgreSQL, DATETIME(3) on MySQL/MariaDB (Better
//     Auth's migrate makes timestamp(3); both read and write the same),
//     and on SQLite ISO 8601 text ([SQLiteTimeISO8601]), as Better Auth's
//     Kysely adapter writes them, in DATE columns; booleans as 0 and 1 on
//     SQLite and MySQL.
//   - no authenticators table: the passkey plugin's passkey table is not
//     mapped, because Better Auth keeps the credential id as the browser
//     gives it (base64url) where authport keeps standard base64, and
//     authport's passkey sign-in finds the user through a webauthn
//     account that Better Auth never creates; and no factors
//     table: the twoFactor plugin keeps one TOTP secret per user
//     encrypted with the Better Auth app's secret, and backup codes,
//     which [core.Factor] cannot hold without decrypting them.
//
// [Adapter.Migrate] creates tables Better Auth's migrate accepts (the same
// names and column types; each table keyed by its id column, with
// unique keys on session.token and on account (providerId, accountId),
// which Better Auth's own tables lack), and leaves user.email NOT NULL.
// On tables Better Auth's migrate created the adapter works as they are;
// on MySQL/MariaDB their columns have the server's default collation,
// which compares case-insensitively: [New] then names the ALTER TABLE
// that makes the key columns binary, or accepts them with
// [WithCaseInsensitiveCollation]. Options after it override what it sets.
func BetterAuth() Option {
	return betterAuth(func(s string) string { return s }, SQLiteTimeISO8601)
}

// BetterAuthDrizzle configures the adapter for the tables of a Better
// Auth app on its Drizzle adapter, as its CLI (`npx auth generate`)
// writes the Drizzle schema by default: the tables and mapping of
// [BetterAuth], with the columns in snake_case (email_verified, user_id,
// provider_id, account_id, access_token_expires_at, expires_at,
// created_at, ip_address, …; id, name, email, image, token, scope,
// password, identifier and value as they are), and on SQLite times as
// INTEGER milliseconds ([SQLiteTimeUnixMilli], drizzle's timestamp_ms).
// (A Drizzle schema generated with the adapter's camelCase option has
// [BetterAuth]'s column names; on PostgreSQL, Drizzle's timestamp
// columns are without time zone, Migrate's TIMESTAMPTZ: create the tables
// with drizzle-kit.) Options after it override what it sets.
func BetterAuthDrizzle() Option {
	return betterAuth(snakeCase, SQLiteTimeUnixMilli)
}

// snakeCase is the Better Auth CLI's convertToSnakeCase: "emailVerified"
// → "email_verified", "credentialID" → "credential_id".
func snakeCase(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		upper := unicode.IsUpper(c)
		if upper && i > 0 {
			prev := r[i-1]
			// "aB" → "a_b"; "ABc" → "a_bc" (an upper run before a word).
			if unicode.IsLower(prev) || unicode.IsDigit(prev) ||
				(unicode.IsUpper(prev) && i+1 < len(r) && unicode.IsLower(r[i+1])) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
