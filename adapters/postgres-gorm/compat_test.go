package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
	"github.com/jackc/pgx/v5/pgconn"
)

// prismaPostgresDDL is what `prisma migrate` creates on PostgreSQL for the
// schema of Auth.js's Prisma adapter documentation (models User, Account,
// Session, VerificationToken, Authenticator), written out by hand: Prisma
// String is TEXT, DateTime TIMESTAMP(3) (without time zone), Int INTEGER;
// "createdAt DateTime @default(now())" has a database default, while
// "updatedAt DateTime @updatedAt" is NOT NULL with none (Prisma's client
// fills it in).
var prismaPostgresDDL = []string{
	`CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "name" TEXT,
    "email" TEXT NOT NULL,
    "emailVerified" TIMESTAMP(3),
    "image" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
)`,
	`CREATE TABLE "Account" (
    "userId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "providerAccountId" TEXT NOT NULL,
    "refresh_token" TEXT,
    "access_token" TEXT,
    "expires_at" INTEGER,
    "token_type" TEXT,
    "scope" TEXT,
    "id_token" TEXT,
    "session_state" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "Account_pkey" PRIMARY KEY ("provider","providerAccountId")
)`,
	`CREATE TABLE "Session" (
    "sessionToken" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL
)`,
	`CREATE TABLE "VerificationToken" (
    "identifier" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "VerificationToken_pkey" PRIMARY KEY ("identifier","token")
)`,
	`CREATE TABLE "Authenticator" (
    "credentialID" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "providerAccountId" TEXT NOT NULL,
    "credentialPublicKey" TEXT NOT NULL,
    "counter" INTEGER NOT NULL,
    "credentialDeviceType" TEXT NOT NULL,
    "credentialBackedUp" BOOLEAN NOT NULL,
    "transports" TEXT,
    CONSTRAINT "Authenticator_pkey" PRIMARY KEY ("userId","credentialID")
)`,
	`CREATE UNIQUE INDEX "User_email_key" ON "User"("email")`,
	`CREATE UNIQUE INDEX "Session_sessionToken_key" ON "Session"("sessionToken")`,
	`CREATE UNIQUE INDEX "Authenticator_credentialID_key" ON "Authenticator"("credentialID")`,
	`ALTER TABLE "Account" ADD CONSTRAINT "Account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
	`ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
	`ALTER TABLE "Authenticator" ADD CONSTRAINT "Authenticator_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
}

// authJSPgDDL is the schema of Auth.js's pg adapter (@auth/pg-adapter) as
// its documentation gives it, written out by hand: SERIAL integer ids, no
// foreign keys, no unique constraints, no authenticators table, and no
// expires_in or authorization_details columns.
var authJSPgDDL = []string{
	`CREATE TABLE verification_token (
  identifier TEXT NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  token TEXT NOT NULL,
  PRIMARY KEY (identifier, token)
)`,
	`CREATE TABLE accounts (
  id SERIAL,
  "userId" INTEGER NOT NULL,
  type VARCHAR(255) NOT NULL,
  provider VARCHAR(255) NOT NULL,
  "providerAccountId" VARCHAR(255) NOT NULL,
  refresh_token TEXT,
  access_token TEXT,
  expires_at BIGINT,
  id_token TEXT,
  scope TEXT,
  session_state TEXT,
  token_type TEXT,
  PRIMARY KEY (id)
)`,
	`CREATE TABLE sessions (
  id SERIAL,
  "userId" INTEGER NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  "sessionToken" VARCHAR(255) NOT NULL,
  PRIMARY KEY (id)
)`,
	`CREATE TABLE users (
  id SERIAL,
  name VARCHAR(255),
  email VARCHAR(255),
  "emailVerified" TIMESTAMPTZ,
  image TEXT,
  PRIMARY KEY (id)
)`,
}

// prismaTimestamps are the options the README gives for Prisma's schema.
func prismaTimestamps() []Option {
	return []Option{
		WithTimestampColumns(TableUsers, "createdAt", "updatedAt"),
		WithTimestampColumns(TableAccounts, "createdAt", "updatedAt"),
		WithTimestampColumns(TableSessions, "createdAt", "updatedAt"),
	}
}

func execAll(t *testing.T, db *sql.DB, stmts []string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
}

// stamps reads a row's createdAt and updatedAt.
func stamps(t *testing.T, db *sql.DB, query string, args ...any) (created, updated time.Time) {
	t.Helper()
	var c, u rawTime
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&c, &u); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return c.t, u.t
}

// TestPrismaSchema runs every operation through the adapter on the tables
// Prisma creates for Auth.js's Prisma schema, on PostgreSQL. Without
// WithTimestampColumns every insert into User, Account or Session fails
// (updatedAt is NOT NULL with no default); with the README's options the
// adapter writes createdAt on insert and updatedAt on insert and update.
func TestPrismaSchema(t *testing.T) {
	ctx := context.Background()
	db := openPostgres(t, false)
	execAll(t, db.sqlDB, prismaPostgresDDL)

	t.Run("without_timestamp_columns", func(t *testing.T) {
		a := mustNew(t, db, WithNames(prismaNames("")))
		_, err := a.CreateUser(ctx, core.User{ID: "u0", Email: "u0@example.com"})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23502" || pe.ColumnName != "updatedAt" {
			t.Fatalf("createUser into Prisma's User without timestamp columns: %v; want the NOT NULL violation on updatedAt", err)
		}
	})

	t0 := time.Date(2031, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	now := t0
	// The AuthJSPrisma preset is prismaNames and prismaTimestamps.
	a := mustNew(t, db, AuthJSPrisma(), WithClock(func() time.Time { return now }))
	check := func(what, table, key string, arg any, wantCreated, wantUpdated time.Time) {
		t.Helper()
		c, u := stamps(t, db.sqlDB, `SELECT "createdAt", "updatedAt" FROM "`+table+`" WHERE "`+key+`" = $1`, arg)
		if !c.Equal(wantCreated) || !u.Equal(wantUpdated) {
			t.Errorf("%s: createdAt %v, updatedAt %v; want %v, %v", what, c, u, wantCreated, wantUpdated)
		}
	}
	exp := t0.Add(24 * time.Hour)

	// User.
	verified := t0.Add(-time.Hour)
	user := core.User{ID: "u1", Email: "ada@example.com", Name: ptr("Ada"), EmailVerified: &verified}
	if _, err := a.CreateUser(ctx, user); err != nil {
		t.Fatalf("createUser: %v", err)
	}
	check("createUser", "User", "id", "u1", t0, t0)
	if got, err := a.GetUser(ctx, "u1"); err != nil || got == nil || got.Email != user.Email || !got.EmailVerified.Equal(verified) {
		t.Errorf("getUser = %+v, %v", got, err)
	}
	if got, err := a.GetUserByEmail(ctx, user.Email); err != nil || got == nil || got.ID != "u1" {
		t.Errorf("getUserByEmail = %+v, %v", got, err)
	}
	t1 := t0.Add(time.Minute)
	now = t1
	if got, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Name: core.Set(ptr("Ada L."))}); err != nil || got == nil || *got.Name != "Ada L." {
		t.Fatalf("updateUser = %+v, %v", got, err)
	}
	check("updateUser", "User", "id", "u1", t0, t1)
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "nobody", Name: core.Set(ptr("X"))}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("updateUser of a missing user: %v, want ErrNotFound", err)
	}

	// Account.
	now = t0
	acc := core.Account{UserID: "u1", Type: core.AccountTypeOIDC, Provider: "github", ProviderAccountID: "gh1",
		AccessToken: ptr("at"), ExpiresAt: ptr(int64(1_900_000_000)), TokenType: ptr("bearer"), Scope: ptr("read")}
	if _, err := a.LinkAccount(ctx, acc); err != nil {
		t.Fatalf("linkAccount: %v", err)
	}
	check("linkAccount", "Account", "providerAccountId", "gh1", t0, t0)
	if got, err := a.GetAccount(ctx, "gh1", "github"); err != nil || got == nil || *got.AccessToken != "at" || *got.ExpiresAt != 1_900_000_000 {
		t.Errorf("getAccount = %+v, %v", got, err)
	}
	if got, err := a.GetUserByAccount(ctx, acc.Key()); err != nil || got == nil || got.ID != "u1" {
		t.Errorf("getUserByAccount = %+v, %v", got, err)
	}
	if _, err := a.LinkAccount(ctx, core.Account{UserID: "nobody", Type: core.AccountTypeOAuth, Provider: "p", ProviderAccountID: "x"}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("linkAccount of an unknown user: %v, want ErrNotFound", err)
	}
	if got, err := a.UnlinkAccount(ctx, acc.Key()); err != nil || got == nil || got.ProviderAccountID != "gh1" {
		t.Errorf("unlinkAccount = %+v, %v", got, err)
	}
	if got, err := a.GetAccount(ctx, "gh1", "github"); err != nil || got != nil {
		t.Errorf("getAccount after unlinkAccount = %+v, %v", got, err)
	}

	// Session.
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s1", UserID: "u1", Expires: exp}); err != nil {
		t.Fatalf("createSession: %v", err)
	}
	check("createSession", "Session", "sessionToken", "s1", t0, t0)
	if su, err := a.GetSessionAndUser(ctx, "s1"); err != nil || su == nil || su.User.ID != "u1" || !su.Session.Expires.Equal(exp) {
		t.Errorf("getSessionAndUser = %+v, %v", su, err)
	}
	now = t1
	if s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s1", Expires: core.Set(exp.Add(time.Hour))}); err != nil || s == nil || !s.Expires.Equal(exp.Add(time.Hour)) {
		t.Fatalf("updateSession = %+v, %v", s, err)
	}
	check("updateSession", "Session", "sessionToken", "s1", t0, t1)
	if s, err := a.DeleteSession(ctx, "s1"); err != nil || s == nil {
		t.Errorf("deleteSession = %+v, %v", s, err)
	}
	if su, err := a.GetSessionAndUser(ctx, "s1"); err != nil || su != nil {
		t.Errorf("getSessionAndUser after deleteSession = %+v, %v", su, err)
	}

	// VerificationToken (no timestamp columns in Prisma's model).
	vt := core.VerificationToken{Identifier: "ada@example.com", Token: "t1", Expires: exp}
	if _, err := a.CreateVerificationToken(ctx, vt); err != nil {
		t.Fatalf("createVerificationToken: %v", err)
	}
	if got, err := a.UseVerificationToken(ctx, vt.Key()); err != nil || got == nil || !got.Expires.Equal(exp) {
		t.Errorf("useVerificationToken = %+v, %v", got, err)
	}
	if got, err := a.UseVerificationToken(ctx, vt.Key()); err != nil || got != nil {
		t.Errorf("useVerificationToken a second time = %+v, %v", got, err)
	}

	// Authenticator (no timestamp columns either).
	au := core.Authenticator{CredentialID: "c1", UserID: "u1", ProviderAccountID: "gh1", CredentialPublicKey: "pk",
		Counter: 1, CredentialDeviceType: "singleDevice", CredentialBackedUp: true, Transports: ptr("usb")}
	if _, err := a.CreateAuthenticator(ctx, au); err != nil {
		t.Fatalf("createAuthenticator: %v", err)
	}
	if got, err := a.GetAuthenticator(ctx, "c1"); err != nil || got == nil || *got.Transports != "usb" {
		t.Errorf("getAuthenticator = %+v, %v", got, err)
	}
	if got, err := a.UpdateAuthenticatorCounter(ctx, "c1", 7); err != nil || got == nil || got.Counter != 7 {
		t.Errorf("updateAuthenticatorCounter = %+v, %v", got, err)
	}
	if list, err := a.ListAuthenticatorsByUserID(ctx, "u1"); err != nil || len(list) != 1 || list[0].Counter != 7 {
		t.Errorf("listAuthenticatorsByUserId = %+v, %v", list, err)
	}

	// deleteUser cascades through Prisma's foreign keys.
	if _, err := a.LinkAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s2", UserID: "u1", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.DeleteUser(ctx, "u1"); err != nil || got == nil || got.ID != "u1" {
		t.Fatalf("deleteUser = %+v, %v", got, err)
	}
	for _, table := range []string{"User", "Account", "Session", "Authenticator"} {
		var n int
		if err := db.sqlDB.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`"`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s after deleteUser: %d rows, %v", table, n, err)
		}
	}
}

