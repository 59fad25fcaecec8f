package gormadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// Users without an e-mail address, usernames and password hashes on the
// default schema (every backend, both statement paths), on the Auth.js
// presets (omitted unless a column is named), and on tables made by the
// previous schema (Migrate).

// rawNullCount returns how many rows of table have column col NULL, with
// plain SQL.
func rawNullCount(t testing.TB, a *Adapter, db *testDB, table, col string) int {
	t.Helper()
	return count(t, db.sqlDB, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s IS NULL", a.d.table(table), a.d.ident(col)))
}

func TestOptionalEmail(t *testing.T) {
	ctx := context.Background()
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			a, db := newAdapter(t, v.backend, false, v.opts...)
			st := core.NewStore(a)
			for _, id := range []string{"u1", "u2"} {
				u, err := st.CreateUser(ctx, core.User{ID: id, Name: new("no address")})
				if err != nil || u == nil || u.Email != "" {
					t.Fatalf("CreateUser %s without e-mail: %+v, %v", id, u, err)
				}
			}
			if n := rawNullCount(t, a, db, a.names.Users, a.names.User.Email); n != 2 {
				t.Errorf("%d users with email NULL, want 2 (\"\" is stored as NULL)", n)
			}
			for _, id := range []string{"u1", "u2"} {
				if u, err := st.GetUser(ctx, id); err != nil || u == nil || u.Email != "" {
					t.Errorf("GetUser %s: %+v, %v; want the user, e-mail \"\"", id, u, err)
				}
			}
			if u, err := a.GetUserByEmail(ctx, ""); u != nil || err != nil {
				t.Errorf("GetUserByEmail(\"\"): %+v, %v; want nil, nil", u, err)
			}
			// One takes an address; the other cannot take it too; giving
			// it up frees it at once.
			if _, err := st.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("a@example.com")}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set("a@example.com"), Name: core.Set(new("changed"))}); !errors.Is(err, core.ErrAlreadyExists) {
				t.Errorf("UpdateUser to a taken address: %v, want ErrAlreadyExists", err)
			}
			if u, _ := st.GetUser(ctx, "u2"); u == nil || u.Email != "" || deref(u.Name) != "no address" {
				t.Errorf("the refused update wrote: %+v", u)
			}
			if u, err := st.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("")}); err != nil || u.Email != "" {
				t.Fatalf("UpdateUser removing the address: %+v, %v", u, err)
			}
			if u, err := st.GetUserByEmail(ctx, "a@example.com"); u != nil || err != nil {
				t.Errorf("the removed address still finds %+v, %v", u, err)
			}
			if u, err := st.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set("a@example.com")}); err != nil || u.Email != "a@example.com" {
				t.Errorf("UpdateUser to the freed address: %+v, %v", u, err)
			}
			if n := rawNullCount(t, a, db, a.names.Users, a.names.User.Email); n != 1 {
				t.Errorf("%d users with email NULL, want 1", n)
			}
			// Sessions and accounts of a user without an address read back
			// with it.
			if _, err := st.LinkAccount(ctx, core.Account{UserID: "u1", Type: core.AccountTypeOAuth, Provider: "x", ProviderAccountID: "no-mail"}); err != nil {
				t.Fatal(err)
			}
			if u, err := st.GetUserByAccount(ctx, core.AccountKey{Provider: "x", ProviderAccountID: "no-mail"}); err != nil || u == nil || u.ID != "u1" || u.Email != "" {
				t.Errorf("GetUserByAccount: %+v, %v", u, err)
			}
			if _, err := st.CreateSession(ctx, core.Session{SessionToken: "s1", UserID: "u1", Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if su, err := st.GetSessionAndUser(ctx, "s1"); err != nil || su == nil || su.User.ID != "u1" || su.User.Email != "" {
				t.Errorf("GetSessionAndUser: %+v, %v", su, err)
			}
			if u, err := st.DeleteUser(ctx, "u1"); err != nil || u == nil || u.Email != "" {
				t.Errorf("DeleteUser: %+v, %v", u, err)
			}
		})
	}
}

