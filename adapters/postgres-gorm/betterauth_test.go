package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

// baRaw reads Better Auth's tables (the BetterAuth preset's, or with
// snake_case columns BetterAuthDrizzle's) with plain SQL of its own, and
// decodes them as the presets document: emailVerified true is the Unix
// epoch, a name of "" is none, an account's type follows its provider,
// accessTokenExpiresAt is seconds.
type baRaw struct {
	rawView
	col func(string) string
}

func newBARaw(a *Adapter, db *testDB, col func(string) string) *baRaw {
	n := a.names
	return &baRaw{rawView: rawView{db: db.sqlDB, dialect: db.dialect, data: true, names: &n}, col: col}
}

// q quotes the column names given in braces ({emailVerified}) after
// turning them into the schema's (r.col), and the table names as they are.
func (r *baRaw) q(query string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(query, '{')
		if i < 0 {
			b.WriteString(query)
			break
		}
		j := strings.IndexByte(query[i:], '}') + i
		b.WriteString(query[:i])
		name := query[i+1 : j]
		if !strings.HasPrefix(name, "!") {
			name = r.col(name)
		} else {
			name = name[1:]
		}
		if r.dialect == "mysql" {
			b.WriteString("`" + name + "`")
		} else {
			b.WriteString(`"` + name + `"`)
		}
		query = query[j+1:]
	}
	return b.String()
}

func baRows[T any](ctx context.Context, r *baRaw, query string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	out := []T{}
	rows, err := r.db.QueryContext(ctx, r.q(query))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (r *baRaw) Users(ctx context.Context) ([]core.User, error) {
	users, err := r.rawView.usersWith(ctx, r.q(`SELECT {id}, {email}, {emailVerified}, {name}, {image}, NULL`), func(verified any) (*time.Time, error) {
		var b sql.NullBool
		if err := b.Scan(verified); err != nil {
			return nil, err
		}
		if b.Bool {
			return new(time.Unix(0, 0).UTC()), nil
		}
		return nil, nil
	})
	for i := range users {
		if users[i].Name != nil && *users[i].Name == "" {
			users[i].Name = nil
		}
	}
	return users, err
}

func (r *baRaw) Accounts(ctx context.Context) ([]core.Account, error) {
	return baRows(ctx, r, `SELECT {userId}, {providerId}, {accountId}, {accessToken}, {accessTokenExpiresAt}, {idToken},
		{refreshToken}, {scope}, {password} FROM {!account}`, func(rows *sql.Rows) (core.Account, error) {
		var a core.Account
		var exp rawTime
		err := rows.Scan(&a.UserID, &a.Provider, &a.ProviderAccountID, &a.AccessToken, &exp, &a.IDToken, &a.RefreshToken, &a.Scope, &a.PasswordHash)
		a.Type = core.AccountTypeOAuth
		if a.Provider == core.PasswordProvider {
			a.Type = core.AccountTypeCredentials
		}
		if exp.valid {
			a.ExpiresAt = new(exp.t.Unix())
		}
		return a, err
	})
}

func (r *baRaw) Sessions(ctx context.Context) ([]core.Session, error) {
	return baRows(ctx, r, `SELECT {token}, {userId}, {expiresAt}, {createdAt}, {updatedAt}, {ipAddress}, {userAgent} FROM {!session}`,
		func(rows *sql.Rows) (core.Session, error) {
			var s core.Session
			var exp, created, updated rawTime
			var ip, ua sql.NullString
			err := rows.Scan(&s.SessionToken, &s.UserID, &exp, &created, &updated, &ip, &ua)
			s.Expires, s.CreatedAt, s.UpdatedAt, s.IPAddress, s.UserAgent = exp.t, created.t, updated.t, ip.String, ua.String
			return s, err
		})
}

func (r *baRaw) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	return baRows(ctx, r, `SELECT {identifier}, {value}, {expiresAt} FROM {!verification}`, func(rows *sql.Rows) (core.VerificationToken, error) {
		var v core.VerificationToken
		var exp rawTime
		err := rows.Scan(&v.Identifier, &v.Token, &exp)
		v.Expires = exp.t
		return v, err
	})
}

// Authenticators reads authport's authenticators table where one is named
// beside Better Auth's (the conformance rows): the presets map none.
func (r *baRaw) Authenticators(ctx context.Context) ([]core.Authenticator, error) {
	return r.rawView.Authenticators(ctx)
}