// TestTimestampColumns checks WithTimestampColumns on every dialect and
// on the paths without RETURNING, on tables Migrate creates (with the
// columns): every table gets createdAt and updatedAt from the adapter's
// clock, to the millisecond.
func TestTimestampColumns(t *testing.T) {
	ctx := context.Background()
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			t0 := time.Date(2031, 5, 6, 7, 8, 9, 123_456_789, time.UTC)
			now := t0
			opts := append([]Option{WithClock(func() time.Time { return now })}, v.opts...)
			for _, tb := range []Table{TableUsers, TableAccounts, TableSessions, TableVerificationTokens, TableAuthenticators} {
				opts = append(opts, WithTimestampColumns(tb, "created_at", "updated_at"))
			}
			a, db := newAdapter(t, v.backend, false, opts...)
			raw := &rawView{db: db.sqlDB, dialect: v.backend}
			q := func(table, key string) string {
				ph := "?"
				if v.backend == "postgres" {
					ph = "$1"
				}
				return raw.quote(`SELECT "created_at", "updated_at" FROM "` + table + `" WHERE "` + key + `" = ` + ph)
			}
			check := func(what, table, key, arg string, wantCreated, wantUpdated time.Time) {
				t.Helper()
				c, u := stamps(t, db.sqlDB, q(table, key), arg)
				wc, wu := core.NormalizeTime(wantCreated), core.NormalizeTime(wantUpdated)
				if !c.Equal(wc) || !u.Equal(wu) {
					t.Errorf("%s: created_at %v, updated_at %v; want %v, %v", what, c, u, wc, wu)
				}
			}
			exp := t0.Add(time.Hour)
			if _, err := a.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com"}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.LinkAccount(ctx, core.Account{UserID: "u1", Type: core.AccountTypeOAuth, Provider: "p", ProviderAccountID: "a1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s1", UserID: "u1", Expires: exp}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t1", Expires: exp}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c1", UserID: "u1", ProviderAccountID: "a1",
				CredentialPublicKey: "k", CredentialDeviceType: "singleDevice"}); err != nil {
				t.Fatal(err)
			}
			check("createUser", "users", "id", "u1", t0, t0)
			check("linkAccount", "accounts", "providerAccountId", "a1", t0, t0)
			check("createSession", "sessions", "sessionToken", "s1", t0, t0)
			check("createVerificationToken", "verification_token", "token", "t1", t0, t0)
			check("createAuthenticator", "authenticators", "credentialID", "c1", t0, t0)

			t1 := t0.Add(90 * time.Second)
			now = t1
			if u, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Name: core.Set(ptr("N"))}); err != nil || u == nil || *u.Name != "N" {
				t.Fatalf("updateUser = %+v, %v", u, err)
			}
			if s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s1", Expires: core.Set(exp.Add(time.Minute))}); err != nil || s == nil ||
				!s.Expires.Equal(core.NormalizeTime(exp.Add(time.Minute))) {
				t.Fatalf("updateSession = %+v, %v", s, err)
			}
			if au, err := a.UpdateAuthenticatorCounter(ctx, "c1", 5); err != nil || au == nil || au.Counter != 5 {
				t.Fatalf("updateAuthenticatorCounter = %+v, %v", au, err)
			}
			check("updateUser", "users", "id", "u1", t0, t1)
			check("updateSession", "sessions", "sessionToken", "s1", t0, t1)
			check("updateAuthenticatorCounter", "authenticators", "credentialID", "c1", t0, t1)
			if u, err := a.GetUser(ctx, "u1"); err != nil || u == nil || *u.Name != "N" {
				t.Errorf("getUser = %+v, %v", u, err)
			}
		})
	}
}

