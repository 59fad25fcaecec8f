package gormadapter

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// TestGetSessionAndUserPgxPath reads the sessions of users of several
// shapes (NULL name, image and emailVerified; all set, with characters
// that need escaping) through the pgx path and through database/sql on
// the same adapter and tables, and wants the same records; a session
// stored with an infinite expiry is an error on both paths, an unknown
// token none, and a token PostgreSQL cannot take the same on both.
func TestGetSessionAndUserPgxPath(t *testing.T) {
	a, db := newAdapter(t, "postgres", false)
	if !a.d.pgx {
		t.Fatal("the pool's connections are pgx's stdlib ones, but New did not see it")
	}
	ctx := context.Background()
	verified := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	exp := core.NormalizeTime(time.Now().Add(time.Hour))
	users := []core.User{
		{ID: "u1", Email: "u1@example.com"},
		{ID: "u2", Email: "u2@example.com", Name: ptr(`Zoë "Q" \ <b>`), Image: ptr("https://x.example/a.png"), EmailVerified: &verified},
	}
	for i, u := range users {
		if _, err := a.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "t" + u.ID, UserID: u.ID, Expires: exp.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(pgx bool, token string) (*core.SessionAndUser, error) {
		a.d.pgx = pgx
		defer func() { a.d.pgx = true }()
		return a.GetSessionAndUser(ctx, token)
	}
	for i, u := range users {
		viaPgx, err := read(true, "t"+u.ID)
		if err != nil || viaPgx == nil {
			t.Fatalf("pgx path, %s: %+v, %v", u.ID, viaPgx, err)
		}
		viaSQL, err := read(false, "t"+u.ID)
		if err != nil || viaSQL == nil {
			t.Fatalf("database/sql path, %s: %+v, %v", u.ID, viaSQL, err)
		}
		if !reflect.DeepEqual(viaPgx, viaSQL) {
			t.Errorf("%s: the pgx path read %+v, database/sql %+v", u.ID, *viaPgx, *viaSQL)
		}
		if want := exp.Add(time.Duration(i) * time.Second); !viaPgx.Session.Expires.Equal(want) || viaPgx.Session.Expires.Location() != time.UTC {
			t.Errorf("%s: expires %v, want %v in UTC", u.ID, viaPgx.Session.Expires, want)
		}
		if viaPgx.User.Name != nil && *viaPgx.User.Name != *u.Name || viaPgx.User.Name == nil && u.Name != nil {
			t.Errorf("%s: name %v, want %v", u.ID, viaPgx.User.Name, u.Name)
		}
	}
	if su, err := read(true, "nope"); su != nil || err != nil {
		t.Errorf("pgx path, an unknown token: %+v, %v; want none", su, err)
	}
	// Tokens PostgreSQL cannot take (core.Store never passes them on):
	// the same answer on both paths.
	for _, token := range []string{"t\x00", "\xff"} {
		su1, err1 := read(true, token)
		su2, err2 := read(false, token)
		if su1 != nil || su2 != nil || (err1 == nil) != (err2 == nil) {
			t.Errorf("token %q: pgx path %+v, %v; database/sql %+v, %v", token, su1, err1, su2, err2)
		}
	}
	if _, err := db.sqlDB.ExecContext(ctx, `UPDATE sessions SET expires = 'infinity' WHERE "sessionToken" = 'tu1'`); err != nil {
		t.Fatal(err)
	}
	for _, pgx := range []bool{true, false} {
		if su, err := read(pgx, "tu1"); err == nil {
			t.Errorf("pgx %v: an infinite expiry read as %+v, want an error", pgx, su)
		}
	}
}

// TestGetSessionAndUserPgxPathBetterAuth: on Better Auth's tables (a
// boolean emailVerified, a NOT NULL name whose "" is no name) the pgx
// path reads what the database/sql path reads.
func TestGetSessionAndUserPgxPathBetterAuth(t *testing.T) {
	a, _ := newAdapter(t, "postgres", false, BetterAuth())
	if !a.d.pgx {
		t.Fatal("New did not see pgx's connections")
	}
	ctx := context.Background()
	verified := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	exp := core.NormalizeTime(time.Now().Add(time.Hour))
	users := []core.User{
		{ID: "ba1", Email: "ba1@example.com"},
		{ID: "ba2", Email: "ba2@example.com", Name: ptr("Ada"), Image: ptr("https://x.example/a.png"), EmailVerified: &verified},
	}
	for _, u := range users {
		if _, err := a.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "t" + u.ID, UserID: u.ID, Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range users {
		a.d.pgx = true
		viaPgx, err := a.GetSessionAndUser(ctx, "t"+u.ID)
		if err != nil || viaPgx == nil {
			t.Fatalf("pgx path, %s: %+v, %v", u.ID, viaPgx, err)
		}
		a.d.pgx = false
		viaSQL, err := a.GetSessionAndUser(ctx, "t"+u.ID)
		a.d.pgx = true
		if err != nil || viaSQL == nil {
			t.Fatalf("database/sql path, %s: %+v, %v", u.ID, viaSQL, err)
		}
		if !reflect.DeepEqual(viaPgx, viaSQL) {
			t.Errorf("%s: the pgx path read %+v, database/sql %+v", u.ID, *viaPgx, *viaSQL)
		}
		if (viaPgx.User.EmailVerified != nil) != (u.EmailVerified != nil) || (viaPgx.User.Name != nil) != (u.Name != nil) {
			t.Errorf("%s: verified %v, name %v; want verified %v, name %v", u.ID, viaPgx.User.EmailVerified, viaPgx.User.Name, u.EmailVerified != nil, u.Name != nil)
		}
	}
}