// baFixture is the conformance fixture of a Better Auth preset: the
// application columns added to its user table, the raw view baRaw.
func baFixture(t testing.TB, a *Adapter, db *testDB, col func(string) string, opts ...Option) conformance.Fixture {
	f := fixture(t, a, db, opts...)
	f.Raw = newBARaw(a, db, col)
	return f
}

// betterAuthMigrateDDL is what Better Auth's own migrate (better-auth
// 1.7's getMigrations, through its Kysely adapter) creates for its four
// core tables on each database: the column types of its getType, NOT NULL
// for required fields, CURRENT_TIMESTAMP defaults for the dates that have
// a default value, and no unique key on account (providerId, accountId)
// nor on verification (identifier, value). TestInteropBetterAuth checks
// that it is what the pinned better-auth's migrate runs (on MySQL/MariaDB
// the foreign keys are a column's inline REFERENCES, which MariaDB
// honours and MySQL ignores).
var betterAuthMigrateDDL = map[string][]string{
	"postgres": {
		`create table "user" ("id" text not null primary key, "name" text not null, "email" text not null unique, "emailVerified" boolean not null, "image" text, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz default CURRENT_TIMESTAMP not null)`,
		`create table "session" ("id" text not null primary key, "expiresAt" timestamptz not null, "token" text not null unique, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz not null, "ipAddress" text, "userAgent" text, "userId" text not null references "user" ("id") on delete cascade)`,
		`create table "account" ("id" text not null primary key, "accountId" text not null, "providerId" text not null, "userId" text not null references "user" ("id") on delete cascade, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" timestamptz, "refreshTokenExpiresAt" timestamptz, "scope" text, "password" text, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz not null)`,
		`create table "verification" ("id" text not null primary key, "identifier" text not null, "value" text not null, "expiresAt" timestamptz not null, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz default CURRENT_TIMESTAMP not null)`,
		`create index "session_userId_idx" on "session" ("userId")`,
		`create index "account_userId_idx" on "account" ("userId")`,
		`create index "verification_identifier_idx" on "verification" ("identifier")`,
	},
	"mysql": {
		"create table `user` (`id` varchar(36) not null primary key, `name` varchar(255) not null, `email` varchar(255) not null unique, `emailVerified` boolean not null, `image` text, `createdAt` timestamp(3) default CURRENT_TIMESTAMP(3) not null, `updatedAt` timestamp(3) default CURRENT_TIMESTAMP(3) not null)",
		"create table `session` (`id` varchar(36) not null primary key, `expiresAt` timestamp(3) not null, `token` varchar(255) not null unique, `createdAt` timestamp(3) default CURRENT_TIMESTAMP(3) not null, `updatedAt` timestamp(3) not null, `ipAddress` text, `userAgent` text, `userId` varchar(36) not null references `user` (`id`) on delete cascade)",
		"create table `account` (`id` varchar(36) not null primary key, `accountId` text not null, `providerId` text not null, `userId` varchar(36) not null references `user` (`id`) on delete cascade, `accessToken` text, `refreshToken` text, `idToken` text, `accessTokenExpiresAt` timestamp(3), `refreshTokenExpiresAt` timestamp(3), `scope` text, `password` text, `createdAt` timestamp(3) default CURRENT_TIMESTAMP(3) not null, `updatedAt` timestamp(3) not null)",
		"create table `verification` (`id` varchar(36) not null primary key, `identifier` varchar(255) not null, `value` text not null, `expiresAt` timestamp(3) not null, `createdAt` timestamp(3) default CURRENT_TIMESTAMP(3) not null, `updatedAt` timestamp(3) default CURRENT_TIMESTAMP(3) not null)",
		"create index `session_userId_idx` on `session` (`userId`)",
		"create index `account_userId_idx` on `account` (`userId`)",
		"create index `verification_identifier_idx` on `verification` (`identifier`)",
	},
	"sqlite": {
		`create table "user" ("id" text not null primary key, "name" text not null, "email" text not null unique, "emailVerified" integer not null, "image" text, "createdAt" date not null, "updatedAt" date not null)`,
		`create table "session" ("id" text not null primary key, "expiresAt" date not null, "token" text not null unique, "createdAt" date not null, "updatedAt" date not null, "ipAddress" text, "userAgent" text, "userId" text not null references "user" ("id") on delete cascade)`,
		`create table "account" ("id" text not null primary key, "accountId" text not null, "providerId" text not null, "userId" text not null references "user" ("id") on delete cascade, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" date, "refreshTokenExpiresAt" date, "scope" text, "password" text, "createdAt" date not null, "updatedAt" date not null)`,
		`create table "verification" ("id" text not null primary key, "identifier" text not null, "value" text not null, "expiresAt" date not null, "createdAt" date not null, "updatedAt" date not null)`,
		`create index "session_userId_idx" on "session" ("userId")`,
		`create index "account_userId_idx" on "account" ("userId")`,
		`create index "verification_identifier_idx" on "verification" ("identifier")`,
	},
}

