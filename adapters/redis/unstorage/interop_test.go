package unstorage

import (
	"errors"
	"github.com/authport/authport/adapters/redis/internal/redistest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance/interop"
	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// TestInteropAuthJS runs the Auth.js interop suite (conformance/interop)
// with Auth.js's own @auth/unstorage-adapter (over unstorage's Redis
// driver; versions pinned in interop/package.json), in a Node process
// through interop/unstorage.mjs, against the same Redis database and base
// as an authport adapter of this package.
func TestInteropAuthJS(t *testing.T) {
	interop.Run(t, interop.Pairing{Name: "unstorage-adapter", Setup: func(t *testing.T) *interop.Fixture {
		f, _ := setupInterop(t)
		return f
	}})
}

func setupInterop(t *testing.T) (*interop.Fixture, rawUView) {
	url := provision.Redis(t)
	c := redistest.SingleNode(t)
	t.Cleanup(func() { _ = c.Close() })
	a, raw := unstorageFixture(t, c)
	node := interop.Start(t, nodeproc.Config{Dir: "interop", Script: "unstorage.mjs", Need: []string{"@auth/unstorage-adapter/index.js"}},
		map[string]string{"url": url, "base": strings.TrimSuffix(a.Prefix(), ":")}, nil)
	return &interop.Fixture{
		Adapter: core.NewStore(a), Node: node, // through the checked layer, as core/auth calls it
		Leftovers: func(t testing.TB, u interop.Trace) []string {
			ss := append([]string{u.ID, u.Email}, u.Sessions...)
			for _, k := range u.Accounts {
				ss = append(ss, k.Provider+":"+k.ProviderAccountID)
			}
			return raw.mentioning(t, append(ss, u.Credentials...)...)
		},
		GetAccount: true, NodeAuthenticators: true, Authenticators: true,
		// @auth/unstorage-adapter reads, then deletes a verification token;
		// its deleteUser leaves the user's authenticators and authport's
		// index sets (TestInteropNodeDeleteUserLeaves names them). It keeps one
		// account per user in account:by-user-id.
		AtomicUse: false, NodeDeleteLeaves: true, OneAccountPerUser: true,
	}, raw
}

// mentioning returns the keys under the base, without it, whose name or
// value mentions any of ss, sorted.
func (r rawUView) mentioning(t testing.TB, ss ...string) []string {
	t.Helper()
	var out []string
	for _, s := range ss {
		m, err := r.Mentions(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range m {
			if k = strings.TrimPrefix(k, r.Prefix); !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestInteropNodeDeleteUserLeaves: Auth.js's deleteUser deletes the user,
// its e-mail key and what unstorage's account and session by-user-id keys
// name; not the authenticators, nor authport's own index sets.
func TestInteropNodeDeleteUserLeaves(t *testing.T) {
	f, raw := setupInterop(t)
	ctx := t.Context()
	u := core.User{ID: "go-del-1", Email: "del-g@example.com"}
	if _, err := f.Adapter.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Adapter.LinkAccount(ctx, core.Account{UserID: u.ID, Type: core.AccountTypeOAuth, Provider: "github", ProviderAccountID: "g1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Adapter.CreateSession(ctx, core.Session{SessionToken: "g-s1", UserID: u.ID, Expires: interop.At(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Adapter.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "g-c1", CredentialPublicKey: "pk", ProviderAccountID: "g1", UserID: u.ID}); err != nil {
		t.Fatal(err)
	}
	if err := f.Node.Do(map[string]any{"method": "deleteUser", "args": []any{u.ID}}, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"authenticator:by-user-id:" + u.ID, "authenticator:g-c1", uOwnAccounts + u.ID, uOwnAuths + u.ID, uOwnSessions + u.ID}
	if left := raw.mentioning(t, u.ID, u.Email, "g-s1", "github:g1", "g-c1"); !slices.Equal(left, want) {
		t.Errorf("Auth.js's deleteUser left %q, want exactly %q", left, want)
	}
}

// TestInteropNodeMovesEmail: Auth.js's updateUser moving the e-mail leaves
// the old e-mail's key behind; it names nobody for authport and does not
// block the e-mail.
func TestInteropNodeMovesEmail(t *testing.T) {
	f, _ := setupInterop(t)
	ctx := t.Context()
	var nu interop.User
	call := func(out any, method string, args ...any) {
		t.Helper()
		if err := f.Node.Do(map[string]any{"method": method, "args": args}, out); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	call(&nu, "createUser", map[string]any{"id": "node-mover", "email": "ada@example.com", "emailVerified": nil})
	call(nil, "updateUser", map[string]any{"id": string(nu.ID), "email": "ada@new.example.com"})
	if u, err := f.Adapter.GetUserByEmail(ctx, "ada@example.com"); u != nil || err != nil {
		t.Errorf("GetUserByEmail of the e-mail Auth.js moved away from: %+v, %v", u, err)
	}
	if u, err := f.Adapter.GetUserByEmail(ctx, "ada@new.example.com"); err != nil || u == nil || u.ID != string(nu.ID) {
		t.Errorf("GetUserByEmail of the e-mail Auth.js moved to: %+v, %v", u, err)
	}
	if _, err := f.Adapter.CreateUser(ctx, core.User{ID: "go-after-move", Email: "ada@example.com"}); err != nil {
		t.Errorf("CreateUser with the e-mail Auth.js moved away from: %v", err)
	}
	if _, err := f.Adapter.UpdateUser(ctx, core.UserUpdate{ID: "go-after-move", Email: core.Set("ada@new.example.com")}); !errors.Is(err, core.ErrAlreadyExists) {
		t.Errorf("UpdateUser to the e-mail Auth.js's user holds: %v, want ErrAlreadyExists", err)
	}
	var byEmail *interop.User
	call(&byEmail, "getUserByEmail", "ada@example.com")
	if byEmail == nil || byEmail.ID != "go-after-move" {
		t.Errorf("Auth.js getUserByEmail of the reused e-mail: %+v", byEmail)
	}
}

// TestInteropNodeSessionInventory: Auth.js's @auth/unstorage-adapter reads
// a session whose metadata authport stored as fields of its document, and
// its updateSession keeps them; authport lists the sessions Auth.js
// created (the one its by-user-id key names) beside its own, and
// deleteSessionsByUserId ends them for Auth.js too.
func TestInteropNodeSessionInventory(t *testing.T) {
	f, raw := setupInterop(t)
	ctx := t.Context()
	call := func(out any, method string, args ...any) {
		t.Helper()
		if err := f.Node.Do(map[string]any{"method": method, "args": args}, out); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	store := f.Adapter.(*core.Store)
	u := core.User{ID: "go-inventory", Email: "inventory@example.com"}
	if _, err := f.Adapter.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	mine := core.Session{SessionToken: "go-inv-s1", UserID: u.ID, Expires: interop.At(time.Hour),
		CreatedAt: interop.At(-time.Hour), UpdatedAt: interop.At(-time.Minute), IPAddress: "2001:db8::1", UserAgent: "Firefox/145.0 ü"}
	if _, err := f.Adapter.CreateSession(ctx, mine); err != nil {
		t.Fatal(err)
	}
	mine = mine.Normalize()

	var su *struct {
		Session map[string]any `json:"session"`
	}
	call(&su, "getSessionAndUser", mine.SessionToken)
	if su == nil || su.Session["sessionToken"] != mine.SessionToken || su.Session["userAgent"] != mine.UserAgent {
		t.Fatalf("Auth.js's getSessionAndUser of a session with metadata: %+v", su)
	}
	later := interop.At(2 * time.Hour)
	call(nil, "updateSession", map[string]any{"sessionToken": mine.SessionToken, "expires": interop.Date(later)})
	mine.Expires = core.NormalizeTime(later)

	theirs := "node-inv-s2"
	call(nil, "createSession", map[string]any{"sessionToken": theirs, "userId": u.ID, "expires": interop.Date(interop.At(time.Hour))})
	list, err := store.ListSessionsByUserID(ctx, u.ID)
	if err != nil || len(list) != 2 || list[0] != mine || list[1].SessionToken != theirs || !list[1].CreatedAt.IsZero() {
		t.Fatalf("listSessionsByUserId after Auth.js's update and create = %+v, %v; want %+v (its metadata kept by Auth.js's update), then Auth.js's %q", list, err, mine, theirs)
	}

	if n, err := store.DeleteSessionsByUserID(ctx, u.ID, mine.SessionToken); n != 1 || err != nil {
		t.Fatalf("deleteSessionsByUserId of the others = %d, %v; want 1", n, err)
	}
	var gone *interop.SessionAndUser
	call(&gone, "getSessionAndUser", theirs)
	if gone != nil {
		t.Errorf("Auth.js still reads the session authport deleted: %+v", gone)
	}
	if left := raw.mentioning(t, theirs); len(left) != 0 {
		t.Errorf("the deleted session is still mentioned by %q", left)
	}
	if list, err := store.ListSessionsByUserID(ctx, u.ID); err != nil || len(list) != 1 || list[0] != mine {
		t.Errorf("listSessionsByUserId after deleting the others = %+v, %v; want only %+v", list, err, mine)
	}
}

// TestInteropNodeUsersWithoutEmail: users without an e-mail address both
// ways. Auth.js writes a profile without one as "email": null and its
// e-mail key as user:email:null; authport reads two such users, finds
// neither by the address "null", and its deleteUser removes that key with
// the user. Auth.js reads the e-mail-less user authport wrote, and finds by
// its new address a user authport gave one.
func TestInteropNodeUsersWithoutEmail(t *testing.T) {
	f, raw := setupInterop(t)
	ctx := t.Context()
	call := func(out any, method string, args ...any) {
		t.Helper()
		if err := f.Node.Do(map[string]any{"method": method, "args": args}, out); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	var n1, n2 interop.User
	call(&n1, "createUser", map[string]any{"email": nil, "emailVerified": nil, "name": "X user"})
	call(&n2, "createUser", map[string]any{"email": nil, "emailVerified": nil, "name": "Another"})
	for _, nu := range []interop.User{n1, n2} {
		u, err := f.Adapter.GetUser(ctx, string(nu.ID))
		if err != nil || u == nil || u.Email != "" || u.Name == nil || *u.Name != *nu.Name {
			t.Errorf("GetUser of Auth.js's user without e-mail %s: %+v, %v", nu.ID, u, err)
		}
	}
	if u, err := f.Adapter.GetUserByEmail(ctx, "null"); u != nil || err != nil {
		t.Errorf(`GetUserByEmail("null"): %+v, %v; want nobody`, u, err)
	}
	if _, err := f.Adapter.CreateUser(ctx, core.User{ID: "go-no-email"}); err != nil {
		t.Fatal(err)
	}
	var js *interop.User
	call(&js, "getUser", "go-no-email")
	if js == nil || js.Email != nil {
		t.Errorf("Auth.js getUser of authport's user without e-mail: %+v", js)
	}
	if _, err := f.Adapter.UpdateUser(ctx, core.UserUpdate{ID: string(n1.ID), Email: core.Set("found@example.com")}); err != nil {
		t.Fatal(err)
	}
	call(&js, "getUserByEmail", "found@example.com")
	if js == nil || js.ID != n1.ID {
		t.Errorf("Auth.js getUserByEmail of the address authport gave: %+v", js)
	}
	if _, err := f.Adapter.DeleteUser(ctx, string(n2.ID)); err != nil {
		t.Fatal(err)
	}
	if left := raw.mentioning(t, string(n2.ID)); len(left) != 0 {
		t.Errorf("keys left mentioning the deleted user: %v", left)
	}
}
