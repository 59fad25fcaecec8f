package gormadapter_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/postgres-gorm/pgxread"
	"github.com/authport/authport/core"
)

// Auth.js pg adapter schema (SERIAL ids) and kysely's (uuid ids): the
// preset the pgxread docs show.
func TestRowReaderReadsIDTypes(t *testing.T) {
	for _, c := range []struct {
		name string
		ddl  []string
		opt  gormadapter.Option
	}{
		{"authjs_pg_serial", []string{
			`CREATE TABLE users (id SERIAL, name VARCHAR(255), email VARCHAR(255), "emailVerified" TIMESTAMPTZ, image TEXT, PRIMARY KEY (id))`,
			`CREATE TABLE accounts (id SERIAL, "userId" INTEGER NOT NULL, type VARCHAR(255) NOT NULL, provider VARCHAR(255) NOT NULL, "providerAccountId" VARCHAR(255) NOT NULL, refresh_token TEXT, access_token TEXT, expires_at BIGINT, id_token TEXT, scope TEXT, session_state TEXT, token_type TEXT, PRIMARY KEY (id))`,
			`CREATE TABLE sessions (id SERIAL, "userId" INTEGER NOT NULL, expires TIMESTAMPTZ NOT NULL, "sessionToken" VARCHAR(255) NOT NULL, PRIMARY KEY (id))`,
			`CREATE TABLE verification_token (identifier TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL, token TEXT NOT NULL, PRIMARY KEY (identifier, token))`,
		}, gormadapter.AuthJSPg()},
		{"kysely_uuid", []string{
			`create table "User" ("id" uuid default gen_random_uuid() primary key, "name" text, "email" text not null unique, "emailVerified" timestamptz default NOW(), "image" text)`,
			`create table "Account" ("userId" uuid not null references "User" ("id") on delete cascade, "type" text not null, "provider" text not null, "providerAccountId" text not null, "refresh_token" text, "access_token" text, "expires_at" bigint, "token_type" text, "scope" text, "id_token" text, "session_state" text)`,
			`create table "Session" ("userId" uuid not null references "User" ("id") on delete cascade, "sessionToken" text not null unique, "expires" timestamptz not null)`,
			`create table "VerificationToken" ("identifier" text not null, "token" text not null unique, "expires" timestamptz not null)`,
		}, gormadapter.AuthJSKysely()},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			gdb, sqlDB := gormadapter.OpenTestDB(t, "postgres", nil)
			for _, q := range c.ddl {
				if _, err := sqlDB.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			viaSQL := newAdapter(t, gdb, c.opt)
			viaPgx := newAdapter(t, gdb, c.opt, gormadapter.WithRowReader(pgxread.New()))
			id, err := viaSQL.NewUserID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := viaSQL.CreateUser(ctx, core.User{ID: id, Email: "a@example.com"}); err != nil {
				t.Fatal(err)
			}
			if _, err := viaSQL.CreateSession(ctx, core.Session{SessionToken: "tok", UserID: id, Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			want, err := viaSQL.GetSessionAndUser(ctx, "tok")
			if err != nil || want == nil {
				t.Fatalf("database/sql: %v %v", want, err)
			}
			got, err := viaPgx.GetSessionAndUser(ctx, "tok")
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("pgxread: %+v, %v; database/sql %+v", got, err, want)
			}
		})
	}
}

