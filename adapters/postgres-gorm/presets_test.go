package gormadapter

import (
	"context"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

func configOf(opts ...Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// TestPresetOptions checks that each preset sets what the README's table
// says, and the same as the hand-written options the older tests use.
func TestPresetOptions(t *testing.T) {
	omit := AccountColumns{ExpiresIn: Omit, AuthorizationDetails: Omit, Password: Omit}
	noUsername := UserColumns{Username: Omit}
	for _, tc := range []struct {
		name   string
		preset Option
		want   config
	}{
		{"AuthJSPg", AuthJSPg(), config{names: authJSPgNames(), noFK: true, serialIDs: true}},
		{"AuthJSDrizzle", AuthJSDrizzle(), config{names: Names{Users: "user", Accounts: "account", Sessions: "session",
			VerificationTokens: "verificationToken", Authenticators: "authenticator", Factors: Omit, User: noUsername, Account: omit, Session: sessionColumnsOmitted()}, sqliteTimes: SQLiteTimeUnixMilli}},
		{"AuthJSKysely", AuthJSKysely(), config{names: Names{Users: "User", Accounts: "Account", Sessions: "Session",
			VerificationTokens: "VerificationToken", Authenticators: Omit, Factors: Omit, User: noUsername, Account: omit, Session: sessionColumnsOmitted()}, sqliteTimes: SQLiteTimeISO8601}},
		{"AuthJSPrisma", AuthJSPrisma(), configOf(append([]Option{WithNames(prismaNames(""))}, prismaTimestamps()...)...)},
	} {
		if got := configOf(tc.preset); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s sets\n %+v\nwant\n %+v", tc.name, got, tc.want)
		}
	}
	// Options after a preset override it.
	if c := configOf(AuthJSDrizzle(), WithSQLiteTimes(SQLiteTimeText)); c.sqliteTimes != SQLiteTimeText || c.names.Users != "user" {
		t.Errorf("an option after the preset: %+v", c)
	}
}

func TestWithSQLiteTimesAndSerialIDsRefused(t *testing.T) {
	db := openSQLite(t, false)
	if _, err := New(context.Background(), db.gdb, WithSQLiteTimes(SQLiteTimeFormat(7))); err == nil {
		t.Error("New accepted an unknown SQLite time format")
	}
	if _, err := New(context.Background(), db.gdb, WithSerialUserIDs()); err == nil {
		t.Error("New accepted WithSerialUserIDs on SQLite")
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestNewUserID: UUIDs by default; the users.id sequence with
// WithSerialUserIDs, as AuthJSPg sets it, so that authport's ids and those
// the database gives Auth.js's users do not collide.
func TestNewUserID(t *testing.T) {
	ctx := context.Background()
	a, _ := newAdapter(t, "sqlite", false)
	seen := map[string]bool{}
	for range 100 {
		id, err := a.NewUserID(ctx)
		if err != nil || !uuidV4.MatchString(id) || seen[id] {
			t.Fatalf("NewUserID: %q, %v (want a new version 4 UUID)", id, err)
		}
		seen[id] = true
	}

	db := openPostgres(t, false)
	execAll(t, db.sqlDB, authJSPgDDL)
	pg := mustNew(t, db, AuthJSPg())
	defer pg.Close()
	// A user the database numbered (as Auth.js's createUser does), then
	// ids from NewUserID: all different, all accepted.
	var first int64
	if err := db.sqlDB.QueryRowContext(ctx, `INSERT INTO users (email) VALUES ('db@example.com') RETURNING id`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	prev := first
	for i := range 3 {
		id, err := pg.NewUserID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n <= prev {
			t.Fatalf("NewUserID %q after %d", id, prev)
		}
		prev = n
		if _, err := pg.CreateUser(ctx, core.User{ID: id, Email: "go" + id + "@example.com"}); err != nil {
			t.Fatalf("CreateUser %d with NewUserID's id: %v", i, err)
		}
	}
	var next int64
	if err := db.sqlDB.QueryRowContext(ctx, `INSERT INTO users (email) VALUES ('db2@example.com') RETURNING id`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next <= prev {
		t.Errorf("the database numbered a user %d after authport took %d", next, prev)
	}
	if err := pg.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.NewUserID(ctx); err == nil {
		t.Error("NewUserID after Close")
	}
}

// TestConformanceSQLiteTimeFormats runs the shared suite on SQLite with
// times stored as Unix milliseconds and as ISO 8601 text, and checks what
// is stored.
func TestConformanceSQLiteTimeFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    SQLiteTimeFormat
		want func(time.Time) string // as SQLite's quote() gives it
	}{
		{"unix_milli", SQLiteTimeUnixMilli, func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }},
		{"iso8601", SQLiteTimeISO8601, func(t time.Time) string { return "'" + t.UTC().Format("2006-01-02T15:04:05.000Z") + "'" }},
	} {
		conformance.Run(t, conformance.Harness{
			Name:     "sqlite_" + tc.name,
			Parallel: true, // each test has a file of its own
			New: func(t testing.TB) conformance.Fixture {
				a, db := newAdapter(t, "sqlite", false, WithSQLiteTimes(tc.f))
				return fixture(t, a, db, WithSQLiteTimes(tc.f))
			},
		})
		t.Run(tc.name+"/stored", func(t *testing.T) {
			ctx := context.Background()
			a, db := newAdapter(t, "sqlite", false, WithSQLiteTimes(tc.f))
			exp := time.Date(2031, 2, 3, 4, 5, 6, 789_000_000, time.UTC)
			if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: exp}); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := db.sqlDB.QueryRowContext(ctx, `SELECT quote(expires) FROM verification_token`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if want := tc.want(exp); got != want {
				t.Errorf("stored %#v, want %#v", got, want)
			}
		})
	}
}