func TestUsernames(t *testing.T) {
	ctx := context.Background()
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			a, db := newAdapter(t, v.backend, false, v.opts...)
			st := core.NewStore(a)
			if slicesContain(a.OmittedMethods(), core.MethodGetUserByUsername) {
				t.Fatal("the default schema omits getUserByUsername")
			}
			if u, err := st.CreateUser(ctx, core.User{ID: "ada", Username: "ada.l"}); err != nil || u.Username != "ada.l" {
				t.Fatalf("CreateUser with a username: %+v, %v", u, err)
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "other", Email: "o@example.com", Username: "ada.l"}); !errors.Is(err, core.ErrAlreadyExists) {
				t.Errorf("CreateUser with a taken username: %v, want ErrAlreadyExists", err)
			}
			if u, _ := st.GetUser(ctx, "other"); u != nil {
				t.Errorf("the refused createUser wrote %+v", u)
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "bob", Username: "Bob"}); !errors.Is(err, core.ErrInvalidInput) {
				t.Errorf("CreateUser with a username not normalised: %v, want ErrInvalidInput", err)
			}
			for _, tc := range []struct{ name, want string }{{"ada.l", "ada"}, {"ADA.L", ""}, {"ada", ""}, {"", ""}} {
				u, err := st.GetUserByUsername(ctx, tc.name)
				if got := ""; err != nil || (u == nil) != (tc.want == "") || (u != nil && u.ID != tc.want) {
					if u != nil {
						got = u.ID
					}
					t.Errorf("GetUserByUsername(%q): %q, %v; want %q", tc.name, got, err, tc.want)
				}
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "bob", Username: "bob"}); err != nil {
				t.Fatal(err)
			}
			// A rename to a taken name changes nothing; a rename frees the
			// old name at once; "" removes it.
			if _, err := st.UpdateUser(ctx, core.UserUpdate{ID: "bob", Username: core.Set("ada.l"), Name: core.Set(new("x"))}); !errors.Is(err, core.ErrAlreadyExists) {
				t.Errorf("UpdateUser to a taken username: %v, want ErrAlreadyExists", err)
			}
			if u, _ := st.GetUser(ctx, "bob"); u == nil || u.Username != "bob" || u.Name != nil {
				t.Errorf("the refused update wrote: %+v", u)
			}
			if u, err := st.UpdateUser(ctx, core.UserUpdate{ID: "ada", Username: core.Set("lovelace")}); err != nil || u.Username != "lovelace" {
				t.Fatalf("rename: %+v, %v", u, err)
			}
			if u, err := st.UpdateUser(ctx, core.UserUpdate{ID: "bob", Username: core.Set("ada.l")}); err != nil || u.Username != "ada.l" {
				t.Errorf("taking the freed name: %+v, %v", u, err)
			}
			if u, err := st.UpdateUser(ctx, core.UserUpdate{ID: "bob", Username: core.Set("")}); err != nil || u.Username != "" {
				t.Errorf("removing the username: %+v, %v", u, err)
			}
			if n := rawNullCount(t, a, db, a.names.Users, a.names.User.Username); n != 1 {
				t.Errorf("%d users with username NULL, want 1 (bob's, removed)", n)
			}
			// An update that names no username keeps it.
			if u, err := st.UpdateUser(ctx, core.UserUpdate{ID: "ada", Name: core.Set(new("Ada"))}); err != nil || u.Username != "lovelace" {
				t.Errorf("update of the name: %+v, %v", u, err)
			}
			if u, err := st.DeleteUser(ctx, "ada"); err != nil || u == nil || u.Username != "lovelace" {
				t.Fatalf("DeleteUser: %+v, %v", u, err)
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "ada2", Username: "lovelace"}); err != nil {
				t.Errorf("the deleted user's name is not free: %v", err)
			}
		})
	}
}

func slicesContain(ms []core.Method, m core.Method) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

