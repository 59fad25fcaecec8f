package gormadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/authport/authport/core"
	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// TestDatabaseRejections checks that the driver's own error codes reach the
// caller as the core errors, with the driver error still in the chain, and
// that nothing was stored.
func TestDatabaseRejections(t *testing.T) {
	ctx := context.Background()
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			a, _ := newAdapter(t, backend, false)
			st := core.NewStore(a)
			u := core.User{ID: "u1", Email: "a@example.com"}
			if _, err := a.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}

			// Unique violation, as reported by the database.
			_, err := st.CreateUser(ctx, core.User{ID: "u2", Email: "a@example.com"})
			if !errors.Is(err, core.ErrAlreadyExists) || !strings.HasPrefix(err.Error(), "createUser: ") {
				t.Errorf("duplicate e-mail: %v, want createUser: … ErrAlreadyExists", err)
			}
			expectDriverCode(t, backend, err, "23505", 1062, 2067)

			// Foreign key violation: an account of a user that does not exist.
			_, err = st.LinkAccount(ctx, core.Account{UserID: "nobody", Provider: "p", Type: core.AccountTypeOIDC, ProviderAccountID: "x"})
			if !errors.Is(err, core.ErrNotFound) || !strings.HasPrefix(err.Error(), "linkAccount: ") {
				t.Errorf("account of an unknown user: %v, want linkAccount: … ErrNotFound", err)
			}
			expectDriverCode(t, backend, err, "23503", 1452, 787)

			// A session moved to an unknown user.
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u1", Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			_, err = a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", UserID: core.Set("nobody")})
			if !errors.Is(err, core.ErrNotFound) {
				t.Errorf("session moved to an unknown user: %v, want ErrNotFound", err)
			}

			// Invalid UTF-8 is refused (by core.Store) before the database
			// sees it, on every dialect.
			_, err = st.CreateUser(ctx, core.User{ID: "u3", Email: "bad\xffutf8@example.com"})
			var ie *core.InputError
			if !errors.Is(err, core.ErrInvalidInput) || !errors.As(err, &ie) || ie.Field != "email" {
				t.Errorf("invalid UTF-8 e-mail: %v, want an InputError on email", err)
			}

			switch backend {
			case "postgres":
				// PostgreSQL text cannot hold NUL: 22021.
				_, err = a.CreateUser(ctx, core.User{ID: "u4", Email: "nul@example.com", Name: ptr("nul\x00byte")})
				if !errors.Is(err, core.ErrInvalidInput) {
					t.Errorf("NUL byte: %v, want ErrInvalidInput", err)
				}
				expectDriverCode(t, backend, err, "22021", 0, 0)
			case "mysql":
				// Too long for VARCHAR(255) / TEXT (strict mode): 1406.
				_, err = a.CreateUser(ctx, core.User{ID: "u4", Email: strings.Repeat("x", 300) + "@example.com"})
				if !errors.Is(err, core.ErrInvalidInput) {
					t.Errorf("300-character e-mail: %v, want ErrInvalidInput", err)
				}
				expectDriverCode(t, backend, err, "", 1406, 0)
				_, err = a.CreateUser(ctx, core.User{ID: "u5", Email: "long@example.com", Name: ptr(strings.Repeat("x", 70000))})
				if !errors.Is(err, core.ErrInvalidInput) {
					t.Errorf("70000-byte name: %v, want ErrInvalidInput", err)
				}
			case "sqlite":
				// SQLite holds NUL and long strings: they round trip.
				name := "nul\x00byte" + strings.Repeat("x", 70000)
				if _, err := a.CreateUser(ctx, core.User{ID: "u4", Email: "nul@example.com", Name: &name}); err != nil {
					t.Fatalf("NUL byte on SQLite: %v", err)
				}
				got, err := a.GetUser(ctx, "u4")
				if err != nil || got == nil || got.Name == nil || *got.Name != name {
					t.Errorf("NUL byte on SQLite did not round trip: %v", err)
				}
			}
			users, err := (&rawView{db: a.db, dialect: backend}).Users(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if backend == "sqlite" {
				want = 2
			}
			if len(users) != want {
				t.Errorf("%d users stored, want %d: a rejected write stored something", len(users), want)
			}
		})
	}
}

