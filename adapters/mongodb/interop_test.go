package mongoadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// The interop tests run Auth.js's own @auth/mongodb-adapter (with the
// official mongodb driver; versions pinned in interop/package.json) in one
// Node process per test, through interop/mongodb.mjs, against the same
// database as an authport adapter with WithObjectIDs.

type interop struct {
	a    *mongoadapter.Adapter
	db   *mongo.Database
	node *nodeproc.Proc
}

func newInterop(t *testing.T) *interop {
	t.Helper()
	url := provision.MongoDB(t)
	s := newServer(t, nil)
	a, db := newAdapter(t, s, mongoadapter.WithObjectIDs())
	node := nodeproc.Start(t, nodeproc.Config{Dir: "interop", Script: "mongodb.mjs", Args: []string{url, db.Name()}, Need: []string{"@auth/mongodb-adapter/index.js"}})
	return &interop{a: a, db: db, node: node}
}

type oid struct {
	Hex string `json:"$oid"`
}

type nodeUser struct {
	ID            string         `json:"id"`
	Email         string         `json:"email"`
	EmailVerified *nodeproc.Date `json:"emailVerified"`
	Name          *string        `json:"name"`
	Image         *string        `json:"image"`
}

type nodeAccount struct {
	ID                string  `json:"id"`
	UserID            string  `json:"userId"`
	Type              string  `json:"type"`
	Provider          string  `json:"provider"`
	ProviderAccountID string  `json:"providerAccountId"`
	AccessToken       *string `json:"access_token"`
	RefreshToken      *string `json:"refresh_token"`
	ExpiresAt         *int64  `json:"expires_at"`
	IDToken           *string `json:"id_token"`
	Scope             *string `json:"scope"`
	TokenType         *string `json:"token_type"`
	SessionState      *string `json:"session_state"`
}

type nodeSession struct {
	SessionToken string         `json:"sessionToken"`
	UserID       string         `json:"userId"`
	Expires      *nodeproc.Date `json:"expires"`
}

type nodeToken struct {
	Identifier string         `json:"identifier"`
	Token      string         `json:"token"`
	Expires    *nodeproc.Date `json:"expires"`
}

func sp(s string) *string { return &s }

