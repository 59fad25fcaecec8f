package interop

import (
	"context"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// usersWithoutEmail is the case of users without an e-mail address, run
// where [Fixture.EmailOptional] says both sides keep them. Auth.js's OAuth
// sign-up creates such a user for a profile that gives no address (X,
// some GitHub and Discord accounts) by calling its adapter's createUser
// with email null; authport stores core.User.Email "" as its null.
//
// Both directions, two users each, so that two users without an address
// coexist under the store's unique e-mail index on each side: Auth.js
// creates two (and links an account and makes a session for the first),
// and authport reads them with getUser, getUserByAccount and
// getSessionAndUser; authport creates two (with an account and a session
// for the first), and Auth.js reads them the same three ways. Then each
// side updates a user the other made, and an address given and taken away
// again reads back as none on the other side.
func (f *Fixture) usersWithoutEmail(t *testing.T) {
	ctx := context.Background()
	a := f.Adapter

	// Auth.js writes; authport reads.
	var node [2]User
	for i := range node {
		var u *User
		f.must(t, &u, "createUser", map[string]any{"id": Unique("ignored"), "email": nil, "emailVerified": nil,
			"name": "No Mail (Node)", "image": nil})
		if u == nil || u.ID == "" || u.Email != nil {
			t.Fatalf("Auth.js createUser with email null returned %+v", u)
		}
		node[i] = *u
	}
	checkUser := func(what string, u *core.User, id ID) {
		t.Helper()
		if u == nil {
			t.Fatalf("%s: authport found no user without e-mail written by Auth.js", what)
		}
		if u.ID != string(id) || u.Email != "" || u.EmailVerified != nil || !eq(u.Name, ptr("No Mail (Node)")) {
			t.Errorf("%s: %+v, want id %q, e-mail \"\", name %q", what, u, id, "No Mail (Node)")
		}
	}
	for _, nu := range node {
		u, err := a.GetUser(ctx, string(nu.ID))
		if err != nil {
			t.Fatalf("getUser of a user without e-mail written by Auth.js: %v", err)
		}
		checkUser("getUser", u, nu.ID)
	}
	if u, err := a.GetUserByEmail(ctx, ""); u != nil || err != nil {
		t.Errorf("getUserByEmail(\"\") with users without e-mail stored: %+v, %v; want nil, nil", u, err)
	}
	pa := Unique("x-pa")
	f.must(t, nil, "linkAccount", map[string]any{"userId": string(node[0].ID), "type": "oauth", "provider": "twitter", "providerAccountId": pa})
	u, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: "twitter", ProviderAccountID: pa})
	if err != nil {
		t.Fatalf("getUserByAccount: %v", err)
	}
	checkUser("getUserByAccount", u, node[0].ID)
	tok, exp := Unique("sess-nomail"), At(24*time.Hour)
	f.must(t, nil, "createSession", map[string]any{"sessionToken": tok, "userId": string(node[0].ID), "expires": Date(exp)})
	su, err := a.GetSessionAndUser(ctx, tok)
	if err != nil || su == nil {
		t.Fatalf("getSessionAndUser of Auth.js's session of a user without e-mail: %v, %v", su, err)
	}
	checkUser("getSessionAndUser", &su.User, node[0].ID)

	// authport writes; Auth.js reads.
	var mine [2]*core.User
	for i := range mine {
		id := Unique("go-nomail")
		if f.NewUserID != nil {
			id = f.NewUserID(t)
		}
		u, err := a.CreateUser(ctx, core.User{ID: id, Name: ptr("No Mail (Go)")})
		if err != nil || u == nil || u.Email != "" {
			t.Fatalf("CreateUser without e-mail (the %d. of two): %+v, %v", i+1, u, err)
		}
		mine[i] = u
	}
	checkNode := func(what string, u *User, id string) {
		t.Helper()
		if u == nil {
			t.Fatalf("%s: Auth.js found no user without e-mail written by authport", what)
		}
		if string(u.ID) != id || u.Email != nil || u.EmailVerified != nil || !eq(u.Name, ptr("No Mail (Go)")) {
			t.Errorf("%s: id %q email %s emailVerified %v name %s; want %q, null, null, %q", what, u.ID, show(u.Email), u.EmailVerified, show(u.Name), id, "No Mail (Go)")
		}
	}
	for _, gu := range mine {
		var nu *User
		f.must(t, &nu, "getUser", gu.ID)
		checkNode("getUser", nu, gu.ID)
	}
	gpa := Unique("gh-pa")
	if _, err := a.LinkAccount(ctx, core.Account{UserID: mine[0].ID, Type: core.AccountTypeOAuth, Provider: "github", ProviderAccountID: gpa}); err != nil {
		t.Fatalf("linkAccount: %v", err)
	}
	var nu *User
	f.must(t, &nu, "getUserByAccount", map[string]any{"provider": "github", "providerAccountId": gpa})
	checkNode("getUserByAccount", nu, mine[0].ID)
	gtok := Unique("sess-nomail-go")
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: gtok, UserID: mine[0].ID, Expires: At(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var nsu *SessionAndUser
	f.must(t, &nsu, "getSessionAndUser", gtok)
	if nsu == nil {
		t.Fatal("Auth.js found no session of authport's user without e-mail")
	}
	checkNode("getSessionAndUser", &nsu.User, mine[0].ID)

	// Each side updates a user the other made; neither invents an address.
	f.must(t, nil, "updateUser", map[string]any{"id": mine[1].ID, "name": "Renamed by Node"})
	if g, err := a.GetUser(ctx, mine[1].ID); err != nil || g == nil || g.Email != "" || !eq(g.Name, ptr("Renamed by Node")) {
		t.Errorf("authport reads its user without e-mail after Auth.js's updateUser as %+v, %v", g, err)
	}
	addr := Unique("later") + "@example.com"
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: string(node[1].ID), Email: core.Set(addr)}); err != nil {
		t.Fatalf("updateUser giving Auth.js's user an address: %v", err)
	}
	var byEmail *User
	f.must(t, &byEmail, "getUserByEmail", addr)
	if byEmail == nil || byEmail.ID != node[1].ID {
		t.Errorf("Auth.js's getUserByEmail of the address authport gave its user: %+v", byEmail)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: string(node[1].ID), Email: core.Set("")}); err != nil {
		t.Fatalf("updateUser taking the address away: %v", err)
	}
	nu = nil
	f.must(t, &nu, "getUser", string(node[1].ID))
	if nu == nil || nu.Email != nil {
		t.Errorf("Auth.js reads the user whose address authport removed as %+v, want email null", nu)
	}
	byEmail = nil
	f.must(t, &byEmail, "getUserByEmail", addr)
	if byEmail != nil {
		t.Errorf("Auth.js still finds the removed address: %+v", byEmail)
	}
}