// baArgs renders the ?-placeholders of query for db's dialect.
func baQuery(db *testDB, query string) string {
	if db.dialect == "mysql" {
		query = strings.ReplaceAll(query, `"`, "`")
	}
	if db.dialect != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// baTime is a time as Better Auth's Kysely adapter binds it: a Date on
// PostgreSQL and MySQL (time.Time here), ISO 8601 text on SQLite.
func baTime(db *testDB, t time.Time) any {
	if db.dialect == "sqlite" {
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return t.UTC()
}

var rowIDForm = regexp.MustCompile(`^[a-zA-Z0-9]{32}$`)

// TestBetterAuthTables checks the BetterAuth preset's mapping field by
// field, on each database, on the tables Migrate creates under it and on
// the tables Better Auth's own migrate creates (betterAuthMigrateDDL):
// what authport writes is what Better Auth reads (checked in the rows, as
// Better Auth's adapter reads them), and rows written as Better Auth
// writes them read back as the preset documents.
func TestBetterAuthTables(t *testing.T) {
	kysely := baSchema{col: func(s string) string { return s }}
	drizzle := baSchema{col: snakeCase, sqliteMillis: true}
	for _, backend := range backends {
		for _, made := range []string{"migrate", "betterauth", "drizzle_migrate", "drizzle"} {
			t.Run(backend+"/"+made, func(t *testing.T) {
				ctx := context.Background()
				db := openDB(t, backend, false)
				var a *Adapter
				sc, opt := kysely, BetterAuth()
				if strings.HasPrefix(made, "drizzle") {
					sc, opt = drizzle, BetterAuthDrizzle()
				}
				switch made {
				case "migrate", "drizzle_migrate":
					a = migrated(t, db, opt)
				default:
					ddl := betterAuthMigrateDDL[backend]
					if made == "drizzle" {
						ddl = betterAuthDrizzleDDL[backend]
					}
					execAll(t, db.sqlDB, ddl)
					// Better Auth's tables on MySQL have the server's
					// collation, which New refuses unless told.
					a = mustNew(t, db, opt, WithCaseInsensitiveCollation())
					// Migrate on Better Auth's tables leaves them usable
					// (it only adds what the preset names and they lack).
					if err := a.Migrate(ctx); err != nil {
						t.Fatalf("Migrate on Better Auth's tables: %v", err)
					}
				}
				testBetterAuthMapping(t, ctx, a, db, sc)
			})
		}
	}
}

// betterAuthDrizzleDDL is what drizzle-kit makes of the Drizzle schema
// Better Auth's CLI generates (snake_case columns; PostgreSQL timestamp
// without time zone, MySQL timestamp(3), SQLite integer milliseconds and
// integer booleans), its defaults left out (Better Auth writes every
// column).
var betterAuthDrizzleDDL = map[string][]string{
	"postgres": {
		`CREATE TABLE "user" ("id" text PRIMARY KEY NOT NULL, "name" text NOT NULL, "email" text NOT NULL UNIQUE, "email_verified" boolean DEFAULT false NOT NULL, "image" text, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp DEFAULT now() NOT NULL)`,
		`CREATE TABLE "session" ("id" text PRIMARY KEY NOT NULL, "expires_at" timestamp NOT NULL, "token" text NOT NULL UNIQUE, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp NOT NULL, "ip_address" text, "user_agent" text, "user_id" text NOT NULL REFERENCES "user"("id") ON DELETE cascade)`,
		`CREATE TABLE "account" ("id" text PRIMARY KEY NOT NULL, "account_id" text NOT NULL, "provider_id" text NOT NULL, "user_id" text NOT NULL REFERENCES "user"("id") ON DELETE cascade, "access_token" text, "refresh_token" text, "id_token" text, "access_token_expires_at" timestamp, "refresh_token_expires_at" timestamp, "scope" text, "password" text, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp NOT NULL)`,
		`CREATE TABLE "verification" ("id" text PRIMARY KEY NOT NULL, "identifier" text NOT NULL, "value" text NOT NULL, "expires_at" timestamp NOT NULL, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp DEFAULT now() NOT NULL)`,
	},
	"mysql": {
		"CREATE TABLE `user` (`id` varchar(36) NOT NULL PRIMARY KEY, `name` varchar(255) NOT NULL, `email` varchar(255) NOT NULL UNIQUE, `email_verified` boolean NOT NULL DEFAULT false, `image` text, `created_at` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), `updated_at` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))",
		"CREATE TABLE `session` (`id` varchar(36) NOT NULL PRIMARY KEY, `expires_at` timestamp(3) NOT NULL, `token` varchar(255) NOT NULL UNIQUE, `created_at` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), `updated_at` timestamp(3) NOT NULL, `ip_address` text, `user_agent` text, `user_id` varchar(36) NOT NULL, FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON DELETE cascade)",
		"CREATE TABLE `account` (`id` varchar(36) NOT NULL PRIMARY KEY, `account_id` text NOT NULL, `provider_id` text NOT NULL, `user_id` varchar(36) NOT NULL, `access_token` text, `refresh_token` text, `id_token` text, `access_token_expires_at` timestamp(3) NULL, `refresh_token_expires_at` timestamp(3) NULL, `scope` text, `password` text, `created_at` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), `updated_at` timestamp(3) NOT NULL, FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON DELETE cascade)",
		"CREATE TABLE `verification` (`id` varchar(36) NOT NULL PRIMARY KEY, `identifier` varchar(255) NOT NULL, `value` text NOT NULL, `expires_at` timestamp(3) NOT NULL, `created_at` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), `updated_at` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))",
	},
	"sqlite": {
		"CREATE TABLE `user` (`id` text PRIMARY KEY NOT NULL, `name` text NOT NULL, `email` text NOT NULL UNIQUE, `email_verified` integer DEFAULT false NOT NULL, `image` text, `created_at` integer NOT NULL, `updated_at` integer NOT NULL)",
		"CREATE TABLE `session` (`id` text PRIMARY KEY NOT NULL, `expires_at` integer NOT NULL, `token` text NOT NULL UNIQUE, `created_at` integer NOT NULL, `updated_at` integer NOT NULL, `ip_address` text, `user_agent` text, `user_id` text NOT NULL REFERENCES `user`(`id`) ON DELETE cascade)",
		"CREATE TABLE `account` (`id` text PRIMARY KEY NOT NULL, `account_id` text NOT NULL, `provider_id` text NOT NULL, `user_id` text NOT NULL REFERENCES `user`(`id`) ON DELETE cascade, `access_token` text, `refresh_token` text, `id_token` text, `access_token_expires_at` integer, `refresh_token_expires_at` integer, `scope` text, `password` text, `created_at` integer NOT NULL, `updated_at` integer NOT NULL)",
		"CREATE TABLE `verification` (`id` text PRIMARY KEY NOT NULL, `identifier` text NOT NULL, `value` text NOT NULL, `expires_at` integer NOT NULL, `created_at` integer NOT NULL, `updated_at` integer NOT NULL)",
	},
}

// baSchema is how a Better Auth schema names its columns and stores times
// on SQLite: camelCase and ISO text (its migrate), snake_case and integer
// milliseconds (its CLI's Drizzle schema).
type baSchema struct {
	col          func(string) string
	sqliteMillis bool
}

var quotedName = regexp.MustCompile(`"([A-Za-z]+)"`)

func testBetterAuthMapping(t *testing.T, ctx context.Context, a *Adapter, db *testDB, sc baSchema) {
	q := func(query string) string {
		return baQuery(db, quotedName.ReplaceAllStringFunc(query, func(m string) string { return `"` + sc.col(m[1:len(m)-1]) + `"` }))
	}
	baTime := func(_ *testDB, tm time.Time) any {
		if db.dialect == "sqlite" && sc.sqliteMillis {
			return tm.UnixMilli()
		}
		return baTime(db, tm)
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.sqlDB.ExecContext(ctx, q(query), args...); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
	}
	row := func(query string, args []any, dest ...any) {
		t.Helper()
		if err := db.sqlDB.QueryRowContext(ctx, q(query), args...).Scan(dest...); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)

	// Users: emailVerified a boolean, name NOT NULL, e-mail required.
	verified := now.Add(-time.Hour)
	u, err := a.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com", EmailVerified: &verified})
	if err != nil {
		t.Fatal(err)
	}
	epoch := time.Unix(0, 0).UTC()
	if u.EmailVerified == nil || !u.EmailVerified.Equal(epoch) || u.Name != nil {
		t.Errorf("createUser returned %+v; want emailVerified the epoch, no name", u)
	}
	var ev bool
	var name string
	row(`SELECT "emailVerified", "name" FROM "user" WHERE "id" = ?`, []any{"u1"}, &ev, &name)
	if !ev || name != "" {
		t.Errorf("stored emailVerified %v, name %q; want true, \"\"", ev, name)
	}
	if got, err := a.GetUser(ctx, "u1"); err != nil || got == nil || got.EmailVerified == nil || !got.EmailVerified.Equal(epoch) || got.Name != nil {
		t.Errorf("getUser = %+v, %v", got, err)
	}
	up, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", EmailVerified: core.Set[*time.Time](nil), Name: core.Set(new("Ada"))})
	if err != nil || up.EmailVerified != nil || up.Name == nil || *up.Name != "Ada" {
		t.Errorf("updateUser = %+v, %v", up, err)
	}
	row(`SELECT "emailVerified", "name" FROM "user" WHERE "id" = ?`, []any{"u1"}, &ev, &name)
	if ev || name != "Ada" {
		t.Errorf("stored after update: emailVerified %v, name %q; want false, Ada", ev, name)
	}
	if _, err := a.CreateUser(ctx, core.User{ID: "u2"}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("createUser without an e-mail address: %v; want ErrInvalidInput", err)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("")}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("updateUser removing the e-mail address: %v; want ErrInvalidInput", err)
	}
	// A user as Better Auth writes one.
	exec(`INSERT INTO "user" ("id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt") VALUES (?, ?, ?, ?, ?, ?, ?)`,
		"BaUser0000000000000000000000000a", "Grace", "grace@example.com", true, nil, baTime(db, now), baTime(db, now))
	g, err := a.GetUserByEmail(ctx, "grace@example.com")
	if err != nil || g == nil || g.ID != "BaUser0000000000000000000000000a" || g.EmailVerified == nil || !g.EmailVerified.Equal(epoch) || g.Name == nil || *g.Name != "Grace" {
		t.Fatalf("getUserByEmail of Better Auth's user = %+v, %v", g, err)
	}

	// Sessions: a generated id, token, metadata.
	exp := now.Add(24 * time.Hour)
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "tok-go", UserID: "u1", Expires: exp, IPAddress: "192.0.2.1", UserAgent: "go"}); err != nil {
		t.Fatal(err)
	}
	var sid string
	var created rawTime
	row(`SELECT "id", "createdAt" FROM "session" WHERE "token" = ?`, []any{"tok-go"}, &sid, &created)
	if !rowIDForm.MatchString(sid) || !created.valid {
		t.Errorf("session row id %q, createdAt %v; want 32 letters and digits, a time", sid, created)
	}
	exec(`INSERT INTO "session" ("id", "expiresAt", "token", "createdAt", "updatedAt", "ipAddress", "userAgent", "userId") VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		"BaSession000000000000000000000000"[:32], baTime(db, exp), "tok-ba", baTime(db, now), baTime(db, now), "198.51.100.7", "Mozilla/5.0", "BaUser0000000000000000000000000a")
	su, err := a.GetSessionAndUser(ctx, "tok-ba")
	if err != nil || su == nil || su.User.Email != "grace@example.com" || !su.Session.Expires.Equal(exp) {
		t.Fatalf("getSessionAndUser of Better Auth's session = %+v, %v", su, err)
	}
	list, err := a.ListSessionsByUserID(ctx, "BaUser0000000000000000000000000a")
	if err != nil || len(list) != 1 || list[0].IPAddress != "198.51.100.7" || list[0].UserAgent != "Mozilla/5.0" || !list[0].CreatedAt.Equal(now) {
		t.Errorf("listSessionsByUserId = %+v, %v", list, err)
	}

	// Accounts: the password account both sides use, an OAuth account's
	// expiry as a time, the type derived.
	hash := "0123456789abcdef0123456789abcdef:" + strings.Repeat("ab", 64)
	if _, err := a.LinkAccount(ctx, core.Account{UserID: "u1", Type: core.AccountTypeCredentials, Provider: core.PasswordProvider, ProviderAccountID: "u1", PasswordHash: &hash}); err != nil {
		t.Fatal(err)
	}
	var provider, accountID, aid, pw string
	row(`SELECT "id", "providerId", "accountId", "password" FROM "account" WHERE "userId" = ?`, []any{"u1"}, &aid, &provider, &accountID, &pw)
	if !rowIDForm.MatchString(aid) || provider != "credential" || accountID != "u1" || pw != hash {
		t.Errorf("stored password account: id %q, providerId %q, accountId %q, password %q", aid, provider, accountID, pw)
	}
	expSec := now.Add(time.Hour).Unix()
	acc, err := a.LinkAccount(ctx, core.Account{UserID: "u1", Type: core.AccountTypeOIDC, Provider: "google", ProviderAccountID: "g-1",
		AccessToken: new("at"), RefreshToken: new("rt"), IDToken: new("it"), Scope: new("openid email"), ExpiresAt: &expSec, TokenType: new("bearer")})
	if err != nil {
		t.Fatal(err)
	}
	if acc.Type != core.AccountTypeOAuth || acc.TokenType != nil {
		t.Errorf("linkAccount returned type %q, token type %v; want oauth (derived), nil (not kept)", acc.Type, acc.TokenType)
	}
	var stored rawTime
	row(`SELECT "accessTokenExpiresAt" FROM "account" WHERE "providerId" = ? AND "accountId" = ?`, []any{"google", "g-1"}, &stored)
	if !stored.valid || !stored.t.Equal(time.Unix(expSec, 0)) {
		t.Errorf("stored accessTokenExpiresAt %v; want %v", stored.t, time.Unix(expSec, 0).UTC())
	}
	// An account as Better Auth writes one (milliseconds in the expiry).
	baExp := now.Add(2*time.Hour + 789*time.Millisecond)
	exec(`INSERT INTO "account" ("id", "accountId", "providerId", "userId", "accessToken", "accessTokenExpiresAt", "scope", "createdAt", "updatedAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		"BaAccount00000000000000000000000", "gh-42", "github", "BaUser0000000000000000000000000a", "gho_x", baTime(db, baExp), "read:user", baTime(db, now), baTime(db, now))
	ga, err := a.GetAccount(ctx, "gh-42", "github")
	if err != nil || ga == nil || ga.Type != core.AccountTypeOAuth || ga.ExpiresAt == nil || *ga.ExpiresAt != baExp.Unix() || deref(ga.AccessToken) != "gho_x" {
		t.Errorf("getAccount of Better Auth's account = %+v, %v", ga, err)
	}
	pa, err := a.GetAccount(ctx, "u1", core.PasswordProvider)
	if err != nil || pa == nil || pa.Type != core.AccountTypeCredentials || deref(pa.PasswordHash) != hash {
		t.Errorf("getAccount of the password account = %+v, %v", pa, err)
	}
	if _, err := a.SwapPasswordHash(ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "u1"}, hash, "new-hash"); err != nil {
		t.Errorf("swapPasswordHash: %v", err)
	}

	// Verification values.
	if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "reset:ada", Token: "v-go", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	var vid string
	row(`SELECT "id" FROM "verification" WHERE "value" = ?`, []any{"v-go"}, &vid)
	if !rowIDForm.MatchString(vid) {
		t.Errorf("verification row id %q", vid)
	}
	long := `{"callbackURL":"/` + strings.Repeat("x", 400) + `"}` // Better Auth keeps JSON in value
	exec(`INSERT INTO "verification" ("id", "identifier", "value", "expiresAt", "createdAt", "updatedAt") VALUES (?, ?, ?, ?, ?, ?)`,
		"BaVerification000000000000000000", "state-1", long, baTime(db, exp), baTime(db, now), baTime(db, now))
	if v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "state-1", Token: long}); err != nil || v == nil || !v.Expires.Equal(exp) {
		t.Errorf("useVerificationToken of Better Auth's value = %+v, %v", v, err)
	}

	// deleteUser leaves nothing of the user.
	if _, err := a.DeleteUser(ctx, "BaUser0000000000000000000000000a"); err != nil {
		t.Fatal(err)
	}
	var n int
	row(`SELECT (SELECT COUNT(*) FROM "session" WHERE "userId" = ?) + (SELECT COUNT(*) FROM "account" WHERE "userId" = ?)`,
		[]any{"BaUser0000000000000000000000000a", "BaUser0000000000000000000000000a"}, &n)
	if n != 0 {
		t.Errorf("%d sessions and accounts of the deleted user left", n)
	}
}