// authJSPgNames are the names for Auth.js's pg schema: the defaults, less
// the columns and the table it lacks.
func authJSPgNames() Names {
	return Names{Authenticators: Omit, Factors: Omit, User: UserColumns{Username: Omit},
		Account: AccountColumns{ExpiresIn: Omit, AuthorizationDetails: Omit, Password: Omit}, Session: sessionColumnsOmitted()}
}

func count(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestAuthJSPgSchema runs the adapter on Auth.js's pg adapter schema
// (integer SERIAL ids, no foreign keys, no authenticators table) on
// PostgreSQL: lookups by an id that is not a number find nothing, writes
// of one are invalid input, and with WithoutForeignKeys the creates check
// the user and deleteUser deletes its sessions and accounts.
func TestAuthJSPgSchema(t *testing.T) {
	ctx := context.Background()
	db := openPostgres(t, false)
	execAll(t, db.sqlDB, authJSPgDDL)
	a := mustNew(t, db, WithNames(authJSPgNames()), WithoutForeignKeys())
	exp := time.Now().Add(time.Hour)

	t.Run("ids_that_are_not_numbers", func(t *testing.T) {
		for _, id := range []string{"not-a-number", "99999999999"} {
			if u, err := a.GetUser(ctx, id); err != nil || u != nil {
				t.Errorf("getUser(%q) = %v, %v; want nil, nil", id, u, err)
			}
			if u, err := a.DeleteUser(ctx, id); err != nil || u != nil {
				t.Errorf("deleteUser(%q) = %v, %v; want nil, nil", id, u, err)
			}
		}
		_, err := a.CreateUser(ctx, core.User{ID: "abc", Email: "abc@example.com"})
		if !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("createUser with id abc: %v, want ErrInvalidInput", err)
		}
		expectDriverCode(t, "postgres", err, "22P02", 0, 0)
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "abc", Expires: exp}); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("createSession for user abc: %v, want ErrInvalidInput", err)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "abc", Name: core.Set(ptr("X"))}); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("updateUser of user abc: %v, want ErrInvalidInput", err)
		}
		// The session inventory of an id the integer column cannot hold:
		// an unknown user.
		if list, err := a.ListSessionsByUserID(ctx, "abc"); err != nil || list == nil || len(list) != 0 {
			t.Errorf("listSessionsByUserId(abc) = %#v, %v; want an empty list", list, err)
		}
		if n, err := a.DeleteSessionsByUserID(ctx, "abc", ""); err != nil || n != 0 {
			t.Errorf("deleteSessionsByUserId(abc) = %d, %v; want 0, nil", n, err)
		}
		if a.KeepsSessionMetadata() {
			t.Error("KeepsSessionMetadata = true on Auth.js's pg schema")
		}
	})

	if _, err := a.CreateUser(ctx, core.User{ID: "1", Email: "one@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateUser(ctx, core.User{ID: "2", Email: "two@example.com"}); err != nil {
		t.Fatal(err)
	}

	t.Run("records_of_an_unknown_user", func(t *testing.T) {
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "orphan", UserID: "999", Expires: exp}); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("createSession for an unknown user: %v, want ErrNotFound", err)
		}
		if _, err := a.LinkAccount(ctx, core.Account{UserID: "999", Type: core.AccountTypeOAuth, Provider: "p", ProviderAccountID: "orphan"}); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("linkAccount for an unknown user: %v, want ErrNotFound", err)
		}
		if n := count(t, db.sqlDB, `SELECT count(*) FROM sessions`) + count(t, db.sqlDB, `SELECT count(*) FROM accounts`); n != 0 {
			t.Errorf("%d sessions and accounts stored for an unknown user", n)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s1", UserID: "1", Expires: exp}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s1", UserID: core.Set("999")}); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("updateSession moving a session to an unknown user: %v, want ErrNotFound", err)
		}
		if s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "missing", UserID: core.Set("999")}); err != nil || s != nil {
			t.Errorf("updateSession of a missing session to an unknown user = %v, %v; want nil, nil", s, err)
		}
		if s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s1", UserID: core.Set("2")}); err != nil || s == nil || s.UserID != "2" {
			t.Errorf("updateSession moving a session to user 2 = %+v, %v", s, err)
		}
		if s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s1", UserID: core.Set("1")}); err != nil || s == nil || s.UserID != "1" {
			t.Errorf("updateSession moving the session back = %+v, %v", s, err)
		}
	})

	t.Run("deleteUser_deletes_dependents", func(t *testing.T) {
		for _, s := range []core.Session{{SessionToken: "s2", UserID: "1", Expires: exp}, {SessionToken: "s3", UserID: "2", Expires: exp}} {
			if _, err := a.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		for _, acc := range []core.Account{{UserID: "1", Type: core.AccountTypeOAuth, Provider: "p", ProviderAccountID: "a1", Scope: ptr("s")},
			{UserID: "2", Type: core.AccountTypeOAuth, Provider: "p", ProviderAccountID: "a2"}} {
			if _, err := a.LinkAccount(ctx, acc); err != nil {
				t.Fatal(err)
			}
		}
		if su, err := a.GetSessionAndUser(ctx, "s2"); err != nil || su == nil || su.User.ID != "1" {
			t.Errorf("getSessionAndUser = %+v, %v", su, err)
		}
		if u, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: "p", ProviderAccountID: "a1"}); err != nil || u == nil || u.ID != "1" {
			t.Errorf("getUserByAccount = %+v, %v", u, err)
		}
		if u, err := a.DeleteUser(ctx, "1"); err != nil || u == nil || u.ID != "1" || u.Email != "one@example.com" {
			t.Fatalf("deleteUser = %+v, %v", u, err)
		}
		if n := count(t, db.sqlDB, `SELECT count(*) FROM sessions WHERE "userId" = 1`); n != 0 {
			t.Errorf("deleteUser left %d sessions", n)
		}
		if n := count(t, db.sqlDB, `SELECT count(*) FROM accounts WHERE "userId" = 1`); n != 0 {
			t.Errorf("deleteUser left %d accounts", n)
		}
		if n := count(t, db.sqlDB, `SELECT count(*) FROM sessions WHERE "userId" = 2`) + count(t, db.sqlDB, `SELECT count(*) FROM accounts WHERE "userId" = 2`); n != 2 {
			t.Errorf("user 2 has %d sessions and accounts after user 1's deletion, want 2", n)
		}
		if u, err := a.DeleteUser(ctx, "1"); err != nil || u != nil {
			t.Errorf("deleteUser again = %v, %v; want nil, nil", u, err)
		}
	})

	t.Run("no_authenticators_table", func(t *testing.T) {
		_, err1 := a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c", UserID: "2", ProviderAccountID: "a2", CredentialPublicKey: "k", CredentialDeviceType: "singleDevice"})
		_, err2 := a.GetAuthenticator(ctx, "c")
		_, err3 := a.ListAuthenticatorsByUserID(ctx, "2")
		_, err4 := a.UpdateAuthenticatorCounter(ctx, "c", 1)
		for i, err := range []error{err1, err2, err3, err4} {
			if !errors.Is(err, core.ErrMissingAdapterMethod) || !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("authenticator method %d without the table: %v, want ErrMissingAdapterMethod and ErrUnsupported", i, err)
			}
		}
	})

	// What WithoutForeignKeys is for: without it, this schema keeps the
	// records of unknown and deleted users.
	t.Run("without_WithoutForeignKeys", func(t *testing.T) {
		plain := mustNew(t, db, WithNames(authJSPgNames()))
		if _, err := plain.CreateSession(ctx, core.Session{SessionToken: "orphan", UserID: "999", Expires: exp}); err != nil {
			t.Errorf("createSession for an unknown user without foreign keys: %v", err)
		}
		if _, err := plain.DeleteUser(ctx, "2"); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db.sqlDB, `SELECT count(*) FROM sessions WHERE "userId" = 2`); n != 1 {
			t.Errorf("%d sessions of the deleted user 2 left, want the 1 this test expects", n)
		}
	})
}

