package gormadapter

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// The session inventory (listSessionsByUserId, deleteSessionsByUserId) and
// the session metadata, on every dialect and on the paths without
// RETURNING.

// mustUser creates a user with the id, failing the test on error.
func mustUser(t testing.TB, a *Adapter, id string) {
	t.Helper()
	if _, err := a.CreateUser(context.Background(), core.User{ID: id, Email: id + "@example.com"}); err != nil {
		t.Fatalf("createUser %s: %v", id, err)
	}
}

// mustSession creates s, failing the test on error.
func mustSession(t testing.TB, a *Adapter, s core.Session) *core.Session {
	t.Helper()
	got, err := a.CreateSession(context.Background(), s)
	if err != nil {
		t.Fatalf("createSession %s: %v", s.SessionToken, err)
	}
	return got
}

// tokens lists a user's sessions and returns their tokens.
func tokens(t testing.TB, a *Adapter, userID string) []string {
	t.Helper()
	list, err := a.ListSessionsByUserID(context.Background(), userID)
	if err != nil {
		t.Fatalf("listSessionsByUserId %s: %v", userID, err)
	}
	out := []string{}
	for _, s := range list {
		out = append(out, s.SessionToken)
	}
	return out
}

func TestSessionInventory(t *testing.T) {
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			ctx := context.Background()
			clock := coretest.NewClock(time.Now().Truncate(time.Millisecond))
			a, _ := newAdapter(t, v.backend, false, append(v.opts[:len(v.opts):len(v.opts)], WithClock(clock.Now))...)
			if !a.KeepsSessionMetadata() {
				t.Fatal("KeepsSessionMetadata = false on the default schema")
			}
			mustUser(t, a, "u1")
			mustUser(t, a, "u2")
			now := clock.Now()
			meta := core.Session{SessionToken: "b", UserID: "u1", Expires: now.Add(time.Hour),
				CreatedAt: now.Add(-time.Minute), UpdatedAt: now, IPAddress: "2001:db8::1", UserAgent: "Mozilla/5.0 (X11) é"}
			if got := mustSession(t, a, meta); *got != meta.Normalize() {
				t.Errorf("createSession returned %+v, want %+v", got, meta.Normalize())
			}
			mustSession(t, a, core.Session{SessionToken: "a", UserID: "u1", Expires: now.Add(2 * time.Hour)})
			mustSession(t, a, core.Session{SessionToken: "c-expiring", UserID: "u1", Expires: now.Add(time.Minute)})
			mustSession(t, a, core.Session{SessionToken: "z", UserID: "u2", Expires: now.Add(time.Hour)})

			list, err := a.ListSessionsByUserID(ctx, "u1")
			if err != nil || len(list) != 3 {
				t.Fatalf("listSessionsByUserId = %+v, %v", list, err)
			}
			// Ordered by token; metadata back as stored, NULL as zero.
			want := []core.Session{{SessionToken: "a", UserID: "u1", Expires: core.NormalizeTime(now.Add(2 * time.Hour))},
				meta.Normalize(), {SessionToken: "c-expiring", UserID: "u1", Expires: core.NormalizeTime(now.Add(time.Minute))}}
			if !slices.Equal(list, want) {
				t.Errorf("listSessionsByUserId =\n %+v\nwant\n %+v", list, want)
			}
			if list, err := a.ListSessionsByUserID(ctx, "nobody"); err != nil || list == nil || len(list) != 0 {
				t.Errorf("listSessionsByUserId of an unknown user = %#v, %v; want an empty list", list, err)
			}

			// getSessionAndUser leaves the metadata out (the read path).
			su, err := a.GetSessionAndUser(ctx, "b")
			if err != nil || su == nil || su.Session != meta.Normalize().WithoutMetadata() {
				t.Errorf("getSessionAndUser = %+v, %v", su, err)
			}

			// extendSession moves UpdatedAt to seen in its UPDATE;
			// updateSession sets it when asked, and leaves it otherwise.
			seen := now.Add(time.Second)
			if _, wrote, err := a.ExtendSession(ctx, "b", core.NormalizeTime(now.Add(time.Hour)), now.Add(3*time.Hour), seen); err != nil || !wrote {
				t.Fatalf("extendSession = %v, %v", wrote, err)
			}
			if s := listed(t, a, "u1", "b"); !s.UpdatedAt.Equal(core.NormalizeTime(seen)) || !s.CreatedAt.Equal(meta.Normalize().CreatedAt) || s.IPAddress != meta.IPAddress {
				t.Errorf("after extendSession: %+v, want UpdatedAt %v and the rest kept", s, seen)
			}
			if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "b", Expires: core.Set(now.Add(4 * time.Hour))}); err != nil {
				t.Fatal(err)
			}
			if s := listed(t, a, "u1", "b"); !s.UpdatedAt.Equal(core.NormalizeTime(seen)) {
				t.Errorf("updateSession without UpdatedAt changed it: %+v", s)
			}
			later := now.Add(time.Minute)
			if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "a", UpdatedAt: core.Set(later)}); err != nil {
				t.Fatal(err)
			}
			if s := listed(t, a, "u1", "a"); !s.UpdatedAt.Equal(core.NormalizeTime(later)) || !s.CreatedAt.IsZero() {
				t.Errorf("after updateSession with UpdatedAt: %+v", s)
			}

			// An expired session (not yet purged) is never listed, nor
			// counted by the delete, which deletes it all the same.
			clock.Add(2 * time.Minute)
			if got := tokens(t, a, "u1"); !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("listed after c-expiring expired: %q", got)
			}

			// except naming another user's session keeps nothing of u1's
			// and touches nothing of u2's.
			n, err := a.DeleteSessionsByUserID(ctx, "u1", "z")
			if err != nil || n != 2 {
				t.Errorf("deleteSessionsByUserId(u1, z) = %d, %v; want 2", n, err)
			}
			if got := tokens(t, a, "u1"); len(got) != 0 {
				t.Errorf("u1 still has %q", got)
			}
			if got := tokens(t, a, "u2"); !slices.Equal(got, []string{"z"}) {
				t.Errorf("u2 has %q, want [z]", got)
			}
			if su, _ := a.GetSessionAndUser(ctx, "c-expiring"); su != nil {
				t.Error("the expired session is readable")
			}
			if got, _ := a.DeleteSession(ctx, "c-expiring"); got != nil {
				t.Error("deleteSessionsByUserId left the expired session stored")
			}

			// except keeps one's own session; "" keeps none; unknown user: 0.
			for _, tok := range []string{"k1", "k2", "k3"} {
				mustSession(t, a, core.Session{SessionToken: tok, UserID: "u1", Expires: clock.Now().Add(time.Hour)})
			}
			if n, err := a.DeleteSessionsByUserID(ctx, "u1", "k2"); err != nil || n != 2 {
				t.Errorf("deleteSessionsByUserId(u1, k2) = %d, %v; want 2", n, err)
			}
			if got := tokens(t, a, "u1"); !slices.Equal(got, []string{"k2"}) {
				t.Errorf("kept %q, want [k2]", got)
			}
			if n, err := a.DeleteSessionsByUserID(ctx, "u1", ""); err != nil || n != 1 {
				t.Errorf("deleteSessionsByUserId(u1, \"\") = %d, %v; want 1", n, err)
			}
			if n, err := a.DeleteSessionsByUserID(ctx, "nobody", ""); err != nil || n != 0 {
				t.Errorf("deleteSessionsByUserId of an unknown user = %d, %v", n, err)
			}
		})
	}
}