// Application columns of many types: the same Data on both paths.
func TestRowReaderReadsDataColumns(t *testing.T) {
	for _, mode := range []string{"", "simple_protocol"} {
		t.Run("mode="+mode, func(t *testing.T) {
			ctx := context.Background()
			var params map[string]string
			if mode != "" {
				params = map[string]string{"default_query_exec_mode": mode}
			}
			gdb, sqlDB := gormadapter.OpenTestDB(t, "postgres", params)
			viaSQL := newAdapter(t, gdb)
			if err := viaSQL.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			cols := map[string]string{
				"c_jsonb": "jsonb", "c_json": "json", "c_int": "integer", "c_small": "smallint", "c_big": "bigint",
				"c_bool": "boolean", "c_num": "numeric(10,2)", "c_real": "real", "c_dbl": "double precision",
				"c_tstz": "timestamptz", "c_ts": "timestamp", "c_date": "date", "c_uuid": "uuid", "c_arr": "text[]",
				"c_enum": "mood", "c_interval": "interval", "c_inet": "inet", "c_bytea": "bytea", "c_char": "char(3)",
				"c_time": "time", "c_money": "money", "c_xml": "xml", "c_intarr": "integer[]",
				"c_range": "tstzrange", "c_point": "point", "c_bit": "bit(3)", "c_tsv": "tsvector", "c_mac": "macaddr",
				"c_cidr": "cidr", "c_dom": "email_d", "c_domint": "posint", "c_comp": "pair", "c_timetz": "timetz",
				"c_int4range": "int4range", "c_oid": "oid", "c_name": "name", "c_bpchar1": "\"char\"", "c_jsonarr": "jsonb[]",
			}
			vals := map[string]string{
				"c_jsonb": `'{"a": [1, 2]}'`, "c_json": `'{"b" :  true}'`, "c_int": "42", "c_small": "7", "c_big": "9007199254740993",
				"c_bool": "true", "c_num": "12.50", "c_real": "1.5", "c_dbl": "'NaN'", "c_tstz": "'2026-01-02 03:04:05.123456+02'",
				"c_ts": "'2026-01-02 03:04:05.123456'", "c_date": "'2026-01-02'", "c_uuid": "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
				"c_arr": `'{x,"y z"}'`, "c_enum": "'happy'", "c_interval": "'1 day 2 hours'", "c_inet": "'10.0.0.1/8'",
				"c_bytea": `'\x00ff'`, "c_char": "'ab'", "c_time": "'12:34:56'", "c_money": "'12.34'", "c_xml": "'<a/>'", "c_intarr": "'{1,2}'",
				"c_range": "'[2026-01-01,2026-02-01)'", "c_point": "'(1,2)'", "c_bit": "B'101'", "c_tsv": "'a fat cat'",
				"c_mac": "'08:00:2b:01:02:03'", "c_cidr": "'10.0.0.0/8'", "c_dom": "'x@y'", "c_domint": "5", "c_comp": "ROW(1,'a')",
				"c_timetz": "'12:00+02'", "c_int4range": "'[1,5)'", "c_oid": "42", "c_name": "'nm'", "c_bpchar1": "'z'", "c_jsonarr": `ARRAY['{"a":1}'::jsonb]`,
			}
			for _, q := range []string{`CREATE TYPE mood AS ENUM ('sad', 'happy')`, `CREATE DOMAIN email_d AS text`,
				`CREATE DOMAIN posint AS integer CHECK (VALUE > 0)`, `CREATE TYPE pair AS (n int, s text)`} {
				if _, err := sqlDB.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			for c, typ := range cols {
				if _, err := sqlDB.ExecContext(ctx, `ALTER TABLE users ADD COLUMN `+c+` `+typ); err != nil {
					t.Fatal(err)
				}
			}
			viaSQL = newAdapter(t, gdb)
			viaPgx := newAdapter(t, gdb, gormadapter.WithRowReader(pgxread.New()))
			for _, id := range []string{"unull", "uvals"} {
				if _, err := viaSQL.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"}); err != nil {
					t.Fatal(err)
				}
				if _, err := viaSQL.CreateSession(ctx, core.Session{SessionToken: "t" + id, UserID: id, Expires: time.Now().Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
			}
			for c, v := range vals {
				if _, err := sqlDB.ExecContext(ctx, `UPDATE users SET `+c+` = `+v+` WHERE id = 'uvals'`); err != nil {
					t.Fatal(c, err)
				}
			}
			for _, id := range []string{"unull", "uvals"} {
				want, err1 := viaSQL.GetSessionAndUser(ctx, "t"+id)
				got, err2 := viaPgx.GetSessionAndUser(ctx, "t"+id)
				if err1 != nil || err2 != nil {
					t.Errorf("%s: database/sql err %v; pgxread err %v", id, err1, err2)
					continue
				}
				for c := range cols {
					if w, g := string(want.User.Data[c]), string(got.User.Data[c]); w != g {
						t.Errorf("%s %s (%s): database/sql %s, pgxread %s", id, c, cols[c], w, g)
					}
				}
			}
		})
	}
}

// Other column types for the session's expiry and the user's
// emailVerified than authport's timestamptz(3), in sessions whose time
// zone is not UTC.
func TestRowReaderReadsTimeColumns(t *testing.T) {
	for _, c := range []struct{ name, expires, verified string }{
		{"timestamp", "timestamp(3)", "timestamp(3)"},
		{"timestamp6", "timestamp", "timestamptz"},
		{"date", "timestamptz(3)", "date"},
		// Times kept as text (a schema of another tool's), which the
		// adapter's database/sql path parses.
		{"text", "text", "varchar(64)"},
	} {
		for _, mode := range []string{"", "simple_protocol"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				ctx := context.Background()
				var params map[string]string
				if mode != "" {
					params = map[string]string{"default_query_exec_mode": mode, "timezone": "America/New_York"}
				} else {
					params = map[string]string{"timezone": "Asia/Kolkata"}
				}
				gdb, sqlDB := gormadapter.OpenTestDB(t, "postgres", params)
				viaSQL := newAdapter(t, gdb)
				if err := viaSQL.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				verified := time.Date(2026, 1, 2, 23, 4, 5, 6_000_000, time.UTC)
				if _, err := viaSQL.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com", EmailVerified: &verified}); err != nil {
					t.Fatal(err)
				}
				if _, err := viaSQL.CreateSession(ctx, core.Session{SessionToken: "t", UserID: "u", Expires: time.Now().Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
				for _, q := range []string{
					`ALTER TABLE sessions ALTER COLUMN expires TYPE ` + c.expires,
					`ALTER TABLE users ALTER COLUMN "emailVerified" TYPE ` + c.verified,
				} {
					if _, err := sqlDB.ExecContext(ctx, q); err != nil {
						t.Fatal(q, err)
					}
				}
				viaSQL = newAdapter(t, gdb)
				viaPgx := newAdapter(t, gdb, gormadapter.WithRowReader(pgxread.New()))
				want, err1 := viaSQL.GetSessionAndUser(ctx, "t")
				got, err2 := viaPgx.GetSessionAndUser(ctx, "t")
				if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(got, want) {
					t.Errorf("database/sql %+v, %v; pgxread %+v, %v", want, err1, got, err2)
				} else if want != nil {
					t.Logf("both: expires %v verified %v", want.Session.Expires, want.User.EmailVerified)
				}
			})
		}
	}
}

// A read cancelled while the server holds it: the pool's one connection
// must come back usable (or be replaced), and the next reads work.
func TestRowReaderReadsCancel(t *testing.T) {
	ctx := context.Background()
	gdb, sqlDB := gormadapter.OpenTestDB(t, "postgres", nil)
	viaSQL := newAdapter(t, gdb)
	if err := viaSQL.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := viaSQL.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := viaSQL.CreateSession(ctx, core.Session{SessionToken: "t", UserID: "u", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	viaPgx := newAdapter(t, gdb, gormadapter.WithRowReader(pgxread.New()))
	sqlDB.SetMaxOpenConns(2)
	for i := 0; i < 5; i++ {
		tx, err := sqlDB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `LOCK TABLE users IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		su, err := viaPgx.GetSessionAndUser(cctx, "t")
		cancel()
		t.Logf("cancelled read %d: %v, %v; stats %+v", i, su, err, sqlDB.Stats())
		if err == nil {
			t.Errorf("a read blocked by the lock returned %+v", su)
		}
		_ = tx.Rollback()
		for j := 0; j < 3; j++ {
			su, err := viaPgx.GetSessionAndUser(ctx, "t")
			if err != nil || su == nil {
				t.Fatalf("read after a cancelled one: %+v, %v", su, err)
			}
		}
	}
	t.Logf("stats %+v", sqlDB.Stats())
}

// A uuid session token column and a token that is not a uuid: keyUnusable
// on both paths (nil, nil), and the token not in any error.
func TestRowReaderReadsUUIDToken(t *testing.T) {
	ctx := context.Background()
	gdb, sqlDB := gormadapter.OpenTestDB(t, "postgres", nil)
	viaSQL := newAdapter(t, gdb)
	if err := viaSQL.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(ctx, `ALTER TABLE sessions ALTER COLUMN "sessionToken" TYPE uuid USING "sessionToken"::uuid`); err != nil {
		t.Fatal(err)
	}
	viaSQL = newAdapter(t, gdb)
	viaPgx := newAdapter(t, gdb, gormadapter.WithRowReader(pgxread.New()))
	for _, tok := range []string{"secret-not-a-uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"} {
		su1, err1 := viaSQL.GetSessionAndUser(ctx, tok)
		su2, err2 := viaPgx.GetSessionAndUser(ctx, tok)
		t.Logf("%s: database/sql %v %v; pgxread %v %v", tok, su1, err1, su2, err2)
		if (err1 == nil) != (err2 == nil) {
			t.Errorf("different answers")
		}
	}
}

// citext e-mail (an extension type, unknown to pgx's type map).
func TestRowReaderReadsCitext(t *testing.T) {
	ctx := context.Background()
	gdb, sqlDB := gormadapter.OpenTestDB(t, "postgres", nil)
	if _, err := sqlDB.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS citext`); err != nil {
		t.Skip(err)
	}
	viaSQL := newAdapter(t, gdb)
	if err := viaSQL.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(ctx, `ALTER TABLE users ALTER COLUMN email TYPE citext, ALTER COLUMN name TYPE citext`); err != nil {
		t.Fatal(err)
	}
	viaSQL = newAdapter(t, gdb)
	viaPgx := newAdapter(t, gdb, gormadapter.WithRowReader(pgxread.New()))
	n := "Nm"
	if _, err := viaSQL.CreateUser(ctx, core.User{ID: "u", Email: "U@example.com", Name: &n}); err != nil {
		t.Fatal(err)
	}
	if _, err := viaSQL.CreateSession(ctx, core.Session{SessionToken: "t", UserID: "u", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	want, err1 := viaSQL.GetSessionAndUser(ctx, "t")
	got, err2 := viaPgx.GetSessionAndUser(ctx, "t")
	if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("database/sql %+v %v; pgxread %+v %v", want, err1, got, err2)
	}
}