func eqp[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// ms is a time with sub-millisecond digits in another zone, as callers
// pass them.
func ms(d time.Duration) time.Time {
	return time.Now().Add(d).Truncate(time.Millisecond).Add(456 * time.Microsecond).In(time.FixedZone("X", 3600))
}

func TestInteropNodeWritesAuthportReads(t *testing.T) {
	x := newInterop(t)
	ctx := t.Context()
	verified := ms(-time.Hour)
	var nu nodeUser
	x.node.Call(&nu, "createUser", map[string]any{"email": "ada@example.com", "emailVerified": nodeproc.DateOf(verified), "name": "Ada", "image": nil})
	if len(nu.ID) != 24 {
		t.Fatalf("Auth.js's user id %q is not an ObjectId's hex", nu.ID)
	}
	u, err := x.a.GetUser(ctx, nu.ID)
	if err != nil || u == nil {
		t.Fatalf("GetUser(%q) = %v, %v", nu.ID, u, err)
	}
	if u.ID != nu.ID || u.Email != "ada@example.com" || !eqp(u.Name, sp("Ada")) || u.Image != nil ||
		u.EmailVerified == nil || !u.EmailVerified.Equal(core.NormalizeTime(verified)) || u.EmailVerified.Location() != time.UTC {
		t.Errorf("GetUser of Auth.js's user: %+v", u)
	}
	if byEmail, err := x.a.GetUserByEmail(ctx, "ada@example.com"); err != nil || byEmail == nil || byEmail.ID != nu.ID {
		t.Errorf("GetUserByEmail: %v, %v", byEmail, err)
	}

	x.node.Call(nil, "linkAccount", map[string]any{
		"userId": nu.ID, "type": "oidc", "provider": "google", "providerAccountId": "1234",
		"access_token": "at", "refresh_token": "rt", "expires_at": 1931234567, "id_token": "idt",
		"scope": "openid email", "token_type": "Bearer", "session_state": "ss",
	})
	acc, err := x.a.GetAccount(ctx, "1234", "google")
	if err != nil || acc == nil {
		t.Fatalf("GetAccount: %v, %v", acc, err)
	}
	if acc.UserID != nu.ID || acc.Type != core.AccountTypeOIDC || acc.Provider != "google" || acc.ProviderAccountID != "1234" ||
		!eqp(acc.AccessToken, sp("at")) || !eqp(acc.RefreshToken, sp("rt")) || acc.ExpiresAt == nil || *acc.ExpiresAt != 1931234567 ||
		!eqp(acc.IDToken, sp("idt")) || !eqp(acc.Scope, sp("openid email")) || !eqp(acc.SessionState, sp("ss")) ||
		acc.ExpiresIn != nil || acc.AuthorizationDetails != nil {
		t.Errorf("GetAccount of Auth.js's account: %+v", acc)
	}
	if !eqp(acc.TokenType, sp("bearer")) {
		t.Errorf("token_type written by Auth.js as Bearer reads back as %v, want bearer", acc.TokenType)
	}
	if by, err := x.a.GetUserByAccount(ctx, core.AccountKey{Provider: "google", ProviderAccountID: "1234"}); err != nil || by == nil || by.ID != nu.ID {
		t.Errorf("GetUserByAccount: %v, %v", by, err)
	}
	if un, err := x.a.UnlinkAccount(ctx, core.AccountKey{Provider: "google", ProviderAccountID: "1234"}); err != nil || un == nil || !eqp(un.TokenType, sp("bearer")) {
		t.Errorf("UnlinkAccount of Auth.js's account: %+v, %v", un, err)
	}
	var gone *nodeAccount
	x.node.Call(&gone, "getUserByAccount", map[string]any{"provider": "google", "providerAccountId": "1234"})
	if gone != nil {
		t.Errorf("Auth.js still finds the account authport unlinked: %+v", gone)
	}

	exp := ms(time.Hour)
	x.node.Call(nil, "createSession", map[string]any{"sessionToken": "sess-1", "userId": nu.ID, "expires": nodeproc.DateOf(exp)})
	su, err := x.a.GetSessionAndUser(ctx, "sess-1")
	if err != nil || su == nil {
		t.Fatalf("GetSessionAndUser: %v, %v", su, err)
	}
	if su.Session.SessionToken != "sess-1" || su.Session.UserID != nu.ID || !su.Session.Expires.Equal(core.NormalizeTime(exp)) || su.User.ID != nu.ID {
		t.Errorf("GetSessionAndUser of Auth.js's session: %+v", su)
	}

	x.node.Call(nil, "createVerificationToken", map[string]any{"identifier": "ada@example.com", "token": "hashed-1", "expires": nodeproc.DateOf(exp)})
	vt, err := x.a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "ada@example.com", Token: "hashed-1"})
	if err != nil || vt == nil || vt.Identifier != "ada@example.com" || vt.Token != "hashed-1" || !vt.Expires.Equal(core.NormalizeTime(exp)) {
		t.Errorf("UseVerificationToken of Auth.js's token: %+v, %v", vt, err)
	}
	if again, err := x.a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "ada@example.com", Token: "hashed-1"}); again != nil || err != nil {
		t.Errorf("second UseVerificationToken: %+v, %v", again, err)
	}

	x.node.Call(nil, "updateUser", map[string]any{"id": nu.ID, "name": "Ada L."})
	if u, _ := x.a.GetUser(ctx, nu.ID); u == nil || !eqp(u.Name, sp("Ada L.")) || u.EmailVerified == nil {
		t.Errorf("GetUser after Auth.js's updateUser: %+v", u)
	}
}