// TestBetterAuthNames checks the column names of the two presets against
// Better Auth's schema: camelCase as its migrate makes them, snake_case
// as its CLI's Drizzle generator does (convertToSnakeCase).
func TestBetterAuthNames(t *testing.T) {
	for in, want := range map[string]string{
		"emailVerified": "email_verified", "accessTokenExpiresAt": "access_token_expires_at", "userId": "user_id",
		"credentialID": "credential_id", "id": "id", "ipAddress": "ip_address", "HTMLParser": "html_parser",
		"backupCodes2x": "backup_codes2x", "value": "value",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q; want %q", in, got, want)
		}
	}
	ba := configOf(BetterAuth())
	n := ba.names.withDefaults()
	for _, c := range []struct{ got, want string }{
		{n.Users, "user"}, {n.Sessions, "session"}, {n.Accounts, "account"}, {n.VerificationTokens, "verification"},
		{n.Authenticators, Omit}, {n.Factors, Omit}, {n.User.EmailVerified, "emailVerified"}, {n.User.Username, Omit},
		{n.Session.SessionToken, "token"}, {n.Session.Expires, "expiresAt"}, {n.Account.Provider, "providerId"},
		{n.Account.ProviderAccountID, "accountId"}, {n.Account.Type, Omit}, {n.Account.ExpiresAt, "accessTokenExpiresAt"},
		{n.Account.TokenType, Omit}, {n.Account.Password, "password"}, {n.VerificationToken.Token, "value"},
		{ba.stamps[TableSessions].id, "id"}, {ba.stamps[TableAccounts].id, "id"}, {ba.stamps[TableVerificationTokens].id, "id"},
		{ba.stamps[TableUsers].created, "createdAt"}, {ba.stamps[TableVerificationTokens].updated, "updatedAt"},
	} {
		if c.got != c.want {
			t.Errorf("BetterAuth names %q; want %q", c.got, c.want)
		}
	}
	if ba.sqliteTimes != SQLiteTimeISO8601 || !ba.shape.boolVerified || !ba.shape.requireEmail || !ba.shape.expiryTime {
		t.Errorf("BetterAuth config %+v", ba)
	}
	dz := configOf(BetterAuthDrizzle())
	m := dz.names.withDefaults()
	for _, c := range []struct{ got, want string }{
		{m.User.EmailVerified, "email_verified"}, {m.Session.UserID, "user_id"}, {m.Session.SessionToken, "token"},
		{m.Session.IPAddress, "ip_address"}, {m.Account.ProviderAccountID, "account_id"},
		{m.Account.ExpiresAt, "access_token_expires_at"}, {m.VerificationToken.Expires, "expires_at"},
		{dz.stamps[TableUsers].created, "created_at"}, {dz.shape.extraTimes[TableAccounts][0], "refresh_token_expires_at"},
	} {
		if c.got != c.want {
			t.Errorf("BetterAuthDrizzle names %q; want %q", c.got, c.want)
		}
	}
	if dz.sqliteTimes != SQLiteTimeUnixMilli {
		t.Errorf("BetterAuthDrizzle SQLite times %v", dz.sqliteTimes)
	}
}

