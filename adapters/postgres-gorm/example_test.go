package gormadapter_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// openExampleSQLite opens a new SQLite file of that name in a temporary
// folder, as an application opens its database with gorm, and returns a
// function that closes and removes it. SQLite must enforce foreign keys
// (deleteUser cascades through them): "_foreign_keys=on".
func openExampleSQLite(name string) (*gorm.DB, *sql.DB, func()) {
	dir, err := os.MkdirTemp("", "authport-example")
	if err != nil {
		log.Fatal(err)
	}
	dsn := "file:" + filepath.Join(dir, name) + "?_foreign_keys=on&_busy_timeout=5000&_journal_mode=WAL"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		log.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		log.Fatal(err)
	}
	return db, sqlDB, func() {
		_ = sqlDB.Close()
		_ = os.RemoveAll(dir)
	}
}

// openExampleAdapter opens the adapter, as Example does, over a new SQLite
// file of that name (see openExampleSQLite), and returns a function that
// closes both and removes the file.
func openExampleAdapter(name string) (*gormadapter.Adapter, func()) {
	db, _, done := openExampleSQLite(name)
	store, err := gormadapter.New(context.Background(), db)
	if err != nil {
		log.Fatal(err)
	}
	return store, func() {
		_ = store.Close()
		done()
	}
}

// Example opens SQLite (no server needed; PostgreSQL and MySQL work the
// same way with their gorm dialectors), creates the schema, and stores and
// reads back a user and a session.
func Example() {
	db, _, done := openExampleSQLite("auth.db")
	defer done()

	ctx := context.Background()
	store, err := gormadapter.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	name := "Ada Lovelace"
	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com", Name: &name}); err != nil {
		log.Fatal(err)
	}
	expires := time.Date(2099, 1, 2, 3, 4, 5, 678_999_999, time.UTC)
	if _, err := store.CreateSession(ctx, core.Session{SessionToken: "cookie-value", UserID: "u1", Expires: expires}); err != nil {
		log.Fatal(err)
	}
	su, err := store.GetSessionAndUser(ctx, "cookie-value")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(su.User.Email, *su.User.Name, su.Session.Expires.Format(time.RFC3339Nano))

	// Deleting the user deletes its sessions with it.
	if _, err := store.DeleteUser(ctx, "u1"); err != nil {
		log.Fatal(err)
	}
	su, err = store.GetSessionAndUser(ctx, "cookie-value")
	fmt.Println(su, err)
	// Output:
	// ada@example.com Ada Lovelace 2099-01-02T03:04:05.678Z
	// <nil> <nil>
}

