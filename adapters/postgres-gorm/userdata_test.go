package gormadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/core"
)

// extraColumnsDDL adds application columns of every kind to the users
// table, in each dialect's types, as an Auth.js application's migration
// would.
func extraColumnsDDL(dialect string) []string {
	types := map[string][5]string{
		"postgres": {"TEXT", "INTEGER", "BOOLEAN", "JSONB", "TIMESTAMPTZ(3)"},
		"mysql":    {"VARCHAR(64)", "INT", "BOOLEAN", "JSON", "DATETIME(3)"},
		"sqlite":   {"TEXT", "INTEGER", "BOOLEAN", "JSON", "DATETIME"},
	}[dialect]
	q := func(s string) string {
		if dialect == "mysql" {
			return "`" + s + "`"
		}
		return `"` + s + `"`
	}
	var out []string
	for i, c := range []string{"role", "level", "active", "prefs", "since"} {
		out = append(out, "ALTER TABLE "+q("users")+" ADD COLUMN "+q(c)+" "+types[i])
	}
	return out
}

// withExtras runs test in parallel on each backend, on a new database
// with two adapters: before, which created the tables, after which the
// extra columns were added, and after, made then.
func withExtras(t *testing.T, test func(t *testing.T, before, after *Adapter, db *testDB)) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			db := openDB(t, backend, false)
			before := migrated(t, db)
			for _, s := range extraColumnsDDL(backend) {
				if _, err := db.sqlDB.ExecContext(context.Background(), s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			test(t, before, mustNew(t, db), db)
		})
	}
}

func jsonEqual(t *testing.T, got, want map[string]json.RawMessage) {
	t.Helper()
	norm := func(m map[string]json.RawMessage) string {
		v := map[string]any{}
		for k, raw := range m {
			var x any
			if err := json.Unmarshal(raw, &x); err != nil {
				t.Fatalf("field %s: %q is not JSON: %v", k, raw, err)
			}
			v[k] = x
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if g, w := norm(got), norm(want); g != w {
		t.Errorf("Data = %s, want %s", g, w)
	}
}

func data(kv ...string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			m[kv[i]] = nil
			continue
		}
		m[kv[i]] = json.RawMessage(kv[i+1])
	}
	return m
}