// TestWithoutForeignKeysDDL checks that Migrate creates no foreign keys
// under WithoutForeignKeys, and that SQLite is accepted without them.
func TestWithoutForeignKeysDDL(t *testing.T) {
	ctx := context.Background()
	a, db := newAdapter(t, "postgres", false, WithoutForeignKeys())
	if n := count(t, db.sqlDB, `SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
		WHERE n.nspname = $1 AND c.contype = 'f'`, db.name); n != 0 {
		t.Errorf("Migrate with WithoutForeignKeys created %d foreign keys", n)
	}
	if strings.Contains(strings.Join(a.DDL(), "\n"), "FOREIGN KEY") {
		t.Error("DDL with WithoutForeignKeys has a FOREIGN KEY")
	}
	if ddl := strings.Join(mustNew(t, openSQLite(t, false), WithNames(Names{Authenticators: Omit})).DDL(), "\n"); strings.Contains(ddl, "authenticators") {
		t.Errorf("DDL with the authenticators table omitted creates it:\n%s", ddl)
	}

	sq := openSQLite(t, false)
	sq.sqlDB.SetMaxOpenConns(1)
	if _, err := sq.sqlDB.Exec("PRAGMA foreign_keys = OFF"); err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), sq.gdb, WithoutForeignKeys())
	if err != nil {
		t.Fatalf("New on SQLite without foreign keys, WithoutForeignKeys: %v", err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, core.Session{SessionToken: "s2", UserID: "nobody", Expires: time.Now().Add(time.Hour)}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("createSession for an unknown user: %v, want ErrNotFound", err)
	}
	if _, err := s.DeleteUser(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, sq.sqlDB, `SELECT count(*) FROM sessions`); n != 0 {
		t.Errorf("deleteUser left %d sessions", n)
	}
}