func TestSwapPasswordHash(t *testing.T) {
	ctx := context.Background()
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			a, db := newAdapter(t, v.backend, false, v.opts...)
			st := core.NewStore(a)
			if _, err := st.CreateUser(ctx, core.User{ID: "u", Username: "user"}); err != nil {
				t.Fatal(err)
			}
			key := core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "u"}
			acc, err := st.LinkAccount(ctx, core.Account{UserID: "u", Type: core.AccountTypeCredentials, Provider: key.Provider,
				ProviderAccountID: key.ProviderAccountID, PasswordHash: new("$h1")})
			if err != nil || deref(acc.PasswordHash) != "$h1" {
				t.Fatalf("LinkAccount with a hash: %+v, %v", acc, err)
			}
			if got, err := st.GetAccount(ctx, key.ProviderAccountID, key.Provider); err != nil || got == nil || deref(got.PasswordHash) != "$h1" {
				t.Fatalf("GetAccount: %+v, %v", got, err)
			}
			got, err := st.SwapPasswordHash(ctx, key, "$h1", "$h2")
			if err != nil || got == nil || deref(got.PasswordHash) != "$h2" || got.Type != core.AccountTypeCredentials {
				t.Fatalf("swap $h1 → $h2: %+v, %v", got, err)
			}
			// The old hash no longer matches: nothing is written, the
			// stored account comes back (from the adapter: core.Store
			// passes the error on without it).
			if _, err := st.SwapPasswordHash(ctx, key, "$h1", "$h3"); !errors.Is(err, core.ErrPasswordHashChanged) {
				t.Errorf("Store.SwapPasswordHash from a stale hash: %v, want ErrPasswordHashChanged", err)
			}
			got, err = a.SwapPasswordHash(ctx, key, "$h1", "$h3")
			if !errors.Is(err, core.ErrPasswordHashChanged) || got == nil || deref(got.PasswordHash) != "$h2" {
				t.Errorf("swap from a stale hash: %+v, %v; want the stored account ($h2) and ErrPasswordHashChanged", got, err)
			}
			if _, err := st.SwapPasswordHash(ctx, key, "", "$h3"); !errors.Is(err, core.ErrPasswordHashChanged) {
				t.Errorf("swap from none on an account with a hash: %v, want ErrPasswordHashChanged", err)
			}
			if got, err := st.SwapPasswordHash(ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "nobody"}, "$h2", "$h3"); got != nil || err != nil {
				t.Errorf("swap on no account: %+v, %v; want nil, nil", got, err)
			}
			// An account without a hash (signed up with OAuth) gets one
			// with oldHash "".
			oauth := core.AccountKey{Provider: "github", ProviderAccountID: "gh-1"}
			if _, err := st.LinkAccount(ctx, core.Account{UserID: "u", Type: core.AccountTypeOAuth, Provider: oauth.Provider, ProviderAccountID: oauth.ProviderAccountID}); err != nil {
				t.Fatal(err)
			}
			if got, err := a.SwapPasswordHash(ctx, oauth, "$x", "$h"); !errors.Is(err, core.ErrPasswordHashChanged) || got == nil || got.PasswordHash != nil {
				t.Errorf("swap from a hash on an account without one: %+v, %v", got, err)
			}
			if got, err := st.SwapPasswordHash(ctx, oauth, "", "$set"); err != nil || deref(got.PasswordHash) != "$set" {
				t.Errorf("swap from none: %+v, %v", got, err)
			}
			if n := rawNullCount(t, a, db, a.names.Accounts, a.names.Account.Password); n != 0 {
				t.Errorf("%d accounts with password NULL, want 0", n)
			}
			// Racing swaps from one hash: exactly one wins, the others see
			// the winner's hash.
			const racers = 50
			var wg sync.WaitGroup
			var mu sync.Mutex
			won, lost := 0, 0
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err := a.SwapPasswordHash(ctx, key, "$h2", fmt.Sprintf("$r%d", i))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						won++
					case errors.Is(err, core.ErrPasswordHashChanged) && got != nil && strings.HasPrefix(deref(got.PasswordHash), "$r"):
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
			// Unlink and deleteUser take the hash with the account.
			if un, err := st.UnlinkAccount(ctx, oauth); err != nil || deref(un.PasswordHash) != "$set" {
				t.Errorf("UnlinkAccount: %+v, %v", un, err)
			}
			if _, err := st.DeleteUser(ctx, "u"); err != nil {
				t.Fatal(err)
			}
			if got, err := st.SwapPasswordHash(ctx, key, "$h2", "$h9"); got != nil || err != nil {
				t.Errorf("swap after deleteUser: %+v, %v; want nil, nil", got, err)
			}
		})
	}
}

