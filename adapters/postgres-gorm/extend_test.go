package gormadapter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// extendVariants are the dialects and settings whose ExtendSession
// statements differ: RETURNING or a transaction, SQLite's three time
// forms, and the updated-at column of the Prisma preset.
func extendVariants() []variant {
	return append(pathVariants(),
		variant{"postgres_prisma", "postgres", []Option{AuthJSPrisma()}},
		variant{"sqlite_iso8601", "sqlite", []Option{WithSQLiteTimes(SQLiteTimeISO8601)}},
		variant{"sqlite_unixmilli", "sqlite", []Option{WithSQLiteTimes(SQLiteTimeUnixMilli)}},
	)
}

// extendFixture makes a user and a session expiring at exp on a fresh
// database of the variant, and returns the adapter and the database.
func extendFixture(t *testing.T, backend string, exp time.Time, opts ...Option) (*Adapter, *testDB) {
	t.Helper()
	ctx := context.Background()
	a, db := newAdapter(t, backend, false, opts...)
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	return a, db
}

// storedExpiry reads the session's expiry through the adapter.
func storedExpiry(t *testing.T, a *Adapter, token string) time.Time {
	t.Helper()
	su, err := a.GetSessionAndUser(context.Background(), token)
	if err != nil || su == nil {
		t.Fatalf("GetSessionAndUser(%q) = %v, %v", token, su, err)
	}
	return su.Session.Expires
}

// TestExtendSession: of concurrent extensions from the same read, exactly
// one writes and all return the expiry it wrote; an extension from a stale
// read writes nothing and returns the session as stored; an unknown token
// is nil, false, nil; a done context is an error.
func TestExtendSession(t *testing.T) {
	for _, v := range extendVariants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			from := core.NormalizeTime(time.Now().Add(time.Hour))
			a, _ := extendFixture(t, v.backend, from, v.opts...)
			if !core.Probe(a).HasExtension(core.ExtensionExtendSession) {
				t.Fatal("Probe does not report the extendSession extension")
			}

			winner := coretest.ExtendOnce(t, ctx, "s", "u", from, 8, a)
			if got := storedExpiry(t, a, "s"); !got.Equal(winner) {
				t.Fatalf("stored expiry %v, want %v", got, winner)
			}

			// A stale read: the stored expiry is after from.
			s, ok, err := a.ExtendSession(ctx, "s", from, from.Add(time.Hour), time.Now())
			if err != nil || ok || s == nil || !s.Expires.Equal(winner) || s.UserID != "u" {
				t.Fatalf("stale ExtendSession = %+v, %v, %v; want the stored session (expires %v), false", s, ok, err, winner)
			}
			if got := storedExpiry(t, a, "s"); !got.Equal(winner) {
				t.Fatalf("stale call changed the expiry to %v", got)
			}
			// A read a millisecond before the stored expiry is stale too.
			if _, ok, err := a.ExtendSession(ctx, "s", winner.Add(-time.Millisecond), winner.Add(time.Hour), time.Now()); err != nil || ok {
				t.Fatalf("ExtendSession from 1ms before the stored expiry = %v, %v; want false", ok, err)
			}
			// From the stored expiry itself, it writes.
			next := winner.Add(time.Hour)
			if s, ok, err := a.ExtendSession(ctx, "s", winner, next, time.Now()); err != nil || !ok || s == nil || !s.Expires.Equal(next) {
				t.Fatalf("ExtendSession from the stored expiry = %+v, %v, %v; want it written", s, ok, err)
			}

			if s, ok, err := a.ExtendSession(ctx, "unknown", from, from.Add(time.Hour), time.Now()); s != nil || ok || err != nil {
				t.Fatalf("unknown token: %+v, %v, %v; want nil, false, nil", s, ok, err)
			}

			done, cancel := context.WithCancel(ctx)
			cancel()
			if _, ok, err := a.ExtendSession(done, "s", next, next.Add(time.Hour), time.Now()); !errors.Is(err, context.Canceled) || ok {
				t.Fatalf("done context: %v, %v; want context.Canceled", ok, err)
			}
			if got := storedExpiry(t, a, "s"); !got.Equal(next) {
				t.Fatalf("a call with a done context changed the expiry to %v", got)
			}
		})
	}
}

// TestExtendSessionForeignTimes: a session whose expiry another writer
// stored in a form of its own is extended from the expiry read back:
// PostgreSQL microseconds (read as milliseconds), SQLite text with an
// offset (as go-sqlite3 writes a time.Time).
func TestExtendSessionForeignTimes(t *testing.T) {
	for _, c := range []struct {
		backend, set string
	}{
		{"postgres", `UPDATE "sessions" SET "expires" = "expires" + interval '456 microseconds'`},
		{"sqlite", `UPDATE "sessions" SET "expires" = strftime('%Y-%m-%dT%H:%M:%fZ', "expires")`},
	} {
		t.Run(c.backend, func(t *testing.T) {
			ctx := context.Background()
			exp := core.NormalizeTime(time.Now().Add(time.Hour))
			a, db := extendFixture(t, c.backend, exp)
			if _, err := db.sqlDB.ExecContext(ctx, c.set); err != nil {
				t.Fatal(err)
			}
			from := storedExpiry(t, a, "s")
			if !from.Equal(exp) {
				t.Fatalf("read back %v, want %v", from, exp)
			}
			if _, ok, err := a.ExtendSession(ctx, "s", from.Add(-time.Millisecond), from.Add(time.Hour), time.Now()); err != nil || ok {
				t.Fatalf("from before the stored expiry: %v, %v; want false", ok, err)
			}
			s, ok, err := a.ExtendSession(ctx, "s", from, from.Add(time.Hour), time.Now())
			if err != nil || !ok || !s.Expires.Equal(from.Add(time.Hour)) {
				t.Fatalf("ExtendSession = %+v, %v, %v; want it written", s, ok, err)
			}
		})
	}
}
