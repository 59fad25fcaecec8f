package gormadapter

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// authJSPgWithRole is the users table of @auth/pg-adapter's documented
// schema with the extra columns an application added: a role and a login
// count.
const authJSPgWithRole = `CREATE TABLE users (
  id SERIAL,
  name VARCHAR(255),
  email VARCHAR(255),
  "emailVerified" TIMESTAMPTZ,
  image TEXT,
  role VARCHAR(32),
  "loginCount" INTEGER,
  PRIMARY KEY (id)
)`

// userdataNode runs interop/userdata.mjs once (Auth.js's pg adapter and an
// application writing its role column) and decodes its JSON output.
func userdataNode(t *testing.T, node, url, schema string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(node, append([]string{"userdata.mjs", url, schema}, args...)...)
	cmd.Dir = "interop"
	b, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node userdata.mjs %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node userdata.mjs %s printed %q: %v", strings.Join(args, " "), b, err)
	}
}

// An Auth.js schema with extra users columns, shared by an Auth.js app and
// authport: what Go writes through User.Data, Auth.js's own adapter reads
// as the row's columns; what the Auth.js app writes to its column, Go
// reads as Data; Auth.js's updateUser of a standard field keeps it.
func TestInteropUserDataColumns(t *testing.T) {
	node := nodeproc.Check(t, "interop", "@auth/pg-adapter/package.json", "pg/package.json")
	url := provision.Postgres(t)
	db := openPostgres(t, false)
	execAll(t, db.sqlDB, []string{authJSPgWithRole})
	ctx := context.Background()
	a := mustNew(t, db, AuthJSPg())
	st := core.NewStore(a)

	// Go writes; Auth.js reads.
	id, err := a.NewUserID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	role := core.UserField[string]{Name: "role"}
	logins := core.UserField[int]{Name: "loginCount"}
	u := core.User{ID: id, Email: "go@example.com"}
	if err := role.Put(&u, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := logins.Put(&u, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateUser(ctx, u); err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	var js struct {
		Email      string `json:"email"`
		Role       string `json:"role"`
		LoginCount int    `json:"loginCount"`
	}
	userdataNode(t, node, url, db.name, &js, "get", "go@example.com")
	if js.Email != "go@example.com" || js.Role != "admin" || js.LoginCount != 3 {
		t.Errorf("Auth.js's getUserByEmail of the user Go wrote: %+v, want role admin, loginCount 3", js)
	}

	// The Auth.js app writes; Go reads.
	var created struct{ ID string }
	userdataNode(t, node, url, db.name, &created, "create", "js@example.com", "editor")
	got, err := st.GetUserByEmail(ctx, "js@example.com")
	if err != nil || got == nil {
		t.Fatalf("GetUserByEmail of the Auth.js user: %v, %v", got, err)
	}
	if r, ok, err := role.Get(got); err != nil || !ok || r != "editor" {
		t.Errorf("role of the Auth.js user as Go reads it: %q, %v, %v; want editor", r, ok, err)
	}
	if _, ok, _ := logins.Get(got); ok {
		t.Errorf("loginCount the Auth.js app never wrote reads back as %s", got.Data["loginCount"])
	}

	// Go changes one field of the Auth.js user; Auth.js's updateUser of
	// the name afterwards keeps it, and Go still reads both.
	up := core.UserUpdate{ID: created.ID}
	if err := logins.Set(&up, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateUser(ctx, up); err != nil {
		t.Fatalf("UpdateUser: %v", err)
	}
	var renamed map[string]any
	userdataNode(t, node, url, db.name, &renamed, "rename", created.ID, "Renamed")
	got, err = st.GetUser(ctx, created.ID)
	if err != nil || got == nil || got.Name == nil || *got.Name != "Renamed" {
		t.Fatalf("GetUser after Auth.js's updateUser: %+v, %v", got, err)
	}
	if r, _, _ := role.Get(got); r != "editor" {
		t.Errorf("role after both updates: %q, want editor", r)
	}
	if n, _, _ := logins.Get(got); n != 1 {
		t.Errorf("loginCount after both updates: %d, want 1", n)
	}
}