// TestPresetsKeepNoUsernamesOrHashes: the Auth.js presets list
// getUserByUsername and swapPasswordHash as omitted, core.Store refuses a
// username and a hash before the adapter is called, and the adapter
// refuses them itself; with the columns named after the preset (and added
// by Migrate), both are kept.
func TestPresetsKeepNoUsernamesOrHashes(t *testing.T) {
	ctx := context.Background()
	for _, p := range []struct {
		name    string
		preset  Option
		backend string
	}{
		{"drizzle", AuthJSDrizzle(), "sqlite"}, {"kysely", AuthJSKysely(), "mysql"},
		{"prisma", AuthJSPrisma(), "postgres"}, {"pg", AuthJSPg(), "postgres"},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t, p.backend, false)
			a := migrated(t, db, p.preset)
			om := a.OmittedMethods()
			if !slicesContain(om, core.MethodGetUserByUsername) || !slicesContain(om, core.MethodSwapPasswordHash) {
				t.Fatalf("OmittedMethods = %v, want getUserByUsername and swapPasswordHash", om)
			}
			st := core.NewStore(a)
			id := p.name + "-1"
			if p.name == "pg" {
				id = "1"
			}
			if _, err := st.CreateUser(ctx, core.User{ID: id, Username: "ada"}); !errors.Is(err, core.ErrInvalidInput) {
				t.Errorf("Store.CreateUser with a username: %v, want ErrInvalidInput", err)
			}
			if _, err := a.CreateUser(ctx, core.User{ID: id, Username: "ada"}); !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), "WithUsernameColumn") {
				t.Errorf("CreateUser with a username: %v, want an InputError naming WithUsernameColumn", err)
			}
			if _, err := st.CreateUser(ctx, core.User{ID: id}); err != nil {
				t.Fatalf("CreateUser without e-mail or username: %v", err)
			}
			hash := core.Account{UserID: id, Type: core.AccountTypeCredentials, Provider: core.PasswordProvider, ProviderAccountID: id, PasswordHash: new("$h")}
			if _, err := st.LinkAccount(ctx, hash); !errors.Is(err, core.ErrInvalidInput) {
				t.Errorf("Store.LinkAccount with a hash: %v, want ErrInvalidInput", err)
			}
			if _, err := a.LinkAccount(ctx, hash); !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), "WithPasswordHashColumn") {
				t.Errorf("LinkAccount with a hash: %v, want an InputError naming WithPasswordHashColumn", err)
			}
			if _, err := a.SwapPasswordHash(ctx, hash.Key(), "", "$h"); !errors.Is(err, core.ErrInvalidInput) {
				t.Errorf("SwapPasswordHash: %v, want ErrInvalidInput", err)
			}
			if u, err := a.GetUserByUsername(ctx, "ada"); u != nil || err != nil {
				t.Errorf("GetUserByUsername: %+v, %v", u, err)
			}

			// The same tables with the columns named: Migrate adds them.
			b := migrated(t, db, p.preset, WithUsernameColumn("username"), WithPasswordHashColumn("password"))
			if om := b.OmittedMethods(); slicesContain(om, core.MethodGetUserByUsername) || slicesContain(om, core.MethodSwapPasswordHash) {
				t.Errorf("OmittedMethods with the columns named = %v", om)
			}
			sb := core.NewStore(b)
			if _, err := sb.UpdateUser(ctx, core.UserUpdate{ID: id, Username: core.Set("ada")}); err != nil {
				t.Fatalf("UpdateUser to a username: %v", err)
			}
			if u, err := sb.GetUserByUsername(ctx, "ada"); err != nil || u == nil || u.ID != id {
				t.Errorf("GetUserByUsername: %+v, %v", u, err)
			}
			if _, err := sb.LinkAccount(ctx, hash); err != nil {
				t.Fatalf("LinkAccount with a hash: %v", err)
			}
			if got, err := sb.SwapPasswordHash(ctx, hash.Key(), "$h", "$h2"); err != nil || deref(got.PasswordHash) != "$h2" {
				t.Errorf("SwapPasswordHash: %+v, %v", got, err)
			}
			// The first adapter, made before the columns existed, still
			// works and still keeps neither.
			if u, err := a.GetUser(ctx, id); err != nil || u == nil || u.Username != "" {
				t.Errorf("GetUser through the adapter without the column: %+v, %v", u, err)
			}
		})
	}
}