func TestInteropAuthportWritesNodeReads(t *testing.T) {
	x := newInterop(t)
	ctx := t.Context()
	verified, exp := ms(-time.Hour), ms(time.Hour)
	u := core.User{ID: bson.NewObjectID().Hex(), Email: "grace@example.com", EmailVerified: &verified, Name: sp("Grace"), Image: sp("https://example.com/g.png")}
	if _, err := x.a.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	var nu nodeUser
	x.node.Call(&nu, "getUser", u.ID)
	if nu.ID != u.ID || nu.Email != u.Email || !eqp(nu.Name, u.Name) || !eqp(nu.Image, u.Image) || !nu.EmailVerified.Time(t).Equal(core.NormalizeTime(verified)) {
		t.Errorf("Auth.js getUser of authport's user: %+v", nu)
	}
	nu = nodeUser{}
	x.node.Call(&nu, "getUserByEmail", u.Email)
	if nu.ID != u.ID {
		t.Errorf("Auth.js getUserByEmail: %+v", nu)
	}

	acc := core.Account{UserID: u.ID, Type: core.AccountTypeOAuth, Provider: "github", ProviderAccountID: "77",
		AccessToken: sp("at"), ExpiresAt: ptrTo(int64(1931234567)), Scope: sp("read:user"), TokenType: sp("Bearer")}
	if _, err := x.a.LinkAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	// @auth/mongodb-adapter 3.11.3 has no getAccount; getUserByAccount
	// finds the owner, and unlinkAccount returns the account.
	nu = nodeUser{}
	x.node.Call(&nu, "getUserByAccount", map[string]any{"provider": "github", "providerAccountId": "77"})
	if nu.ID != u.ID {
		t.Errorf("Auth.js getUserByAccount: %+v", nu)
	}
	var na nodeAccount
	x.node.Call(&na, "unlinkAccount", map[string]any{"provider": "github", "providerAccountId": "77"})
	if na.UserID != u.ID || na.Type != "oauth" || na.Provider != "github" || na.ProviderAccountID != "77" ||
		!eqp(na.AccessToken, sp("at")) || na.ExpiresAt == nil || *na.ExpiresAt != 1931234567 || !eqp(na.Scope, sp("read:user")) ||
		!eqp(na.TokenType, sp("bearer")) || na.RefreshToken != nil || na.IDToken != nil {
		t.Errorf("Auth.js unlinkAccount of authport's account returned %+v", na)
	}
	if got, err := x.a.GetAccount(ctx, "77", "github"); got != nil || err != nil {
		t.Errorf("authport still finds the account Auth.js unlinked: %+v, %v", got, err)
	}

	if _, err := x.a.CreateSession(ctx, core.Session{SessionToken: "go-sess", UserID: u.ID, Expires: exp}); err != nil {
		t.Fatal(err)
	}
	var su struct {
		Session nodeSession `json:"session"`
		User    nodeUser    `json:"user"`
	}
	x.node.Call(&su, "getSessionAndUser", "go-sess")
	if su.Session.SessionToken != "go-sess" || su.Session.UserID != u.ID || !su.Session.Expires.Time(t).Equal(core.NormalizeTime(exp)) || su.User.ID != u.ID {
		t.Errorf("Auth.js getSessionAndUser of authport's session: %+v", su)
	}

	if _, err := x.a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: u.Email, Token: "go-hashed", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	var vt *nodeToken
	x.node.Call(&vt, "useVerificationToken", map[string]any{"identifier": u.Email, "token": "go-hashed"})
	if vt == nil || vt.Identifier != u.Email || vt.Token != "go-hashed" || !vt.Expires.Time(t).Equal(core.NormalizeTime(exp)) {
		t.Errorf("Auth.js useVerificationToken of authport's token: %+v", vt)
	}
	if got, err := x.a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: u.Email, Token: "go-hashed"}); got != nil || err != nil {
		t.Errorf("authport used the token Auth.js used: %+v, %v", got, err)
	}

	if _, err := x.a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Name: core.Set(sp("G. Hopper"))}); err != nil {
		t.Fatal(err)
	}
	nu = nodeUser{}
	x.node.Call(&nu, "getUser", u.ID)
	if !eqp(nu.Name, sp("G. Hopper")) || !eqp(nu.Image, u.Image) || nu.EmailVerified == nil {
		t.Errorf("Auth.js getUser after authport's updateUser: %+v", nu)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestInteropSessionAcrossSides(t *testing.T) {
	x := newInterop(t)
	ctx := t.Context()
	var nu nodeUser
	x.node.Call(&nu, "createUser", map[string]any{"email": "s@example.com", "emailVerified": nil})

	t.Run("node_creates_authport_updates_and_deletes", func(t *testing.T) {
		x.node.Call(nil, "createSession", map[string]any{"sessionToken": "n-sess", "userId": nu.ID, "expires": nodeproc.DateOf(ms(time.Hour))})
		later := ms(48 * time.Hour)
		s, err := x.a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "n-sess", Expires: core.Set(later)})
		if err != nil || s == nil || !s.Expires.Equal(core.NormalizeTime(later)) {
			t.Fatalf("UpdateSession of Auth.js's session: %+v, %v", s, err)
		}
		var su *struct {
			Session nodeSession `json:"session"`
		}
		x.node.Call(&su, "getSessionAndUser", "n-sess")
		if su == nil || !su.Session.Expires.Time(t).Equal(core.NormalizeTime(later)) {
			t.Errorf("Auth.js reads the session authport updated: %+v", su)
		}
		if d, err := x.a.DeleteSession(ctx, "n-sess"); err != nil || d == nil || d.UserID != nu.ID {
			t.Errorf("DeleteSession: %+v, %v", d, err)
		}
		su = nil
		x.node.Call(&su, "getSessionAndUser", "n-sess")
		if su != nil {
			t.Errorf("Auth.js still finds the session authport deleted: %+v", su)
		}
	})
	t.Run("authport_creates_node_updates_and_deletes", func(t *testing.T) {
		if _, err := x.a.CreateSession(ctx, core.Session{SessionToken: "g-sess", UserID: nu.ID, Expires: ms(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		later := ms(72 * time.Hour)
		var ns nodeSession
		x.node.Call(&ns, "updateSession", map[string]any{"sessionToken": "g-sess", "expires": nodeproc.DateOf(later)})
		su, err := x.a.GetSessionAndUser(ctx, "g-sess")
		if err != nil || su == nil || !su.Session.Expires.Equal(core.NormalizeTime(later)) || su.User.ID != nu.ID {
			t.Fatalf("authport reads the session Auth.js updated: %+v, %v", su, err)
		}
		var deleted *nodeSession
		x.node.Call(&deleted, "deleteSession", "g-sess")
		if deleted == nil || deleted.SessionToken != "g-sess" || deleted.UserID != nu.ID {
			t.Errorf("Auth.js deleteSession returned %+v", deleted)
		}
		if su, err := x.a.GetSessionAndUser(ctx, "g-sess"); su != nil || err != nil {
			t.Errorf("authport still finds the session Auth.js deleted: %+v, %v", su, err)
		}
	})
}

// leftovers counts the documents of each collection that mention the user
// (its ObjectId as _id or userId, or its e-mail).
func (x *interop) leftovers(t *testing.T, id, email string) map[string]int64 {
	t.Helper()
	oid, err := bson.ObjectIDFromHex(id)
	if err != nil {
		t.Fatal(err)
	}
	names := mongoadapter.DefaultCollections()
	out := map[string]int64{}
	for _, c := range []string{names.Users, names.Accounts, names.Sessions, names.VerificationTokens, names.Authenticators} {
		n, err := x.db.Collection(c).CountDocuments(t.Context(), bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "_id", Value: oid}}, bson.D{{Key: "userId", Value: oid}}, bson.D{{Key: "userId", Value: id}},
			bson.D{{Key: "email", Value: email}}, bson.D{{Key: "identifier", Value: email}},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out[c] = n
		}
	}
	return out
}