// listed returns the user's listed session with the token, failing the
// test when there is none.
func listed(t testing.TB, a *Adapter, userID, token string) core.Session {
	t.Helper()
	list, err := a.ListSessionsByUserID(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.SessionToken == token {
			return s
		}
	}
	t.Fatalf("session %s not listed: %+v", token, list)
	return core.Session{}
}

// TestDeleteSessionsByUserIDRaces: 50 concurrent createSessions racing one
// deleteSessionsByUserId leave every session whole (readable and listed) or
// gone (neither), the count is the sessions gone; and extensions and
// updates racing the delete never bring a deleted session back.
func TestDeleteSessionsByUserIDRaces(t *testing.T) {
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			ctx := context.Background()
			a, _ := newAdapter(t, v.backend, false, v.opts...)
			mustUser(t, a, "u")
			exp := time.Now().Add(time.Hour)
			const n = 50
			var deleted atomic.Int64
			var created sync.Map
			coretest.Concurrently(n+1, func(i int) {
				if i == n/2 {
					c, err := a.DeleteSessionsByUserID(ctx, "u", "")
					if err != nil {
						t.Errorf("deleteSessionsByUserId: %v", err)
					}
					deleted.Add(int64(c))
					return
				}
				tok := fmt.Sprintf("s%02d", i)
				if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u", Expires: exp}); err != nil {
					t.Errorf("createSession %s: %v", tok, err)
					return
				}
				created.Store(tok, true)
			})
			listedNow := tokens(t, a, "u")
			kept := 0
			created.Range(func(k, _ any) bool {
				tok := k.(string)
				su, err := a.GetSessionAndUser(ctx, tok)
				if err != nil {
					t.Fatal(err)
				}
				if readable, isListed := su != nil, slices.Contains(listedNow, tok); readable != isListed {
					t.Errorf("session %s half deleted: readable %v, listed %v", tok, readable, isListed)
				}
				if su != nil {
					kept++
				}
				return true
			})
			if int(deleted.Load())+kept != n {
				t.Errorf("deleted %d + kept %d != %d created", deleted.Load(), kept, n)
			}

			// Extensions and updates racing the delete: afterwards no
			// session of the user is readable, however the race went.
			var toks []string
			for i := range n {
				tok := fmt.Sprintf("e%02d", i)
				mustSession(t, a, core.Session{SessionToken: tok, UserID: "u", Expires: exp})
				toks = append(toks, tok)
			}
			if _, err := a.DeleteSessionsByUserID(ctx, "u", ""); err != nil { // the s* kept above
				t.Fatal(err)
			}
			for i := range n {
				mustSession(t, a, core.Session{SessionToken: toks[i] + "x", UserID: "u", Expires: exp})
			}
			from := core.NormalizeTime(exp)
			coretest.Concurrently(2*n+1, func(i int) {
				switch {
				case i == 2*n:
					if _, err := a.DeleteSessionsByUserID(ctx, "u", ""); err != nil {
						t.Errorf("deleteSessionsByUserId: %v", err)
					}
				case i%2 == 0:
					if _, _, err := a.ExtendSession(ctx, toks[i/2]+"x", from, from.Add(time.Hour), time.Now()); err != nil {
						t.Errorf("extendSession: %v", err)
					}
				default:
					if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: toks[i/2] + "x", Expires: core.Set(exp.Add(2 * time.Hour)), UpdatedAt: core.Set(time.Now())}); err != nil {
						t.Errorf("updateSession: %v", err)
					}
				}
			})
			for _, tok := range toks {
				if su, err := a.GetSessionAndUser(ctx, tok+"x"); su != nil || err != nil {
					t.Errorf("session %s readable after the delete: %+v, %v", tok+"x", su, err)
				}
			}
			if got := tokens(t, a, "u"); len(got) != 0 {
				t.Errorf("listed after the delete: %q", got)
			}
		})
	}
}

