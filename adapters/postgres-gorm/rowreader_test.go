package gormadapter_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/postgres-gorm/pgxread"
	"github.com/authport/authport/core"
	"gorm.io/gorm"
)

// TestConformancePgxRead runs the suite on PostgreSQL with sessions read
// through pgxread (WithRowReader).
func TestConformancePgxRead(t *testing.T) {
	t.Parallel()
	gormadapter.RunVariant(t, "pgxread", []string{"postgres"}, gormadapter.WithRowReader(pgxread.New()))
}

// TestRowReaderReadsAlike reads the sessions of users of several shapes
// (NULL name, image and emailVerified; all set, with characters that need
// escaping; application columns) through pgxread and through database/sql,
// two adapters on the same tables, and wants the same records, on pgx's
// extended protocol and its simple one (PgBouncer's transaction mode), on
// authport's tables and on Better Auth's (a boolean emailVerified, a NOT
// NULL name whose "" is no name). A session stored with an infinite expiry
// is an error on both paths, an unknown token none, and a token
// PostgreSQL cannot take the same on both.
func TestRowReaderReadsAlike(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		params map[string]string
		opts   []gormadapter.Option
	}{
		{"extended", nil, nil},
		{"simple_protocol", map[string]string{"default_query_exec_mode": "simple_protocol"}, nil},
		{"betterauth", nil, []gormadapter.Option{gormadapter.BetterAuth()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			gdb, sqlDB := gormadapter.OpenTestDB(t, "postgres", c.params)
			viaSQL := newAdapter(t, gdb, c.opts...)
			if err := viaSQL.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			betterAuth := c.name == "betterauth"
			if !betterAuth {
				// An application column: the row's extra cells.
				if _, err := sqlDB.ExecContext(ctx, `ALTER TABLE users ADD COLUMN plan text`); err != nil {
					t.Fatal(err)
				}
			}
			viaPgx := newAdapter(t, gdb, append(c.opts, gormadapter.WithRowReader(pgxread.New()))...)
			verified := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
			if betterAuth {
				verified = time.Unix(0, 0).UTC() // a boolean there: true reads as the epoch
			}
			exp := core.NormalizeTime(time.Now().Add(time.Hour))
			name, image := `Zoë "Q" \ <b>`, "https://x.example/a.png"
			users := []core.User{
				{ID: "u1", Email: "u1@example.com"},
				{ID: "u2", Email: "u2@example.com", Name: &name, Image: &image, EmailVerified: &verified},
			}
			if !betterAuth {
				users = append(users, core.User{ID: "u3", Email: "u3@example.com", Data: map[string]json.RawMessage{"plan": json.RawMessage(`"pro"`)}})
			}
			for i, u := range users {
				if _, err := viaSQL.CreateUser(ctx, u); err != nil {
					t.Fatal(err)
				}
				s := core.Session{SessionToken: "t" + u.ID, UserID: u.ID, Expires: exp.Add(time.Duration(i) * time.Second)}
				if _, err := viaSQL.CreateSession(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			for i, u := range users {
				got, err := viaPgx.GetSessionAndUser(ctx, "t"+u.ID)
				if err != nil || got == nil {
					t.Fatalf("pgxread, %s: %+v, %v", u.ID, got, err)
				}
				want, err := viaSQL.GetSessionAndUser(ctx, "t"+u.ID)
				if err != nil || want == nil {
					t.Fatalf("database/sql, %s: %+v, %v", u.ID, want, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: pgxread read %+v, database/sql %+v", u.ID, *got, *want)
				}
				if e := exp.Add(time.Duration(i) * time.Second); !got.Session.Expires.Equal(e) || got.Session.Expires.Location() != time.UTC {
					t.Errorf("%s: expires %v, want %v in UTC", u.ID, got.Session.Expires, e)
				}
				if !reflect.DeepEqual(got.User.Name, u.Name) || !reflect.DeepEqual(got.User.Image, u.Image) ||
					!reflect.DeepEqual(got.User.EmailVerified, u.EmailVerified) || !reflect.DeepEqual(got.User.Data, u.Data) {
					t.Errorf("%s: read %+v, stored %+v", u.ID, got.User, u)
				}
			}
			if su, err := viaPgx.GetSessionAndUser(ctx, "nope"); su != nil || err != nil {
				t.Errorf("pgxread, an unknown token: %+v, %v; want none", su, err)
			}
			// Tokens PostgreSQL cannot take (core.Store never passes
			// them on): the same answer on both paths.
			for _, token := range []string{"t\x00", "\xff"} {
				su1, err1 := viaPgx.GetSessionAndUser(ctx, token)
				su2, err2 := viaSQL.GetSessionAndUser(ctx, token)
				if su1 != nil || su2 != nil || (err1 == nil) != (err2 == nil) {
					t.Errorf("token %q: pgxread %+v, %v; database/sql %+v, %v", token, su1, err1, su2, err2)
				}
			}
			n := viaSQL.Names()
			upd := `UPDATE "` + n.Sessions + `" SET "` + n.Session.Expires + `" = 'infinity' WHERE "` + n.Session.SessionToken + `" = 'tu1'`
			if _, err := sqlDB.ExecContext(ctx, upd); err != nil {
				t.Fatal(err)
			}
			for name, a := range map[string]*gormadapter.Adapter{"pgxread": viaPgx, "database/sql": viaSQL} {
				if su, err := a.GetSessionAndUser(ctx, "tu1"); err == nil {
					t.Errorf("%s: an infinite expiry read as %+v, want an error", name, su)
				}
			}
		})
	}
}

// TestRowReaderRefusesOtherDrivers: New fails, naming the driver, when the
// pool's connections are not pgx's (here MariaDB's and SQLite's).
func TestRowReaderRefusesOtherDrivers(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"mysql", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			gdb, _ := gormadapter.OpenTestDB(t, backend, nil)
			a, err := gormadapter.New(context.Background(), gdb, gormadapter.WithRowReader(pgxread.New()))
			if err == nil {
				_ = a.Close()
				t.Fatal("New accepted pgxread on a pool of another driver")
			}
			if !strings.Contains(err.Error(), "WithRowReader") || !strings.Contains(err.Error(), "pgx") {
				t.Errorf("error %q does not say what to do", err)
			}
		})
	}
}

// TestPgxReadReaderOnOtherConnections: ReadRow refuses a connection that
// is not pgx's instead of reading through it.
func TestPgxReadReaderOnOtherConnections(t *testing.T) {
	r := pgxread.New()
	if r.Accepts(struct{}{}) == nil || r.Accepts(nil) == nil {
		t.Fatal("Accepts took a connection that is not pgx's")
	}
	var s string
	err := r.ReadRow(context.Background(), struct{}{}, "SELECT 1", nil, []any{&s})
	if err == nil || err == sql.ErrNoRows {
		t.Fatalf("ReadRow on a foreign connection: %v", err)
	}
}

func newAdapter(t *testing.T, gdb *gorm.DB, opts ...gormadapter.Option) *gormadapter.Adapter {
	t.Helper()
	a, err := gormadapter.New(context.Background(), gdb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}
