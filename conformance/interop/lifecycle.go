package interop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

func (f *Fixture) sessionAcrossSides(t *testing.T) {
	ctx := context.Background()
	a := f.Adapter
	nu := f.nodeUser(t, Unique("sess")+"@example.com", map[string]any{"emailVerified": nil})
	if u, err := a.GetUser(ctx, string(nu.ID)); err != nil || u == nil || u.EmailVerified != nil || u.Name != nil || u.Image != nil {
		t.Errorf("authport reads Auth.js's user without emailVerified, name and image as %+v, %v", u, err)
	}

	t.Run("node_creates_authport_updates_and_deletes", func(t *testing.T) {
		tok := Unique("n2g")
		f.must(t, nil, "createSession", map[string]any{"sessionToken": tok, "userId": string(nu.ID), "expires": Date(At(time.Hour))})
		later := At(48 * time.Hour)
		s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: tok, Expires: core.Set(later)})
		if err != nil || s == nil {
			t.Fatalf("authport's updateSession of Auth.js's session: %v, %v", s, err)
		}
		sameTime(t, "updateSession's expires", s.Expires, later, f.ExpiresPrecision)
		var su *SessionAndUser
		f.must(t, &su, "getSessionAndUser", tok)
		if su == nil {
			t.Fatal("Auth.js lost the session authport updated")
		}
		sameTime(t, "expires after authport's update", su.Session.Expires.Time, later, f.ExpiresPrecision)
		if d, err := a.DeleteSession(ctx, tok); err != nil || d == nil || d.UserID != string(nu.ID) {
			t.Fatalf("authport's deleteSession of Auth.js's session: %+v, %v", d, err)
		}
		su = nil
		f.must(t, &su, "getSessionAndUser", tok)
		if su != nil {
			t.Errorf("Auth.js still finds the session authport deleted: %+v", su)
		}
	})
	t.Run("authport_creates_node_updates_and_deletes", func(t *testing.T) {
		tok := Unique("g2n")
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: string(nu.ID), Expires: At(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		later := At(72 * time.Hour)
		f.must(t, nil, "updateSession", map[string]any{"sessionToken": tok, "expires": Date(later)})
		got, err := a.GetSessionAndUser(ctx, tok)
		if err != nil || got == nil {
			t.Fatalf("session after Auth.js's update: %v, %v", got, err)
		}
		sameTime(t, "expires after Auth.js's update", got.Session.Expires, later, f.ExpiresPrecision)
		if got.User.ID != string(nu.ID) {
			t.Errorf("session's user: %q", got.User.ID)
		}
		var deleted *Session
		f.must(t, &deleted, "deleteSession", tok)
		if f.ReturnsDeleted && (deleted == nil || deleted.SessionToken != tok || string(deleted.UserID) != string(nu.ID)) {
			t.Errorf("Auth.js's deleteSession returned %+v", deleted)
		}
		if got, err := a.GetSessionAndUser(ctx, tok); got != nil || err != nil {
			t.Errorf("authport still finds the session Auth.js deleted: %v, %v", got, err)
		}
	})
}