func TestInteropDeleteUser(t *testing.T) {
	t.Run("authport_deletes_what_node_wrote", func(t *testing.T) {
		x := newInterop(t)
		var nu nodeUser
		x.node.Call(&nu, "createUser", map[string]any{"email": "del-n@example.com", "emailVerified": nil})
		x.node.Call(nil, "linkAccount", map[string]any{"userId": nu.ID, "type": "oauth", "provider": "github", "providerAccountId": "n1"})
		x.node.Call(nil, "linkAccount", map[string]any{"userId": nu.ID, "type": "oidc", "provider": "google", "providerAccountId": "n2"})
		x.node.Call(nil, "createSession", map[string]any{"sessionToken": "n-s1", "userId": nu.ID, "expires": nodeproc.DateOf(ms(time.Hour))})
		x.node.Call(nil, "createSession", map[string]any{"sessionToken": "n-s2", "userId": nu.ID, "expires": nodeproc.DateOf(ms(time.Hour))})
		if _, err := x.a.CreateAuthenticator(t.Context(), core.Authenticator{CredentialID: "c1", CredentialPublicKey: "pk", ProviderAccountID: "n1", UserID: nu.ID}); err != nil {
			t.Fatal(err)
		}
		if d, err := x.a.DeleteUser(t.Context(), nu.ID); err != nil || d == nil || d.ID != nu.ID {
			t.Fatalf("DeleteUser: %+v, %v", d, err)
		}
		if left := x.leftovers(t, nu.ID, "del-n@example.com"); len(left) != 0 {
			t.Errorf("authport's deleteUser left %v", left)
		}
		var got *nodeUser
		x.node.Call(&got, "getUserByEmail", "del-n@example.com")
		if got != nil {
			t.Errorf("Auth.js still finds the user: %+v", got)
		}
	})
	t.Run("node_deletes_what_authport_wrote", func(t *testing.T) {
		x := newInterop(t)
		ctx := t.Context()
		u := core.User{ID: bson.NewObjectID().Hex(), Email: "del-g@example.com"}
		if _, err := x.a.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"github", "google"} {
			if _, err := x.a.LinkAccount(ctx, core.Account{UserID: u.ID, Type: core.AccountTypeOAuth, Provider: p, ProviderAccountID: "g1"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, tok := range []string{"g-s1", "g-s2"} {
			if _, err := x.a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: u.ID, Expires: ms(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		x.node.Call(nil, "deleteUser", u.ID)
		if left := x.leftovers(t, u.ID, u.Email); len(left) != 0 {
			t.Errorf("Auth.js's deleteUser left %v", left)
		}
		if got, err := x.a.GetUser(ctx, u.ID); got != nil || err != nil {
			t.Errorf("GetUser after Auth.js's deleteUser: %+v, %v", got, err)
		}
	})
}

// race has n callers use one verification token at once, split between
// Auth.js (nodeN of them) and authport; it returns the winners per side.
func (x *interop) race(t *testing.T, key core.VerificationTokenKey, n, nodeN int) (goWins, nodeWins int) {
	t.Helper()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if i < nodeN {
				res, err := x.node.Wait(x.node.SendCall("useVerificationToken", map[string]any{"identifier": key.Identifier, "token": key.Token}))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if string(res) != "null" {
					nodeWins++
				}
				return
			}
			got, err := x.a.UseVerificationToken(context.Background(), key)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if got != nil {
				goWins++
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return goWins, nodeWins
}

func TestInteropVerificationTokenRace(t *testing.T) {
	x := newInterop(t)
	ctx := t.Context()
	const n = 50
	token := func(i int) core.VerificationTokenKey {
		k := core.VerificationTokenKey{Identifier: "race@example.com", Token: "race-" + string(rune('a'+i))}
		if i%2 == 0 {
			x.node.Call(nil, "createVerificationToken", map[string]any{"identifier": k.Identifier, "token": k.Token, "expires": nodeproc.DateOf(ms(time.Hour))})
		} else if _, err := x.a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: k.Identifier, Token: k.Token, Expires: ms(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		return k
	}
	atomic := x.a.Capabilities().AtomicFindAndModify
	if g, _ := x.race(t, token(1), n, 0); g != 1 {
		t.Errorf("50 authport callers: %d won, want 1", g)
	}
	// @auth/mongodb-adapter uses findOneAndDelete: atomic exactly where the
	// server's findAndModify is (MongoDB; not FerretDB). Measured.
	_, nodeAlone := x.race(t, token(2), n, n)
	t.Logf("50 Auth.js callers: %d won (server's findAndModify atomic: %v)", nodeAlone, atomic)
	if nodeAlone < 1 || (atomic && nodeAlone != 1) {
		t.Errorf("50 Auth.js callers: %d won", nodeAlone)
	}
	for round := 3; round < 9; round++ {
		g, nw := x.race(t, token(round), n, n/2)
		t.Logf("round %d: authport %d, Auth.js %d winners", round, g, nw)
		if g > 1 {
			t.Errorf("round %d: %d of authport's callers won; at most one may", round, g)
		}
		if g+nw < 1 || (atomic && g+nw != 1) {
			t.Errorf("round %d: %d winners in all", round, g+nw)
		}
	}
}

// TestInteropUserData: fields an Auth.js application puts on its users are
// application fields (core.User.Data) on authport's side, and fields
// authport sets are fields of the user Auth.js reads; an update on either
// side keeps the fields it does not name.
func TestInteropUserData(t *testing.T) {
	x := newInterop(t)
	ctx := t.Context()
	var nu nodeUser
	x.node.Call(&nu, "createUser", map[string]any{"email": "lin@example.com", "emailVerified": nil, "name": "Lin", "image": nil,
		"role": "admin", "level": 3})
	u, err := x.a.GetUser(ctx, nu.ID)
	if err != nil || u == nil {
		t.Fatalf("GetUser(%q) = %v, %v", nu.ID, u, err)
	}
	if len(u.Data) != 2 || string(u.Data["role"]) != `"admin"` || string(u.Data["level"]) != `3` {
		t.Errorf("Data of a user Auth.js wrote with role and level = %s", u.Data)
	}
	if _, err := x.a.UpdateUser(ctx, core.UserUpdate{ID: nu.ID, Data: map[string]json.RawMessage{"tenantId": json.RawMessage(`"t1"`), "level": nil}}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	x.node.Call(&got, "getUser", nu.ID)
	if got["role"] != "admin" || got["tenantId"] != "t1" || got["name"] != "Lin" {
		t.Errorf("Auth.js reads the user authport updated as %v, want role admin, tenantId t1, name Lin", got)
	}
	if _, ok := got["level"]; ok {
		t.Errorf("Auth.js still reads level, which authport removed: %v", got)
	}
	x.node.Call(nil, "updateUser", map[string]any{"id": nu.ID, "name": "Lin Yu"})
	u, err = x.a.GetUser(ctx, nu.ID)
	if err != nil || u == nil || !eqp(u.Name, sp("Lin Yu")) || string(u.Data["role"]) != `"admin"` || string(u.Data["tenantId"]) != `"t1"` {
		t.Errorf("GetUser after Auth.js's updateUser of the name = %+v, %v; want the application fields kept", u, err)
	}
}