// TestMigrateAddsSessionMetadataColumns: on a sessions table without the
// metadata columns (an earlier version's), New keeps no metadata and every
// session method works; Migrate adds the columns, nullable, and the
// adapter keeps the metadata from then on, old rows listed with none.
func TestMigrateAddsSessionMetadataColumns(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t, backend, false)
			old := migrated(t, db, WithSessionMetadataColumns(Omit, Omit, Omit, Omit))
			ddl := sessionsDDL(old)
			if ddl == "" || strings.Contains(ddl, "createdAt") || strings.Contains(ddl, "userAgent") {
				t.Fatalf("the old schema has metadata columns:\n%s", ddl)
			}
			mustUser(t, old, "u")
			exp := time.Now().Add(time.Hour)
			mustSession(t, old, core.Session{SessionToken: "old", UserID: "u", Expires: exp})

			a := mustNew(t, db)
			if a.KeepsSessionMetadata() {
				t.Error("KeepsSessionMetadata = true on a table without the columns")
			}
			given := core.Session{SessionToken: "before", UserID: "u", Expires: exp, CreatedAt: time.Now(), IPAddress: "192.0.2.1"}
			if got := mustSession(t, a, given); *got != given.Normalize().WithoutMetadata() {
				t.Errorf("createSession without the columns returned %+v", got)
			}
			if _, _, err := a.ExtendSession(ctx, "before", core.NormalizeTime(exp), exp.Add(time.Hour), time.Now()); err != nil {
				t.Errorf("extendSession without the columns: %v", err)
			}
			if got := tokens(t, a, "u"); !slices.Equal(got, []string{"before", "old"}) {
				t.Errorf("listed %q", got)
			}

			if err := a.Migrate(ctx); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			if err := a.Migrate(ctx); err != nil { // again: nothing to add
				t.Fatalf("Migrate again: %v", err)
			}
			if !a.KeepsSessionMetadata() {
				t.Fatal("KeepsSessionMetadata = false after Migrate")
			}
			if b := mustNew(t, db); !b.KeepsSessionMetadata() {
				t.Error("a new adapter does not find the added columns")
			}
			given.SessionToken = "after"
			mustSession(t, a, given)
			if s := listed(t, a, "u", "after"); s != given.Normalize() {
				t.Errorf("after Migrate: %+v, want %+v", s, given.Normalize())
			}
			if s := listed(t, a, "u", "old"); s != s.WithoutMetadata() {
				t.Errorf("an old row has metadata: %+v", s)
			}
		})
	}
}

