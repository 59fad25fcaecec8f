package interop

import (
	"context"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// The users without an e-mail address (core.User.Email ""), on both sides.
// Auth.js creates one for an OAuth profile that gave none: its core passes
// email undefined, which the adapters store as NULL (SQL) or null (the
// MongoDB driver's default), or leave out; authport stores its null (SQL
// NULL, an absent document field).

// usersWithoutEmail has Auth.js write users without an address, one with
// email null and one without the field, that authport reads with Email ""
// (also joined to a session, the read of every request), and authport
// write two that Auth.js reads with email null; each side's users coexist,
// getUserByEmail("") finds none of them, and an address added on one side
// is found by it on the other.
func (f *Fixture) usersWithoutEmail(t *testing.T) {
	ctx := context.Background()
	a := f.Adapter
	nodeNoEmail := func(fields map[string]any) User {
		t.Helper()
		in := map[string]any{"id": Unique("ignored"), "emailVerified": nil, "name": "Nobody (X profile)"}
		for k, v := range fields {
			in[k] = v
		}
		var u *User
		f.must(t, &u, "createUser", in)
		if u == nil || u.ID == "" {
			t.Fatalf("Auth.js createUser without an address returned %+v", u)
		}
		if u.Email != nil && *u.Email != "" {
			t.Errorf("Auth.js createUser without an address returned email %q", *u.Email)
		}
		return *u
	}
	// As Auth.js's core passes it (undefined, stored as null), and without
	// the field, as an application that builds its own user writes it.
	nodeUsers := []User{nodeNoEmail(map[string]any{"email": nil}), nodeNoEmail(nil)}
	if !f.NullEmailOnce {
		nodeUsers = append(nodeUsers, nodeNoEmail(map[string]any{"email": nil}))
	} else {
		t.Log("the store keeps one user with email null at most (Fixture.NullEmailOnce): the third Auth.js user is not written")
	}
	for i, nu := range nodeUsers {
		u, err := a.GetUser(ctx, string(nu.ID))
		if err != nil || u == nil || u.Email != "" || u.Name == nil || *u.Name != "Nobody (X profile)" {
			t.Errorf("authport getUser of Auth.js's user #%d without an address = %+v, %v; want Email \"\" and the name", i+1, u, err)
		}
	}
	tok := Unique("noemail-session")
	f.must(t, nil, "createSession", map[string]any{"sessionToken": tok, "userId": string(nodeUsers[0].ID), "expires": Date(At(time.Hour))})
	if su, err := a.GetSessionAndUser(ctx, tok); err != nil || su == nil || su.User.ID != string(nodeUsers[0].ID) || su.User.Email != "" {
		t.Errorf("authport getSessionAndUser of a session of Auth.js's user without an address = %+v, %v", su, err)
	}

	var goUsers []*core.User
	for range 2 {
		id := Unique("go-noemail")
		if f.NewUserID != nil {
			id = f.NewUserID(t)
		}
		u, err := a.CreateUser(ctx, core.User{ID: id, Name: ptr("Nobody (Go)")})
		if err != nil || u == nil {
			t.Fatalf("authport createUser without an address, beside Auth.js's: %v, %v", u, err)
		}
		goUsers = append(goUsers, u)
	}
	for i, gu := range goUsers {
		var u *User
		f.must(t, &u, "getUser", gu.ID)
		if u == nil || string(u.ID) != gu.ID || u.Email != nil {
			t.Errorf("Auth.js getUser of authport's user #%d without an address = %+v; want email null", i+1, u)
		}
	}
	pa := Unique("noemail-pa")
	if _, err := a.LinkAccount(ctx, core.Account{UserID: goUsers[0].ID, Type: core.AccountTypeOAuth, Provider: "twitter", ProviderAccountID: pa}); err != nil {
		t.Fatalf("linkAccount to authport's user without an address: %v", err)
	}
	var bya *User
	f.must(t, &bya, "getUserByAccount", map[string]any{"provider": "twitter", "providerAccountId": pa})
	if bya == nil || string(bya.ID) != goUsers[0].ID || bya.Email != nil {
		t.Errorf("Auth.js getUserByAccount of authport's user without an address = %+v; want it with email null", bya)
	}
	if u, err := a.GetUserByEmail(ctx, ""); u != nil || err != nil {
		t.Errorf("authport getUserByEmail(\"\") beside users without an address = %+v, %v; want nil, nil", u, err)
	}

	// An address added on one side is found on the other.
	email := Unique("added") + "@example.com"
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: string(nodeUsers[1].ID), Email: core.Set(email)}); err != nil {
		t.Fatalf("authport updateUser adding an address to Auth.js's user: %v", err)
	}
	var byEmail *User
	f.must(t, &byEmail, "getUserByEmail", email)
	if byEmail == nil || byEmail.ID != nodeUsers[1].ID {
		t.Errorf("Auth.js getUserByEmail(%q) after authport added it = %+v", email, byEmail)
	}
	email2 := Unique("added") + "@example.com"
	f.must(t, nil, "updateUser", map[string]any{"id": goUsers[1].ID, "email": email2})
	if u, err := a.GetUserByEmail(ctx, email2); err != nil || u == nil || u.ID != goUsers[1].ID {
		t.Errorf("authport getUserByEmail(%q) after Auth.js added it = %+v, %v", email2, u, err)
	}
	f.withoutEmailByAccountAndSession(t, nodeUsers[0], goUsers[0])
	f.addressTakenAway(t, nodeUsers[1], email)
}