// TestBetterAuthSQLiteForms checks how the presets store times and
// booleans in SQLite: ISO 8601 text and 0/1 as Better Auth's Kysely
// adapter writes them; INTEGER milliseconds for its Drizzle schema
// (timestamp_ms); and the column types Migrate gives them.
func TestBetterAuthSQLiteForms(t *testing.T) {
	ctx := context.Background()
	exp := time.Date(2031, 2, 3, 4, 5, 6, 789_000_000, time.UTC)
	for _, tc := range []struct {
		name              string
		opt               Option
		expires, verified string
		expiresType       string
	}{
		{"kysely", BetterAuth(), `SELECT quote("expiresAt"), typeof("expiresAt") FROM "session"`, `SELECT quote("emailVerified") FROM "user"`, "DATE"},
		{"drizzle", BetterAuthDrizzle(), `SELECT quote("expires_at"), typeof("expires_at") FROM "session"`, `SELECT quote("email_verified") FROM "user"`, "INTEGER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, db := newAdapter(t, "sqlite", false, tc.opt)
			if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com", EmailVerified: &exp}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: exp}); err != nil {
				t.Fatal(err)
			}
			var stored, typ, verified string
			if err := db.sqlDB.QueryRowContext(ctx, tc.expires).Scan(&stored, &typ); err != nil {
				t.Fatal(err)
			}
			want := "'2031-02-03T04:05:06.789Z'"
			if tc.name == "drizzle" {
				want = strconv.FormatInt(exp.UnixMilli(), 10)
			}
			if stored != want {
				t.Errorf("stored expiry %s (%s); want %s", stored, typ, want)
			}
			if err := db.sqlDB.QueryRowContext(ctx, tc.verified).Scan(&verified); err != nil || verified != "1" {
				t.Errorf("stored emailVerified %s, %v; want 1", verified, err)
			}
			ddl := strings.Join(a.DDL(), "\n")
			if !strings.Contains(ddl, " "+tc.expiresType+" NOT NULL") || !strings.Contains(ddl, " INTEGER NOT NULL") {
				t.Errorf("DDL without %s times and INTEGER booleans:\n%s", tc.expiresType, ddl)
			}
		})
	}
}