// TestSessionMetadataAndTimestampColumns: WithTimestampColumns on the
// sessions table names the created/updated metadata columns too (one
// notion of each): NOT NULL, the clock fills what a session does not give,
// extendSession writes seen. A different SessionColumns name is refused;
// Omit keeps the two apart.
func TestSessionMetadataAndTimestampColumns(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			clock := coretest.NewClock(time.Now().Truncate(time.Millisecond))
			a, _ := newAdapter(t, backend, false, WithTimestampColumns(TableSessions, "created_at", "updated_at"), WithClock(clock.Now))
			ddl := sessionsDDL(a)
			if strings.Contains(ddl, "createdAt") || strings.Contains(ddl, "updatedAt") || !strings.Contains(ddl, "userAgent") {
				t.Errorf("DDL has two notions of created/updated, or no userAgent:\n%s", ddl)
			}
			if !a.KeepsSessionMetadata() {
				t.Error("KeepsSessionMetadata = false")
			}
			mustUser(t, a, "u")
			now := clock.Now()
			exp := now.Add(time.Hour)
			got := mustSession(t, a, core.Session{SessionToken: "s", UserID: "u", Expires: exp, UserAgent: "ua"})
			if !got.CreatedAt.Equal(now) || !got.UpdatedAt.Equal(now) {
				t.Errorf("createSession without times returned %+v, want the clock's %v", got, now)
			}
			if s := listed(t, a, "u", "s"); s != *got {
				t.Errorf("listed %+v, want %+v", s, *got)
			}
			seen := now.Add(time.Minute)
			if _, _, err := a.ExtendSession(ctx, "s", core.NormalizeTime(exp), exp.Add(time.Hour), seen); err != nil {
				t.Fatal(err)
			}
			if s := listed(t, a, "u", "s"); !s.UpdatedAt.Equal(core.NormalizeTime(seen)) || !s.CreatedAt.Equal(now) {
				t.Errorf("after extendSession: %+v", s)
			}
			clock.Add(time.Hour)
			if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", Expires: core.Set(exp.Add(3 * time.Hour))}); err != nil {
				t.Fatal(err)
			}
			if s := listed(t, a, "u", "s"); !s.UpdatedAt.Equal(clock.Now()) {
				t.Errorf("updateSession did not stamp updated_at: %+v", s)
			}
			given := now.Add(-time.Hour)
			got = mustSession(t, a, core.Session{SessionToken: "t", UserID: "u", Expires: clock.Now().Add(time.Hour), CreatedAt: given, UpdatedAt: given})
			if s := listed(t, a, "u", "t"); !s.CreatedAt.Equal(given) || !s.UpdatedAt.Equal(given) || s != *got {
				t.Errorf("given times: listed %+v, returned %+v", s, got)
			}

			db := openDB(t, backend, false)
			if _, err := New(ctx, db.gdb, WithTimestampColumns(TableSessions, "created_at", ""),
				WithNames(Names{Session: SessionColumns{CreatedAt: "created"}})); err == nil {
				t.Error("New accepted two created columns for sessions")
			}
			apart := migrated(t, db, WithTimestampColumns(TableSessions, "created_at", "updated_at"),
				WithSessionMetadataColumns(Omit, Omit, "", ""))
			if apart.KeepsSessionMetadata() {
				t.Error("KeepsSessionMetadata = true with created/updated omitted")
			}
		})
	}
}