// Application fields are the users table's own columns: written through
// Data, read back with their JSON types, kept when an update names other
// fields, written and read by plain SQL, refused (with the column to add)
// when no column has the name, and found when the column is added while
// the adapter runs.
func TestUserDataColumns(t *testing.T) {
	withExtras(t, func(t *testing.T, first, a *Adapter, db *testDB) {
		ctx := context.Background()
		st := core.NewStore(a)
		all := data("role", `"admin"`, "level", "3", "active", "true", "prefs", `{"theme":"dark","n":[1,2]}`,
			"since", `"2024-05-06T07:08:09.123Z"`)
		u, err := st.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com", Data: all})
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		jsonEqual(t, u.Data, all)
		got, err := st.GetUser(ctx, "u1")
		if err != nil || got == nil {
			t.Fatalf("GetUser: %v, %v", got, err)
		}
		jsonEqual(t, got.Data, all)

		// A user without fields has nil Data.
		if _, err := st.CreateUser(ctx, core.User{ID: "u2", Email: "u2@example.com"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.GetUserByEmail(ctx, "u2@example.com"); got == nil || got.Data != nil {
			t.Errorf("user without fields: %+v", got)
		}

		// An update names one field; the others stay, even one
		// written meanwhile by plain SQL.
		if _, err := db.sqlDB.ExecContext(ctx, rawSQL(db.dialect, `UPDATE "users" SET "role" = 'editor' WHERE "id" = 'u1'`)); err != nil {
			t.Fatal(err)
		}
		got, err = st.UpdateUser(ctx, core.UserUpdate{ID: "u1", Data: data("level", "4", "active", "")})
		if err != nil {
			t.Fatalf("UpdateUser: %v", err)
		}
		want := data("role", `"editor"`, "level", "4", "prefs", `{"theme":"dark","n":[1,2]}`,
			"since", `"2024-05-06T07:08:09.123Z"`)
		jsonEqual(t, got.Data, want)
		var active *bool
		if err := db.sqlDB.QueryRowContext(ctx, rawSQL(db.dialect, `SELECT "active" FROM "users" WHERE "id" = 'u1'`)).Scan(&active); err != nil || active != nil {
			t.Errorf("removed field: column holds %v, %v; want NULL", active, err)
		}
		su, err := st.CreateSession(ctx, core.Session{SessionToken: "s1", UserID: "u1", Expires: first.now().Add(3600e9)})
		if err != nil {
			t.Fatal(err)
		}
		if sau, err := st.GetSessionAndUser(ctx, su.SessionToken); err != nil || sau == nil {
			t.Fatalf("GetSessionAndUser: %v, %v", sau, err)
		} else {
			jsonEqual(t, sau.User.Data, want)
		}

		// No column of that name: an InputError naming the column to
		// add, nothing written.
		_, err = st.UpdateUser(ctx, core.UserUpdate{ID: "u1", Name: core.Set(new("N")), Data: data("tenant", `"t1"`)})
		var ie *core.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "ADD COLUMN") || !strings.Contains(err.Error(), "tenant") {
			t.Errorf("unknown field: %v, want an InputError saying which column to add", err)
		}
		if got, _ := st.GetUser(ctx, "u1"); got.Name != nil {
			t.Errorf("a refused update changed the name to %q", *got.Name)
		}
		// A value the column cannot hold: an InputError.
		if _, err := st.UpdateUser(ctx, core.UserUpdate{ID: "u1", Data: data("level", `"high"`)}); !errors.As(err, &ie) {
			t.Errorf("a string for an integer column: %v, want an InputError", err)
		}

		// The column added while the adapter runs is found on the
		// first write that names it.
		ddl := fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s TEXT", a.d.table("users"), a.d.ident("tenant"))
		if _, err := db.sqlDB.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		got, err = st.UpdateUser(ctx, core.UserUpdate{ID: "u1", Data: data("tenant", `"t1"`)})
		if err != nil {
			t.Fatalf("UpdateUser after ADD COLUMN: %v", err)
		}
		want["tenant"] = json.RawMessage(`"t1"`)
		jsonEqual(t, got.Data, want)
		if got, _ := st.DeleteUser(ctx, "u1"); got == nil {
			t.Fatal("DeleteUser found nothing")
		} else {
			jsonEqual(t, got.Data, want)
		}
	})
}

// Two adapters updating different fields of one user at the same time
// lose neither's writes.
func TestUserDataConcurrentFields(t *testing.T) {
	withExtras(t, func(t *testing.T, a, b *Adapter, _ *testDB) {
		ctx := context.Background()
		if _, err := core.NewStore(b).CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		const n = 10
		errs := make(chan error, 2*n)
		for i := range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, err := core.NewStore(a).UpdateUser(ctx, core.UserUpdate{ID: "u", Data: data("role", fmt.Sprintf(`"r%d"`, i))})
				errs <- err
			}()
			go func() {
				defer wg.Done()
				_, err := core.NewStore(b).UpdateUser(ctx, core.UserUpdate{ID: "u", Data: data("level", fmt.Sprint(i))})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		got, err := core.NewStore(a).GetUser(ctx, "u")
		if err != nil || got == nil || got.Data["role"] == nil || got.Data["level"] == nil {
			t.Fatalf("after concurrent updates: %+v, %v; want both fields", got, err)
		}
	})
}

// rawSQL adapts a statement with double-quoted identifiers to MySQL.
func rawSQL(dialect, s string) string {
	if dialect == "mysql" {
		return strings.ReplaceAll(s, `"`, "`")
	}
	return s
}