// TestConformanceWithoutForeignKeys runs the suite on tables without
// foreign keys (Migrate under WithoutForeignKeys), where the adapter
// checks users and cascades deleteUser itself.
func TestConformanceWithoutForeignKeys(t *testing.T) {
	t.Parallel()
	runVariant(t, "without_foreign_keys", backends, WithoutForeignKeys())
}

// TestWithoutForeignKeysRace races creates of a user's records against its
// deletion: with the adapter's own checks every create either precedes the
// deletion (and is deleted with the user) or fails with ErrNotFound, and
// nothing of the user is left.
func TestWithoutForeignKeysRace(t *testing.T) {
	ctx := context.Background()
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			a, db := newAdapter(t, v.backend, false, append([]Option{WithoutForeignKeys()}, v.opts...)...)
			raw := &rawView{db: db.sqlDB, dialect: v.backend}
			created, refused := 0, 0
			for round := range 6 {
				uid := fmt.Sprint("u", round)
				if _, err := a.CreateUser(ctx, core.User{ID: uid, Email: uid + "@example.com"}); err != nil {
					t.Fatal(err)
				}
				// Callers 0 to 5 create children of the user, caller 6
				// deletes it.
				var mu sync.Mutex
				coretest.Concurrently(7, func(g int) {
					if g == 6 {
						if _, err := a.DeleteUser(ctx, uid); err != nil {
							t.Errorf("deleteUser: %v", err)
						}
						return
					}
					key := fmt.Sprintf("%s-%d", uid, g)
					var err error
					switch g % 3 {
					case 0:
						_, err = a.CreateSession(ctx, core.Session{SessionToken: key, UserID: uid, Expires: time.Now().Add(time.Hour)})
					case 1:
						_, err = a.LinkAccount(ctx, core.Account{UserID: uid, Type: core.AccountTypeOAuth, Provider: "p", ProviderAccountID: key})
					case 2:
						_, err = a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: key, UserID: uid, ProviderAccountID: key,
							CredentialPublicKey: "k", CredentialDeviceType: "singleDevice"})
					}
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						created++
					case errors.Is(err, core.ErrNotFound):
						refused++
					default:
						t.Errorf("create racing with deleteUser: %v", err)
					}
				})
			}
			ss, err1 := raw.Sessions(ctx)
			as, err2 := raw.Accounts(ctx)
			aus, err3 := raw.Authenticators(ctx)
			if err := errors.Join(err1, err2, err3); err != nil {
				t.Fatal(err)
			}
			if n := len(ss) + len(as) + len(aus); n != 0 {
				t.Errorf("%d records of deleted users left: sessions %+v, accounts %+v, authenticators %+v", n, ss, as, aus)
			}
			t.Logf("%d creates before the deletion, %d refused after it", created, refused)
		})
	}
}