// TestPresetsKeepNoSessionMetadata: the Auth.js presets keep no metadata
// (their tables have no room for it) unless the columns are named; a
// drizzle sessions table with the columns added then keeps it.
func TestPresetsKeepNoSessionMetadata(t *testing.T) {
	for _, p := range []struct {
		name string
		opt  Option
	}{{"drizzle", AuthJSDrizzle()}, {"kysely", AuthJSKysely()}, {"prisma", AuthJSPrisma()}} {
		a, _ := newAdapter(t, "sqlite", false, p.opt)
		if a.KeepsSessionMetadata() {
			t.Errorf("%s: KeepsSessionMetadata = true", p.name)
		}
		if ddl := strings.Join(a.DDL(), "\n"); strings.Contains(ddl, "ipAddress") {
			t.Errorf("%s: DDL has metadata columns:\n%s", p.name, ddl)
		}
	}
	ctx := context.Background()
	db := openDB(t, "sqlite", false)
	migrated(t, db, AuthJSDrizzle())
	for _, c := range []string{`"createdAt" INTEGER`, `"updatedAt" INTEGER`, `"ipAddress" TEXT`, `"userAgent" TEXT`} {
		if _, err := db.sqlDB.ExecContext(ctx, `ALTER TABLE "session" ADD COLUMN `+c); err != nil {
			t.Fatal(err)
		}
	}
	a := mustNew(t, db, AuthJSDrizzle(), WithSessionMetadataColumns("", "", "", ""))
	if !a.KeepsSessionMetadata() {
		t.Fatal("drizzle with the columns named: KeepsSessionMetadata = false")
	}
	mustUser(t, a, "u")
	s := core.Session{SessionToken: "s", UserID: "u", Expires: time.Now().Add(time.Hour), CreatedAt: time.Now(), UpdatedAt: time.Now(), IPAddress: "::1", UserAgent: "ua"}
	mustSession(t, a, s)
	if got := listed(t, a, "u", "s"); got != s.Normalize() {
		t.Errorf("listed %+v, want %+v", got, s.Normalize())
	}
}

// sessionsDDL is the CREATE TABLE of a's sessions table, of the statements
// Migrate runs (other tables have createdAt columns of their own).
func sessionsDDL(a *Adapter) string {
	for _, s := range a.DDL() {
		if strings.HasPrefix(s, "CREATE TABLE IF NOT EXISTS "+a.d.table(a.names.Sessions)+" (") {
			return s
		}
	}
	return ""
}