// oldSchemaDDL is what Migrate created before users without an e-mail
// address, usernames and password hashes: the DDL of an adapter told to
// keep no username or hash, with the e-mail column NOT NULL.
func oldSchemaDDL(t testing.TB, db *testDB) []string {
	t.Helper()
	old := mustNew(t, db, WithUsernameColumn(Omit), WithPasswordHashColumn(Omit))
	email := old.d.ident("email") + " " + old.d.colType(tKey) + ","
	var out []string
	for _, s := range old.DDL() {
		if strings.Contains(s, email) {
			s = strings.Replace(s, email, strings.TrimSuffix(email, ",")+" NOT NULL,", 1)
		}
		out = append(out, s)
	}
	if !strings.Contains(strings.Join(out, "\n"), "NOT NULL,") {
		t.Fatal("no e-mail column in the DDL")
	}
	return out
}

// TestMigrateFromPreviousSchema: on tables made by the previous schema
// (e-mail NOT NULL, no username, no password hash) with rows in them, the
// new adapter reads and writes as before without Migrate (refusing, with
// what to do, a user without e-mail and a username); Migrate makes the
// e-mail nullable and adds the two columns, keeping every row (on SQLite,
// whose table is rebuilt, also the table's own indexes and the accounts
// and sessions that reference it); afterwards everything works, twice
// over (Migrate again changes nothing).
func TestMigrateFromPreviousSchema(t *testing.T) {
	ctx := context.Background()
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			db := openDB(t, backend, false)
			execAll(t, db.sqlDB, oldSchemaDDL(t, db))
			old := mustNew(t, db, WithUsernameColumn(Omit), WithPasswordHashColumn(Omit))
			var idx string
			if backend == "sqlite" {
				idx = `CREATE INDEX "users_name_idx" ON "users" ("name")`
				execAll(t, db.sqlDB, []string{idx})
			}
			so := core.NewStore(old)
			for i := range 3 {
				id := fmt.Sprintf("old%d", i)
				if _, err := so.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"}); err != nil {
					t.Fatal(err)
				}
				if _, err := so.LinkAccount(ctx, core.Account{UserID: id, Type: core.AccountTypeOAuth, Provider: "p", ProviderAccountID: id}); err != nil {
					t.Fatal(err)
				}
				if _, err := so.CreateSession(ctx, core.Session{SessionToken: "s-" + id, UserID: id, Expires: time.Now().Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
			}

			a := mustNew(t, db)
			st := core.NewStore(a)
			if u, err := st.GetUser(ctx, "old1"); err != nil || u == nil || u.Email != "old1@example.com" {
				t.Fatalf("GetUser before Migrate: %+v, %v", u, err)
			}
			if acc, err := st.GetAccount(ctx, "old1", "p"); err != nil || acc == nil || acc.PasswordHash != nil {
				t.Fatalf("GetAccount before Migrate: %+v, %v", acc, err)
			}
			_, err := st.CreateUser(ctx, core.User{ID: "none"})
			var ie *core.InputError
			if !errors.As(err, &ie) || ie.Field != "email" || !strings.Contains(err.Error(), "Migrate") {
				t.Errorf("CreateUser without e-mail before Migrate: %v, want an InputError on email saying to run Migrate", err)
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "named", Email: "n@example.com", Username: "named"}); !errors.As(err, &ie) || ie.Field != "username" || !strings.Contains(err.Error(), "Migrate") {
				t.Errorf("CreateUser with a username before Migrate: %v, want an InputError on username saying to run Migrate", err)
			}
			if _, err := st.LinkAccount(ctx, core.Account{UserID: "old1", Type: core.AccountTypeCredentials, Provider: core.PasswordProvider, ProviderAccountID: "old1", PasswordHash: new("$h")}); !errors.As(err, &ie) || ie.Field != "passwordHash" {
				t.Errorf("LinkAccount with a hash before Migrate: %v, want an InputError on passwordHash", err)
			}

			for range 2 {
				if err := a.Migrate(ctx); err != nil {
					t.Fatalf("Migrate: %v", err)
				}
			}
			for table, want := range map[string]int{a.names.Users: 3, a.names.Accounts: 3, a.names.Sessions: 3} {
				if n := count(t, db.sqlDB, "SELECT COUNT(*) FROM "+a.d.table(table)); n != want {
					t.Errorf("%d rows in %s after Migrate, want %d", n, table, want)
				}
			}
			if backend == "sqlite" {
				if n := count(t, db.sqlDB, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN ('users_name_idx', 'users_username_key')`); n != 2 {
					t.Errorf("%d of the users table's indexes after the rebuild, want 2 (its own and the username's)", n)
				}
				if n := count(t, db.sqlDB, `SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%authport_rebuild%'`); n != 0 {
					t.Errorf("the rebuild left %d objects behind", n)
				}
				if n := count(t, db.sqlDB, `SELECT COUNT(*) FROM pragma_foreign_key_check`); n != 0 {
					t.Errorf("%d foreign key violations after the rebuild", n)
				}
			}
			for _, id := range []string{"none1", "none2"} {
				if _, err := st.CreateUser(ctx, core.User{ID: id}); err != nil {
					t.Fatalf("CreateUser without e-mail after Migrate: %v", err)
				}
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "named", Username: "named"}); err != nil {
				t.Fatalf("CreateUser with a username after Migrate: %v", err)
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "named2", Username: "named"}); !errors.Is(err, core.ErrAlreadyExists) {
				t.Errorf("a taken username after Migrate: %v, want ErrAlreadyExists (the column is unique)", err)
			}
			if _, err := st.CreateUser(ctx, core.User{ID: "dup", Email: "old2@example.com"}); !errors.Is(err, core.ErrAlreadyExists) {
				t.Errorf("a taken e-mail after Migrate: %v, want ErrAlreadyExists (still unique)", err)
			}
			if _, err := st.LinkAccount(ctx, core.Account{UserID: "named", Type: core.AccountTypeCredentials, Provider: core.PasswordProvider, ProviderAccountID: "named", PasswordHash: new("$h")}); err != nil {
				t.Fatalf("LinkAccount with a hash after Migrate: %v", err)
			}
			if got, err := st.SwapPasswordHash(ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "named"}, "$h", "$h2"); err != nil || deref(got.PasswordHash) != "$h2" {
				t.Errorf("SwapPasswordHash after Migrate: %+v, %v", got, err)
			}
			// Foreign keys still cascade (SQLite: on every connection).
			for i := range 3 {
				id := fmt.Sprintf("old%d", i)
				if su, err := st.GetSessionAndUser(ctx, "s-"+id); err != nil || su == nil || su.User.Email != id+"@example.com" {
					t.Errorf("GetSessionAndUser of a session made before Migrate: %+v, %v", su, err)
				}
				if _, err := st.DeleteUser(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			if n := count(t, db.sqlDB, "SELECT COUNT(*) FROM "+a.d.table(a.names.Sessions)); n != 0 {
				t.Errorf("%d sessions left after deleting their users: the foreign keys no longer cascade", n)
			}
			if n := count(t, db.sqlDB, "SELECT COUNT(*) FROM "+a.d.table(a.names.Accounts)+" WHERE "+a.d.ident("provider")+" = 'p'"); n != 0 {
				t.Errorf("%d accounts left after deleting their users", n)
			}
		})
	}
}