// TestBetterAuthStatementsPerOperation: on Better Auth's tables every
// operation runs the statements the README's table gives, as on
// authport's own schema (the row ids and timestamps go into the same
// INSERT; the derived type and the boolean cost no statement). The
// authenticators table is authport's, named beside them, so that every
// operation runs.
func TestBetterAuthStatementsPerOperation(t *testing.T) {
	withAuthenticators := func(c *config) { c.names.Authenticators = "authenticator" }
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			a, db := newAdapter(t, backend, true, BetterAuth(), withAuthenticators)
			runCounted(t, a, db.counter, expectedCounts(a.d.deleteReturning, a.d.updateReturning))
		})
	}
}

// TestAccountTypeOmit: an accounts table may lack the type column (Better
// Auth's), and the type is then derived from the provider; the other key
// columns stay required.
func TestAccountTypeOmit(t *testing.T) {
	n := Names{Account: AccountColumns{Type: Omit}}.withDefaults()
	if err := n.validate(); err != nil {
		t.Errorf("Type: Omit refused: %v", err)
	}
	for _, bad := range []AccountColumns{{Provider: Omit}, {ProviderAccountID: Omit}, {UserID: Omit}} {
		if err := (Names{Account: bad}).withDefaults().validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if got := derivedAccountType(core.PasswordProvider); got != core.AccountTypeCredentials {
		t.Errorf("derived type of %q = %q", core.PasswordProvider, got)
	}
	if got := derivedAccountType("github"); got != core.AccountTypeOAuth {
		t.Errorf("derived type of github = %q", got)
	}
	// On a table without the column, what linkAccount returns is what is
	// read back.
	ctx := context.Background()
	a, _ := newAdapter(t, "sqlite", false, WithNames(Names{Account: AccountColumns{Type: Omit}}))
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	linked, err := a.LinkAccount(ctx, core.Account{UserID: "u", Type: core.AccountTypeOIDC, Provider: "google", ProviderAccountID: "g"})
	if err != nil {
		t.Fatal(err)
	}
	read, err := a.GetAccount(ctx, "g", "google")
	if err != nil || read == nil || linked.Type != core.AccountTypeOAuth || read.Type != linked.Type {
		t.Errorf("linkAccount returned type %q, getAccount %+v, %v; want oauth both", linked.Type, read, err)
	}
}