// withoutEmailByAccountAndSession reads each side's user without an
// address through the other side's remaining lookups: authport's
// getUserByAccount of an account Auth.js linked to its user, and Auth.js's
// getSessionAndUser of a session authport made for its user.
func (f *Fixture) withoutEmailByAccountAndSession(t *testing.T, nu User, gu *core.User) {
	ctx := context.Background()
	pa := Unique("noemail-node-pa")
	f.must(t, nil, "linkAccount", map[string]any{"userId": string(nu.ID), "type": "oauth", "provider": "twitter", "providerAccountId": pa})
	u, err := f.Adapter.GetUserByAccount(ctx, core.AccountKey{Provider: "twitter", ProviderAccountID: pa})
	if err != nil || u == nil || u.ID != string(nu.ID) || u.Email != "" {
		t.Errorf("authport getUserByAccount of Auth.js's user without an address = %+v, %v; want it with Email \"\"", u, err)
	}
	tok := Unique("noemail-go-session")
	if _, err := f.Adapter.CreateSession(ctx, core.Session{SessionToken: tok, UserID: gu.ID, Expires: At(time.Hour)}); err != nil {
		t.Fatalf("authport createSession for its user without an address: %v", err)
	}
	var su *SessionAndUser
	f.must(t, &su, "getSessionAndUser", tok)
	if su == nil || string(su.User.ID) != gu.ID || su.User.Email != nil {
		t.Errorf("Auth.js getSessionAndUser of authport's session of a user without an address = %+v; want the user with email null", su)
	}
}

// addressTakenAway has authport take away the address it gave Auth.js's
// user (UpdateUser with Email ""): Auth.js then reads email null and no
// longer finds the user by the address.
func (f *Fixture) addressTakenAway(t *testing.T, nu User, email string) {
	if _, err := f.Adapter.UpdateUser(context.Background(), core.UserUpdate{ID: string(nu.ID), Email: core.Set("")}); err != nil {
		t.Fatalf("authport updateUser taking the address away: %v", err)
	}
	var u *User
	f.must(t, &u, "getUser", string(nu.ID))
	if u == nil || (u.Email != nil && *u.Email != "") {
		t.Errorf("Auth.js getUser of the user whose address authport took away = %+v; want email null", u)
	}
	u = nil
	f.must(t, &u, "getUserByEmail", email)
	if u != nil {
		t.Errorf("Auth.js getUserByEmail(%q) after authport took the address away = %+v; want null", email, u)
	}
}