func TestDropNotNull(t *testing.T) {
	for _, tc := range []struct{ ddl, col, want string }{
		{`CREATE TABLE "users" ("id" TEXT NOT NULL, "email" TEXT NOT NULL, CONSTRAINT "users_email_key" UNIQUE ("email"))`, "email",
			`("id" TEXT NOT NULL, "email" TEXT , CONSTRAINT "users_email_key" UNIQUE ("email"))`},
		{"create table \"User\" (\"id\" varchar primary key, \"name\" text, \"email\" text not null unique, \"emailVerified\" timestamptz default CURRENT_TIMESTAMP)", "email",
			`("id" varchar primary key, "name" text, "email" text  unique, "emailVerified" timestamptz default CURRENT_TIMESTAMP)`},
		{"CREATE TABLE t (`Email` TEXT CHECK (Email IS NOT NULL) NOT NULL DEFAULT 'not null', x) WITHOUT ROWID", "email",
			"(`Email` TEXT CHECK (Email IS NOT NULL)  DEFAULT 'not null', x) WITHOUT ROWID"},
		{`CREATE TABLE t ([email] TEXT, -- NOT NULL once
  y INT NOT NULL)`, "email", ""},
	} {
		got, changed, err := dropNotNull(tc.ddl, tc.col)
		if err != nil || changed != (tc.want != "") || (changed && got != tc.want) {
			t.Errorf("dropNotNull(%q)\n = %q, %v, %v\nwant %q", tc.ddl, got, changed, err, tc.want)
		}
	}
	if _, _, err := dropNotNull(`CREATE TABLE t (a TEXT)`, "email"); err == nil {
		t.Error("dropNotNull of a missing column: no error")
	}
}