// ExampleAuthJSDrizzle opens SQLite tables made as Auth.js's Drizzle adapter
// makes them (here from the shipped SQL drizzle-kit generates of its
// default schema) with the matching preset: names, and times stored as
// INTEGER milliseconds, as drizzle stores them.
func ExampleAuthJSDrizzle() {
	db, sqlDB, done := openExampleSQLite("shared.db")
	defer done()

	ctx := context.Background()
	ddl, err := os.ReadFile("schema/authjs/drizzle-sqlite.sql")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(ctx, string(ddl)); err != nil { // go-sqlite3 runs every statement
		log.Fatal(err)
	}

	store, err := gormadapter.New(ctx, db, gormadapter.AuthJSDrizzle())
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	id, err := store.NewUserID(ctx) // a random UUID, as drizzle makes
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.CreateUser(ctx, core.User{ID: id, Email: "ada@example.com"}); err != nil {
		log.Fatal(err)
	}
	expires := time.Date(2099, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	if _, err := store.CreateSession(ctx, core.Session{SessionToken: "cookie-value", UserID: id, Expires: expires}); err != nil {
		log.Fatal(err)
	}
	var stored int64
	if err := sqlDB.QueryRowContext(ctx, `SELECT expires FROM session`).Scan(&stored); err != nil {
		log.Fatal(err)
	}
	fmt.Println(stored == expires.UnixMilli())
	// Output:
	// true
}

// ExampleBetterAuth shares a Better Auth app's tables (here created by
// Migrate under the preset; the app's own `npx auth migrate` makes the
// same): the user's emailVerified is Better Auth's boolean, the session
// gets a row id as Better Auth makes them, and times on SQLite are the ISO
// 8601 text Better Auth's Kysely adapter writes.
func ExampleBetterAuth() {
	db, sqlDB, done := openExampleSQLite("betterauth.db")
	defer done()

	ctx := context.Background()
	store, err := gormadapter.New(ctx, db, gormadapter.BetterAuth())
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	verified := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	u, err := store.CreateUser(ctx, core.User{ID: "user-1", Email: "ada@example.com", EmailVerified: &verified})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.EmailVerified.Unix()) // true reads as the Unix epoch: verified, when unknown
	expires := time.Date(2099, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	if _, err := store.CreateSession(ctx, core.Session{SessionToken: "cookie-value", UserID: "user-1", Expires: expires}); err != nil {
		log.Fatal(err)
	}
	var emailVerified int
	var id, stored string
	if err := sqlDB.QueryRowContext(ctx, `SELECT u."emailVerified", s."id", s."expiresAt" FROM "session" s JOIN "user" u ON u."id" = s."userId"`).
		Scan(&emailVerified, &id, &stored); err != nil {
		log.Fatal(err)
	}
	fmt.Println(emailVerified, len(id), stored)
	// A user without an e-mail address has no room in Better Auth's table.
	_, err = store.CreateUser(ctx, core.User{ID: "user-2"})
	fmt.Println(errors.Is(err, core.ErrInvalidInput))
	// Output:
	// 0
	// 1 32 2099-01-02T03:04:05.678Z
	// true
}

// ExampleAdapter_NewUserID lets the adapter make the ids of new users: with
// WithSerialUserIDs (the AuthJSPg preset) the next value of the users.id
// sequence, elsewhere a random UUID, as here.
func ExampleAdapter_NewUserID() {
	store, done := openExampleAdapter("ids.db") // as Example opens it
	defer done()

	cfg := auth.Config{
		Adapter:        store,
		GenerateUserID: func() (string, error) { return store.NewUserID(context.Background()) },
	}
	id, err := cfg.GenerateUserID() // what auth.New's sign-ins call for a new user
	fmt.Println(len(id), err)
	// Output:
	// 36 <nil>
}

// ExampleWithFactorsTable adds a table of second factors to tables Auth.js's
// Drizzle adapter made (which has none): Migrate creates it beside them,
// and the factors go with their user. A swap is a compare-and-set on the
// stored secret and step, so a one-time code is accepted once.
func ExampleWithFactorsTable() {
	db, sqlDB, done := openExampleSQLite("factors.db")
	defer done()

	ctx := context.Background()
	ddl, err := os.ReadFile("schema/authjs/drizzle-sqlite.sql")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(ctx, string(ddl)); err != nil {
		log.Fatal(err)
	}
	store, err := gormadapter.New(ctx, db, gormadapter.AuthJSDrizzle(), gormadapter.WithFactorsTable("factor"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil { // creates the factor table
		log.Fatal(err)
	}

	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com"}); err != nil {
		log.Fatal(err)
	}
	totp := core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP, Name: "Phone",
		Secret: []byte("sealed key"), CreatedAt: time.Now()}
	if _, err := store.CreateFactor(ctx, totp); err != nil {
		log.Fatal(err)
	}
	used := totp
	used.Step, used.LastUsedAt = 57_000_000, time.Now()
	_, first := store.SwapFactor(ctx, totp, used)
	_, second := store.SwapFactor(ctx, totp, used) // the same code again
	fmt.Println(first, errors.Is(second, core.ErrFactorChanged))

	if _, err := store.DeleteUser(ctx, "u1"); err != nil {
		log.Fatal(err)
	}
	left, err := store.ListFactorsByUserID(ctx, "u1")
	fmt.Println(len(left), err)
	// Output:
	// <nil> true
	// 0 <nil>
}