// expectDriverCode checks that err carries the driver's error with the
// code for its backend (0 or "" to skip a backend).
func expectDriverCode(t *testing.T, backend string, err error, pgCode string, myCode uint16, sqliteExt int) {
	t.Helper()
	switch backend {
	case "postgres":
		var pe *pgconn.PgError
		if pgCode != "" && (!errors.As(err, &pe) || pe.Code != pgCode) {
			t.Errorf("error %v does not carry PostgreSQL code %s", err, pgCode)
		}
	case "mysql":
		var me *mysqldriver.MySQLError
		if myCode != 0 && (!errors.As(err, &me) || me.Number != myCode) {
			t.Errorf("error %v does not carry MySQL error %d", err, myCode)
		}
	case "sqlite":
		if code, ok := sqliteCode(err); sqliteExt != 0 && (!ok || code != sqliteExt) {
			t.Errorf("error %v carries SQLite code %d (found %v), want %d", err, code, ok, sqliteExt)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestNew checks the constructor's refusals and the names options.
func TestNew(t *testing.T) {
	if _, err := New(context.Background(), nil); err == nil {
		t.Error("New(context.Background(), nil) gave no error")
	}
	db := openSQLite(t, false)
	if _, err := New(context.Background(), db.gdb, WithNames(Names{Users: "t", Accounts: "t"})); err == nil {
		t.Error("two tables with one name gave no error")
	}
	if _, err := New(context.Background(), db.gdb, WithNames(Names{User: UserColumns{Email: Omit}})); err == nil {
		t.Error("an omitted users.email gave no error")
	}
	if _, err := New(context.Background(), db.gdb, WithNames(Names{Users: "a..b"})); err == nil {
		t.Error("an empty schema part gave no error")
	}
	for _, tc := range []struct {
		what string
		opts []Option
	}{
		{"an unknown table", []Option{WithTimestampColumns(Table(9), "c", "u")}},
		{"a timestamp column named like another column", []Option{WithTimestampColumns(TableUsers, "created", "email")}},
		{"created and updated with one name", []Option{WithTimestampColumns(TableSessions, "ts", "ts")}},
		{"a timestamp column named Omit", []Option{WithTimestampColumns(TableSessions, Omit, "")}},
		{"timestamps for an omitted table", []Option{WithNames(Names{Authenticators: Omit}),
			WithTimestampColumns(TableAuthenticators, "", "updated")}},
	} {
		if _, err := New(context.Background(), db.gdb, tc.opts...); err == nil {
			t.Errorf("%s gave no error", tc.what)
		}
	}
	if _, err := New(context.Background(), db.gdb, WithTimestampColumns(TableUsers, "", "updatedAt"), WithNames(Names{Authenticators: Omit})); err != nil {
		t.Errorf("an updated-only timestamp column and an omitted authenticators table: %v", err)
	}
	a := mustNew(t, db)
	if a.Dialect() != "sqlite" || a.Names() != DefaultNames() {
		t.Errorf("Dialect() = %q, Names() = %+v", a.Dialect(), a.Names())
	}
	// SQLite without foreign keys is refused: deleteUser would not cascade.
	db.sqlDB.SetMaxOpenConns(1)
	if _, err := db.sqlDB.Exec("PRAGMA foreign_keys = OFF"); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), db.gdb); err == nil || !strings.Contains(err.Error(), "foreign keys") {
		t.Errorf("New on SQLite without foreign keys: %v", err)
	}
}

// TestClockAndPurge checks that expiry follows the adapter's clock
// (WithClock) and that PurgeExpired deletes exactly what has expired.
func TestClockAndPurge(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	a, db := newAdapter(t, "sqlite", false, WithClock(func() time.Time { return clock() }))
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	// s0 and s2 expire first; s0 is read (and so removed on access, SPEC
	// §3), s2 is left to PurgeExpired.
	for i, d := range []time.Duration{time.Hour, 3 * time.Hour, time.Hour} {
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprint("s", i), UserID: "u", Expires: now.Add(d)}); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			continue
		}
		if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "u@example.com", Token: fmt.Sprint("t", i), Expires: now.Add(d)}); err != nil {
			t.Fatal(err)
		}
	}
	later := now.Add(2 * time.Hour)
	clock = func() time.Time { return later }
	if su, err := a.GetSessionAndUser(ctx, "s0"); err != nil || su != nil {
		t.Errorf("session expired by the clock = %+v, %v; want nil", su, err)
	}
	if su, err := a.GetSessionAndUser(ctx, "s1"); err != nil || su == nil {
		t.Errorf("live session = %+v, %v", su, err)
	}
	res, err := a.PurgeExpired(ctx)
	if err != nil || res.Sessions != 1 || res.VerificationTokens != 1 {
		t.Errorf("PurgeExpired = %+v, %v; want 1 session and 1 token", res, err)
	}
	raw := &rawView{db: db.sqlDB, dialect: "sqlite"}
	ss, _ := raw.Sessions(ctx)
	vs, _ := raw.VerificationTokens(ctx)
	if len(ss) != 1 || ss[0].SessionToken != "s1" || len(vs) != 1 || vs[0].Token != "t1" {
		t.Errorf("after purge: sessions %+v, tokens %+v; want s1 and t1 only", ss, vs)
	}
	if v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "u@example.com", Token: "t1"}); err != nil || v == nil {
		t.Errorf("live token = %+v, %v", v, err)
	}
}

