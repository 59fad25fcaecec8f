package gormadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// factorAt is a factor of user with id, created at a fixed time.
func factorAt(id, user string, typ core.FactorType, secret []byte) core.Factor {
	return core.Factor{ID: id, UserID: user, Type: typ, Name: "n-" + id, Secret: secret,
		CreatedAt: time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)}
}

// rawFactorCount counts the rows of the factors table with plain SQL,
// those of user when user is not "".
func rawFactorCount(t *testing.T, a *Adapter, db *testDB, user string) int {
	t.Helper()
	query := "SELECT COUNT(*) FROM " + a.d.table(a.names.Factors)
	var args []any
	if user != "" {
		query += " WHERE " + a.d.ident(a.names.Factor.UserID) + " = " + (&placeholders{d: &a.d}).next()
		args = append(args, user)
	}
	var n int
	if err := db.sqlDB.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestFactors runs the four factor methods on each backend and on the
// paths taken without RETURNING, with and without foreign keys: the
// secret kept byte for byte (NUL bytes included, none stored as zero
// bytes), ids scoped to their user, bad input refused with nothing
// written, compare-and-set swaps (50 racing across two adapters: one
// wins), and deleteUser taking the factors.
func TestFactors(t *testing.T) {
	ctx := context.Background()
	variants := pathVariants()
	variants = append(variants,
		variant{"postgres_without_foreign_keys", "postgres", []Option{WithoutForeignKeys()}},
		variant{"mysql_without_foreign_keys", "mysql", []Option{WithoutForeignKeys()}},
		variant{"sqlite_without_foreign_keys", "sqlite", []Option{WithoutForeignKeys()}})
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			a, db := newAdapter(t, v.backend, false, v.opts...)
			b := mustNew(t, db, v.opts...) // a second instance on the same tables
			st := core.NewStore(a)
			for _, id := range []string{"u", "v"} {
				if _, err := st.CreateUser(ctx, core.User{ID: id}); err != nil {
					t.Fatal(err)
				}
			}
			secret := []byte{0, 1, 2, 0xff, 0, 'x', 0}
			f1 := factorAt("f1", "u", core.FactorTOTP, secret)
			got, err := st.CreateFactor(ctx, f1)
			if err != nil || got == nil || !bytes.Equal(got.Secret, secret) || got.ID != "f1" {
				t.Fatalf("CreateFactor: %+v, %v", got, err)
			}
			f2 := factorAt("f0", "u", core.FactorRecoveryCodes, []byte{})
			f2.LastUsedAt = time.Date(2030, 2, 3, 4, 5, 6, 789_000_000, time.UTC)
			if got, err := a.CreateFactor(ctx, f2); err != nil || got.Secret != nil {
				t.Fatalf("CreateFactor with an empty secret: %+v, %v (want a nil secret)", got, err)
			}
			fv := factorAt("fv", "v", core.FactorEmail, nil)
			if _, err := st.CreateFactor(ctx, fv); err != nil {
				t.Fatal(err)
			}
			// Refused, nothing written: an id taken (by another user too),
			// an unknown user, bad fields.
			if _, err := st.CreateFactor(ctx, factorAt("f1", "v", core.FactorTOTP, nil)); !errors.Is(err, core.ErrAlreadyExists) {
				t.Errorf("CreateFactor with another user's id: %v, want ErrAlreadyExists", err)
			}
			if _, err := a.CreateFactor(ctx, factorAt("fx", "nobody", core.FactorTOTP, nil)); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("CreateFactor for an unknown user: %v, want ErrNotFound", err)
			}
			for name, f := range map[string]core.Factor{
				"secret too long": factorAt("fy", "u", core.FactorTOTP, make([]byte, core.MaxFactorSecret+1)),
				"bad type":        factorAt("fy", "u", "TOTP", nil),
				"negative step":   func() core.Factor { f := factorAt("fy", "u", core.FactorTOTP, nil); f.Step = -1; return f }(),
				"no creation":     {ID: "fy", UserID: "u", Type: core.FactorTOTP},
				"year 10000":      func() core.Factor { f := factorAt("fy", "u", core.FactorTOTP, nil); f.LastUsedAt = maxTime; return f }(),
			} {
				if _, err := a.CreateFactor(ctx, f); !errors.Is(err, core.ErrInvalidInput) {
					t.Errorf("CreateFactor, %s: %v, want ErrInvalidInput", name, err)
				}
			}
			if n := rawFactorCount(t, a, db, ""); n != 3 {
				t.Errorf("%d factors stored, want 3", n)
			}
			// None is zero bytes, not NULL (swapFactor compares it).
			var nulls int
			if err := db.sqlDB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+a.d.table(a.names.Factors)+" WHERE "+
				a.d.ident(a.names.Factor.Secret)+" IS NULL").Scan(&nulls); err != nil || nulls != 0 {
				t.Errorf("%d secrets NULL (%v), want 0", nulls, err)
			}

			// Listing: by id, the user's only.
			list, err := b.ListFactorsByUserID(ctx, "u")
			if err != nil || len(list) != 2 || list[0].ID != "f0" || list[1].ID != "f1" {
				t.Fatalf("ListFactorsByUserID(u): %+v, %v", list, err)
			}
			if !bytes.Equal(list[1].Secret, secret) || !list[1].CreatedAt.Equal(f1.CreatedAt) || !list[1].LastUsedAt.IsZero() ||
				list[0].Secret != nil || !list[0].LastUsedAt.Equal(f2.LastUsedAt) || list[0].Type != core.FactorRecoveryCodes || list[0].Name != "n-f0" {
				t.Errorf("ListFactorsByUserID(u) = %+v", list)
			}
			if list, err := a.ListFactorsByUserID(ctx, "nobody"); err != nil || list == nil || len(list) != 0 {
				t.Errorf("ListFactorsByUserID(nobody) = %#v, %v; want an empty, non-nil list", list, err)
			}

			// Swaps: from the stored secret and step; stale; another user's
			// id; a swap to what is stored (MySQL counts no row changed).
			next := f1
			next.Name, next.Secret, next.Step, next.LastUsedAt = "phone", []byte{9, 0, 9}, 5, time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
			got, err = st.SwapFactor(ctx, f1, next)
			if err != nil || got == nil || got.Step != 5 || got.Name != "phone" || !bytes.Equal(got.Secret, next.Secret) ||
				!got.LastUsedAt.Equal(next.LastUsedAt) || !got.CreatedAt.Equal(f1.CreatedAt) || got.Type != core.FactorTOTP {
				t.Fatalf("SwapFactor: %+v, %v", got, err)
			}
			got, err = b.SwapFactor(ctx, f1, next)
			if !errors.Is(err, core.ErrFactorChanged) || got == nil || got.Step != 5 || !bytes.Equal(got.Secret, next.Secret) {
				t.Errorf("SwapFactor from a stale step and secret: %+v, %v; want the stored factor and ErrFactorChanged", got, err)
			}
			stale := next
			stale.Step = 4
			if got, err := a.SwapFactor(ctx, stale, next); !errors.Is(err, core.ErrFactorChanged) || got == nil {
				t.Errorf("SwapFactor from a stale step: %+v, %v", got, err)
			}
			stale = next
			stale.Secret = []byte{9, 0}
			if got, err := a.SwapFactor(ctx, stale, next); !errors.Is(err, core.ErrFactorChanged) || got == nil {
				t.Errorf("SwapFactor from a stale secret: %+v, %v", got, err)
			}
			theirs := fv
			theirs.UserID = "u"
			if got, err := a.SwapFactor(ctx, theirs, next); got != nil || err != nil {
				t.Errorf("SwapFactor of another user's factor: %+v, %v; want nil, nil", got, err)
			}
			if got, err := a.SwapFactor(ctx, factorAt("none", "u", core.FactorTOTP, nil), next); got != nil || err != nil {
				t.Errorf("SwapFactor of no factor: %+v, %v; want nil, nil", got, err)
			}
			if got, err := a.SwapFactor(ctx, next, next); err != nil || got == nil || got.Step != 5 {
				t.Errorf("SwapFactor to the values stored: %+v, %v", got, err)
			}
			// From none (an empty secret) to a secret.
			f2next := f2
			f2next.Secret, f2next.Step = []byte("codes"), 1
			if got, err := a.SwapFactor(ctx, f2, f2next); err != nil || string(got.Secret) != "codes" {
				t.Errorf("SwapFactor from an empty secret: %+v, %v", got, err)
			}
			bad := next
			bad.Step = -1
			if _, err := a.SwapFactor(ctx, next, bad); !errors.Is(err, core.ErrInvalidInput) {
				t.Errorf("SwapFactor to a negative step: %v", err)
			}
			bad.Step, bad.Secret = 6, make([]byte, core.MaxFactorSecret+1)
			if _, err := a.SwapFactor(ctx, next, bad); !errors.Is(err, core.ErrInvalidInput) {
				t.Errorf("SwapFactor to a secret too long: %v", err)
			}
			if l, _ := a.ListFactorsByUserID(ctx, "v"); len(l) != 1 || l[0].Name != fv.Name || l[0].Step != 0 {
				t.Errorf("another user's factor changed: %+v", l)
			}

			// 50 swaps from one step, across two adapters: one wins, the
			// others see the winner's.
			const racers = 50
			var wg sync.WaitGroup
			var mu sync.Mutex
			won, lost := 0, 0
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := next
					n.Step, n.Secret = int64(100+i), []byte(fmt.Sprintf("r%d", i))
					inst := a
					if i%2 == 1 {
						inst = b
					}
					got, err := inst.SwapFactor(ctx, next, n)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						won++
					case errors.Is(err, core.ErrFactorChanged) && got != nil && got.Step >= 100:
						lost++
					default:
						t.Errorf("racing swap: %+v, %v", got, err)
					}
				}()
			}
			wg.Wait()
			if won != 1 || lost != racers-1 {
				t.Errorf("%d racing swaps won and %d lost, want 1 and %d", won, lost, racers-1)
			}

			// Deletes: scoped to the user.
			if got, err := a.DeleteFactor(ctx, "u", "fv"); got != nil || err != nil {
				t.Errorf("DeleteFactor of another user's factor: %+v, %v; want nil, nil", got, err)
			}
			if n := rawFactorCount(t, a, db, "v"); n != 1 {
				t.Errorf("v has %d factors after another user's delete, want 1", n)
			}
			if got, err := st.DeleteFactor(ctx, "u", "f0"); err != nil || got == nil || got.ID != "f0" || string(got.Secret) != "codes" {
				t.Errorf("DeleteFactor: %+v, %v", got, err)
			}
			if got, err := b.DeleteFactor(ctx, "u", "f0"); got != nil || err != nil {
				t.Errorf("DeleteFactor again: %+v, %v; want nil, nil", got, err)
			}

			// deleteUser takes the user's factors, and only them.
			if _, err := st.DeleteUser(ctx, "u"); err != nil {
				t.Fatal(err)
			}
			if n := rawFactorCount(t, a, db, "u"); n != 0 {
				t.Errorf("%d factors of the deleted user left", n)
			}
			if n := rawFactorCount(t, a, db, "v"); n != 1 {
				t.Errorf("%d factors of the other user, want 1", n)
			}
			if _, err := a.CreateFactor(ctx, factorAt("f9", "u", core.FactorTOTP, nil)); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("CreateFactor for the deleted user: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestFactorMethodsAfterClose: the factor methods report ErrClosed.
func TestFactorMethodsAfterClose(t *testing.T) {
	ctx := context.Background()
	a, _ := newAdapter(t, "sqlite", false)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ListFactorsByUserID(ctx, "u"); !errors.Is(err, ErrClosed) {
		t.Errorf("ListFactorsByUserID after Close: %v", err)
	}
	if _, err := a.SwapFactor(ctx, core.Factor{}, core.Factor{}); !errors.Is(err, ErrClosed) {
		t.Errorf("SwapFactor after Close: %v", err)
	}
}

// TestPresetsFactors: the Auth.js presets keep no factors (the four
// methods omitted, refused, no table made); with WithFactorsTable after
// the preset, on the tables Auth.js's adapters make, Migrate creates the
// table (its userId of the users id's type: uuid for Kysely on
// PostgreSQL, Kysely's varchar(36) and collation on MariaDB) and the
// factors are kept and deleted with their user.
func TestPresetsFactors(t *testing.T) {
	ctx := context.Background()
	for _, p := range []struct {
		name, file, backend string
		preset              Option
	}{
		{"kysely_postgres", "kysely-postgres", "postgres", AuthJSKysely()},
		{"kysely_mysql", "kysely-mysql", "mysql", AuthJSKysely()},
		{"drizzle_mysql", "drizzle-mysql", "mysql", AuthJSDrizzle()},
		{"drizzle_sqlite", "drizzle-sqlite", "sqlite", AuthJSDrizzle()},
		{"pg", "", "postgres", AuthJSPg()},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t, p.backend, false)
			if p.file == "" {
				execAll(t, db.sqlDB, authJSPgDDL)
			} else {
				ddl, err := os.ReadFile("schema/authjs/" + p.file + ".sql")
				if err != nil {
					t.Fatal(err)
				}
				execAll(t, db.sqlDB, splitSQL(string(ddl)))
			}
			opts := []Option{p.preset, WithCaseInsensitiveCollation()}
			a := migrated(t, db, opts...)
			om := a.OmittedMethods()
			for _, m := range core.FactorMethods() {
				if !slicesContain(om, m) {
					t.Errorf("OmittedMethods = %v, want %s in it", om, m)
				}
			}
			if _, err := a.CreateFactor(ctx, factorAt("f", "1", core.FactorTOTP, nil)); !errors.Is(err, core.ErrMissingAdapterMethod) {
				t.Errorf("CreateFactor on a preset: %v, want ErrMissingAdapterMethod", err)
			}
			if _, err := core.NewStore(a).ListFactorsByUserID(ctx, "1"); !errors.Is(err, core.ErrMissingAdapterMethod) {
				t.Errorf("Store.ListFactorsByUserID on a preset: %v, want ErrMissingAdapterMethod", err)
			}
			if ddl := strings.Join(a.DDL(), "\n"); strings.Contains(ddl, `factor`) {
				t.Errorf("the preset's DDL makes a factors table:\n%s", ddl)
			}

			b := migrated(t, db, append(opts, WithFactorsTable("factor"))...)
			if om := b.OmittedMethods(); slicesContain(om, core.MethodCreateFactor) {
				t.Errorf("OmittedMethods with the table named = %v", om)
			}
			st := core.NewStore(b)
			id := "0b6e8d6c-4f0e-4b8a-9d3c-6f1a2b3c4d5e"
			if p.name == "pg" {
				var err error
				if id, err = b.NewUserID(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.CreateUser(ctx, core.User{ID: id, Email: "f@example.com"}); err != nil {
				t.Fatal(err)
			}
			f := factorAt("f1", id, core.FactorTOTP, []byte{0, 7})
			if _, err := st.CreateFactor(ctx, f); err != nil {
				t.Fatalf("CreateFactor: %v", err)
			}
			next := f
			next.Step = 3
			if got, err := st.SwapFactor(ctx, f, next); err != nil || got.Step != 3 {
				t.Errorf("SwapFactor: %+v, %v", got, err)
			}
			if l, err := st.ListFactorsByUserID(ctx, id); err != nil || len(l) != 1 || !bytes.Equal(l[0].Secret, f.Secret) {
				t.Errorf("ListFactorsByUserID: %+v, %v", l, err)
			}
			if _, err := st.DeleteUser(ctx, id); err != nil {
				t.Fatal(err)
			}
			if n := rawFactorCount(t, b, db, ""); n != 0 {
				t.Errorf("%d factors left after deleteUser", n)
			}
		})
	}
}

// TestMigrateAddsFactorsTable: a database migrated before the factors
// table existed gets it from Migrate, and an adapter made before then
// works once it is there.
func TestMigrateAddsFactorsTable(t *testing.T) {
	ctx := context.Background()
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			a, db := newAdapter(t, backend, false)
			if _, err := db.sqlDB.ExecContext(ctx, "DROP TABLE "+a.d.table("factors")); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateUser(ctx, core.User{ID: "u"}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.ListFactorsByUserID(ctx, "u"); err == nil {
				t.Fatal("ListFactorsByUserID without the table: no error")
			}
			if err := mustNew(t, db).Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateFactor(ctx, factorAt("f", "u", core.FactorTOTP, []byte("s"))); err != nil {
				t.Fatalf("CreateFactor after Migrate: %v", err)
			}
			if _, err := a.DeleteUser(ctx, "u"); err != nil {
				t.Fatal(err)
			}
			if n := rawFactorCount(t, a, db, ""); n != 0 {
				t.Errorf("%d factors left after deleteUser: the migrated table does not cascade", n)
			}
		})
	}
}