// records gives the user a session through each side, an account through
// authport and, unless oneAccount, one through Auth.js, an authenticator
// through Auth.js where it has them, and one through authport when
// withAuthport; it returns their trace.
func (f *Fixture) records(t *testing.T, id, email string, oneAccount, withAuthport bool) Trace {
	t.Helper()
	ctx := context.Background()
	tr := Trace{ID: id, Email: email}
	node, mine := core.AccountKey{Provider: "google", ProviderAccountID: Unique("pa")}, core.AccountKey{Provider: "github", ProviderAccountID: Unique("pa")}
	if tr.Accounts = []core.AccountKey{mine}; !oneAccount {
		f.must(t, nil, "linkAccount", nodeAccount(ID(id), node.Provider, node.ProviderAccountID))
		tr.Accounts = append(tr.Accounts, node)
	}
	if _, err := f.Adapter.LinkAccount(ctx, core.Account{UserID: id, Type: core.AccountTypeOAuth, Provider: mine.Provider, ProviderAccountID: mine.ProviderAccountID}); err != nil {
		t.Fatal(err)
	}
	tr.Sessions = []string{Unique("s"), Unique("s")}
	f.must(t, nil, "createSession", map[string]any{"sessionToken": tr.Sessions[0], "userId": id, "expires": Date(At(time.Hour))})
	if _, err := f.Adapter.CreateSession(ctx, core.Session{SessionToken: tr.Sessions[1], UserID: id, Expires: At(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if f.NodeAuthenticators {
		c := Unique("c")
		f.must(t, nil, "createAuthenticator", nodeAuthenticator(ID(id), c, 0, false, "usb"))
		tr.Credentials = append(tr.Credentials, c)
	}
	if withAuthport {
		c := Unique("c")
		if _, err := f.Adapter.CreateAuthenticator(ctx, core.Authenticator{CredentialID: c, UserID: id, ProviderAccountID: "p",
			CredentialPublicKey: "k", Counter: 1, CredentialDeviceType: "singleDevice"}); err != nil {
			t.Fatal(err)
		}
		tr.Credentials = append(tr.Credentials, c)
	}
	return tr
}

func (f *Fixture) deleteUser(t *testing.T) {
	ctx := context.Background()
	a := f.Adapter
	bystander := f.authportUser(t, Unique("bystander")+"@example.com")
	bt := f.records(t, bystander.ID, bystander.Email, false, f.Authenticators)
	before := f.Leftovers(t, bt)

	t.Run("authport_deletes_what_node_wrote", func(t *testing.T) {
		email := Unique("del-n") + "@example.com"
		nu := f.nodeUser(t, email, map[string]any{"emailVerified": nil})
		tr := f.records(t, string(nu.ID), email, false, f.Authenticators)
		d, err := a.DeleteUser(ctx, string(nu.ID))
		if err != nil || d == nil || d.ID != string(nu.ID) {
			t.Fatalf("deleteUser: %+v, %v", d, err)
		}
		if left := f.Leftovers(t, tr); len(left) != 0 {
			t.Errorf("authport's deleteUser left %q", left)
		}
		var again *User
		f.must(t, &again, "getUser", string(nu.ID))
		if again != nil {
			t.Errorf("Auth.js still finds the user: %+v", again)
		}
		f.must(t, &again, "getUserByEmail", email)
		if again != nil {
			t.Errorf("Auth.js still finds the user by e-mail: %+v", again)
		}
	})
	t.Run("node_deletes_what_authport_wrote", func(t *testing.T) {
		gu := f.authportUser(t, Unique("del-g")+"@example.com")
		// An authenticator only Auth.js's deleteUser may not know of.
		tr := f.records(t, gu.ID, gu.Email, f.OneAccountPerUser, f.Authenticators && f.NodeAuthenticators)
		f.must(t, nil, "deleteUser", gu.ID)
		found := func(what string, v any, isNil bool, err error) {
			if err != nil || !isNil {
				t.Errorf("authport's %s after Auth.js's deleteUser: %+v, %v", what, v, err)
			}
		}
		u, err := a.GetUser(ctx, gu.ID)
		found("getUser", u, u == nil, err)
		u, err = a.GetUserByEmail(ctx, gu.Email)
		found("getUserByEmail", u, u == nil, err)
		for _, k := range tr.Accounts {
			acc, err := a.GetAccount(ctx, k.ProviderAccountID, k.Provider)
			found("getAccount", acc, acc == nil, err)
		}
		for _, s := range tr.Sessions {
			su, err := a.GetSessionAndUser(ctx, s)
			found("getSessionAndUser", su, su == nil, err)
		}
		if f.NodeDeleteLeaves {
			return
		}
		if left := f.Leftovers(t, tr); len(left) != 0 {
			t.Errorf("Auth.js's deleteUser left %q", left)
		}
	})
	if after := f.Leftovers(t, bt); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("another user's records changed: %q, then %q", before, after)
	}
}