// TestPrismaSchemaWithoutEmail: the documented Prisma schema's User.email
// is NOT NULL; authport refuses a user without one there, saying to run
// Migrate, and after Migrate (under the preset) keeps two, which Prisma's
// String? would then read as null.
func TestPrismaSchemaWithoutEmail(t *testing.T) {
	ctx := context.Background()
	db := openPostgres(t, false)
	execAll(t, db.sqlDB, prismaPostgresDDL)
	a := mustNew(t, db, AuthJSPrisma())
	st := core.NewStore(a)
	var ie *core.InputError
	if _, err := st.CreateUser(ctx, core.User{ID: "p0"}); !errors.As(err, &ie) || ie.Field != "email" || !strings.Contains(ie.Reason, "Migrate") {
		t.Fatalf("CreateUser without e-mail on Prisma's User: %v; want an InputError on email saying to run Migrate", err)
	}
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"p1", "p2"} {
		if _, err := st.CreateUser(ctx, core.User{ID: id}); err != nil {
			t.Fatalf("CreateUser without e-mail after Migrate: %v", err)
		}
	}
	if n := rawNullCount(t, a, db, "User", "email"); n != 2 {
		t.Errorf("%d Prisma users with email NULL, want 2", n)
	}
	if _, err := st.CreateUser(ctx, core.User{ID: "p3", Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateUser(ctx, core.User{ID: "p4", Email: "a@example.com"}); !errors.Is(err, core.ErrAlreadyExists) {
		t.Errorf("a taken address on Prisma's User after Migrate: %v, want ErrAlreadyExists (User_email_key kept)", err)
	}
}