// TestMySQLTimeSettings checks times round trip in UTC to the millisecond
// whatever the DSN says: parseTime off (times arrive as text, in the
// default loc UTC) and loc set to a zone far from UTC.
func TestMySQLTimeSettings(t *testing.T) {
	ctx := context.Background()
	tokyo, err := time.LoadLocation("Asia/Tokyo") // from time/tzdata if the system has none
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		parseTime bool
		loc       *time.Location
	}{{"parseTime_off", false, time.UTC}, {"loc_Asia_Tokyo", true, tokyo}} {
		t.Run(tc.name, func(t *testing.T) {
			db := openMySQLWith(t, false, tc.parseTime, tc.loc)
			a := migrated(t, db)
			verified := time.Date(2031, 3, 14, 15, 9, 26, 535897932, time.FixedZone("UTC+5:30", 5*3600+1800))
			want := core.NormalizeTime(verified)
			if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com", EmailVerified: &verified}); err != nil {
				t.Fatal(err)
			}
			expires := time.Now().Add(time.Hour)
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: expires}); err != nil {
				t.Fatal(err)
			}
			su, err := a.GetSessionAndUser(ctx, "s")
			if err != nil || su == nil {
				t.Fatalf("getSessionAndUser = %v, %v", su, err)
			}
			got := *su.User.EmailVerified
			if !got.Equal(want) || got.Location() != time.UTC || got.Nanosecond()%int(time.Millisecond) != 0 {
				t.Errorf("emailVerified = %v, want %v in UTC", got, want)
			}
			if e := su.Session.Expires; !e.Equal(core.NormalizeTime(expires)) || e.Location() != time.UTC {
				t.Errorf("expires = %v, want %v in UTC", e, core.NormalizeTime(expires))
			}
			res, err := a.PurgeExpired(ctx)
			if err != nil || res.Sessions != 0 {
				t.Errorf("PurgeExpired of a live session = %+v, %v", res, err)
			}
		})
	}
}

// MySQLError has the name of go-sql-driver/mysql's error type and its
// Number field, in another package: the adapter must not take it for a
// MySQL error.
type MySQLError struct{ Number uint16 }

func (*MySQLError) Error() string { return "not a driver error" }

// TestClassifyDriverErrors checks, without a database, that each driver's
// error type is recognised by its shape (the adapter imports no driver),
// however deeply it is wrapped, and that look-alikes are not.
func TestClassifyDriverErrors(t *testing.T) {
	sqliteErr := sqlite3.Error{Code: sqlite3.ErrConstraint, ExtendedCode: sqlite3.ErrConstraintUnique}
	for _, tc := range []struct {
		dialect string
		err     error
		want    errKind
	}{
		{"postgres", &pgconn.PgError{Code: "23505"}, kindExists},
		{"postgres", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23503"}), kindNotFound},
		{"postgres", errors.Join(errors.New("rollback"), &pgconn.PgError{Code: "22021"}), kindInvalid},
		{"postgres", &pgconn.PgError{Code: "40001"}, kindOther},
		{"mysql", &mysqldriver.MySQLError{Number: 1062}, kindExists},
		{"mysql", fmt.Errorf("insert: %w", &mysqldriver.MySQLError{Number: 1452}), kindNotFound},
		{"mysql", errors.Join(errors.New("rollback"), fmt.Errorf("x: %w", &mysqldriver.MySQLError{Number: 1406})), kindInvalid},
		{"mysql", &mysqldriver.MySQLError{Number: 1213}, kindOther}, // deadlock
		{"mysql", &MySQLError{Number: 1062}, kindOther},
		{"mysql", errors.New("Error 1062: Duplicate entry"), kindOther},
		{"sqlite", sqliteErr, kindExists},
		{"sqlite", fmt.Errorf("insert: %w", sqlite3.Error{Code: sqlite3.ErrConstraint, ExtendedCode: sqlite3.ErrConstraintForeignKey}), kindNotFound},
		{"sqlite", sqlite3.Error{Code: sqlite3.ErrTooBig, ExtendedCode: sqlite3.ErrNoExtended(sqlite3.ErrTooBig)}, kindInvalid},
	} {
		a := &Adapter{d: dialect{name: tc.dialect}}
		if got := a.classify(tc.err); got != tc.want {
			t.Errorf("%s: classify(%v) = %d, want %d", tc.dialect, tc.err, got, tc.want)
		}
	}
	if n, ok := mysqlNumber(fmt.Errorf("w: %w", &mysqldriver.MySQLError{Number: 1366})); !ok || n != 1366 {
		t.Errorf("mysqlNumber = %d, %v; want 1366, true", n, ok)
	}
	if !keyUnusable(fmt.Errorf("w: %w", &pgconn.PgError{Code: "22P02"})) || keyUnusable(&pgconn.PgError{Code: "23505"}) {
		t.Error("keyUnusable does not read the SQLSTATE through the wrapping")
	}
}
