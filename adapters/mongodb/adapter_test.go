package mongoadapter_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

func TestNewNilDatabase(t *testing.T) {
	a, err := mongoadapter.New(context.Background(), nil)
	if a != nil || !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("New(nil) = %v, %v; want nil and an error matching ErrInvalidInput", a, err)
	}
}

// rawDoc returns the one document of coll matching filter.
func rawDoc(t *testing.T, db *mongo.Database, coll string, filter bson.D) bson.Raw {
	t.Helper()
	raw, err := db.Collection(coll).FindOne(context.Background(), filter).Raw()
	if err != nil {
		t.Fatalf("reading %s %v: %v", coll, filter, err)
	}
	return raw
}

// keysAndTypes lists a document's fields as "name:type", _id left out.
func keysAndTypes(t *testing.T, d bson.Raw) []string {
	t.Helper()
	elems, err := d.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range elems {
		if e.Key() == "_id" {
			continue
		}
		out = append(out, e.Key()+":"+e.Value().Type.String())
	}
	return out
}

// TestDocumentShape checks the stored documents field by field: Auth.js's
// field names, BSON dates for times, null (not absent) for nil, int64
// numbers, and string user ids by default.
func TestDocumentShape(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := context.Background()
	verified := time.Date(2030, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com", EmailVerified: &verified, Name: new("")}))
	must(a.LinkAccount(ctx, core.Account{UserID: "u1", Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "p1",
		AuthorizationDetails: []core.AuthorizationDetail{{Type: "t", Actions: []string{}}}}))
	must(a.CreateSession(ctx, core.Session{SessionToken: "st", UserID: "u1", Expires: verified}))
	must(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: verified}))
	must(a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", UserID: "u1", ProviderAccountID: "p1", Counter: 3}))

	for _, c := range []struct {
		coll   string
		filter bson.D
		want   string
	}{
		{"users", bson.D{{Key: "_id", Value: "u1"}}, "email:string emailVerified:UTC datetime name:string image:null"},
		{"accounts", bson.D{{Key: "providerAccountId", Value: "p1"}},
			"userId:string type:string provider:string providerAccountId:string access_token:null authorization_details:array " +
				"expires_at:null expires_in:null id_token:null refresh_token:null scope:null token_type:null session_state:null"},
		{"sessions", bson.D{{Key: "sessionToken", Value: "st"}}, "sessionToken:string userId:string expires:UTC datetime"},
		{"verification_tokens", bson.D{{Key: "token", Value: "t"}}, "identifier:string token:string expires:UTC datetime"},
		{"authenticators", bson.D{{Key: "credentialID", Value: "c"}},
			"credentialID:string userId:string providerAccountId:string credentialPublicKey:string counter:64-bit integer " +
				"credentialBackedUp:boolean credentialDeviceType:string transports:null"},
	} {
		d := rawDoc(t, db, c.coll, c.filter)
		got := strings.Join(keysAndTypes(t, d), " ")
		if got != c.want {
			t.Errorf("%s document fields:\n got: %s\nwant: %s", c.coll, got, c.want)
		}
	}
	u := rawDoc(t, db, "users", bson.D{{Key: "_id", Value: "u1"}})
	if ms := u.Lookup("emailVerified").DateTime(); ms != verified.UnixMilli() {
		t.Errorf("emailVerified stored as %d ms, want %d", ms, verified.UnixMilli())
	}
	acc := rawDoc(t, db, "accounts", bson.D{{Key: "providerAccountId", Value: "p1"}})
	details := acc.Lookup("authorization_details", "0")
	if _, err := details.Document().LookupErr("locations"); err == nil {
		t.Error("a nil locations list is stored; want it absent")
	}
	if v := details.Document().Lookup("actions"); v.Type != bson.TypeArray {
		t.Errorf("an empty actions list is stored as %v, want an empty array", v.Type)
	}
}

// TestObjectIDs checks WithObjectIDs: ids stored as ObjectIds everywhere,
// returned as hex, and malformed ids never replaced.
func TestObjectIDs(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s, mongoadapter.WithObjectIDs())
	ctx := context.Background()
	oid := bson.NewObjectID()
	id := oid.Hex()
	u := core.User{ID: id, Email: "oid@example.com"}
	if _, err := a.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	acc := core.Account{UserID: id, Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "p1"}
	if _, err := a.LinkAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	sess := core.Session{SessionToken: "st", UserID: id, Expires: time.Now().Add(time.Hour)}
	if _, err := a.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	au := core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", UserID: id, ProviderAccountID: "p1"}
	if _, err := a.CreateAuthenticator(ctx, au); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		coll, field string
		filter      bson.D
	}{
		{"users", "_id", bson.D{{Key: "email", Value: u.Email}}},
		{"accounts", "userId", bson.D{{Key: "providerAccountId", Value: "p1"}}},
		{"sessions", "userId", bson.D{{Key: "sessionToken", Value: "st"}}},
		{"authenticators", "userId", bson.D{{Key: "credentialID", Value: "c"}}},
	} {
		v := rawDoc(t, db, c.coll, c.filter).Lookup(c.field)
		if got, ok := v.ObjectIDOK(); !ok || got != oid {
			t.Errorf("%s.%s stored as %v %v, want ObjectId %s", c.coll, c.field, v.Type, v, id)
		}
	}

	if got, err := a.GetUser(ctx, id); err != nil || got == nil || got.ID != id {
		t.Errorf("GetUser(%s) = %+v, %v", id, got, err)
	}
	if got, err := a.GetUserByAccount(ctx, acc.Key()); err != nil || got == nil || got.ID != id {
		t.Errorf("GetUserByAccount = %+v, %v", got, err)
	}
	if su, err := a.GetSessionAndUser(ctx, "st"); err != nil || su == nil || su.User.ID != id || su.Session.UserID != id {
		t.Errorf("GetSessionAndUser = %+v, %v", su, err)
	}
	if l, err := a.ListAuthenticatorsByUserID(ctx, id); err != nil || len(l) != 1 || l[0].UserID != id {
		t.Errorf("ListAuthenticatorsByUserID = %+v, %v", l, err)
	}

	// Malformed ids: not hex, wrong length, upper case (which would come
	// back lower case, i.e. replaced).
	for _, bad := range []string{"u1", "", strings.ToUpper(id), id + "00", id[:23] + "g", "$ne", "a.b"} {
		if got, err := a.GetUser(ctx, bad); got != nil || err != nil {
			t.Errorf("GetUser(%q) = %+v, %v; want nil, nil", bad, got, err)
		}
		if got, err := a.DeleteUser(ctx, bad); got != nil || err != nil {
			t.Errorf("DeleteUser(%q) = %+v, %v; want nil, nil", bad, got, err)
		}
		if l, err := a.ListAuthenticatorsByUserID(ctx, bad); err != nil || l == nil || len(l) != 0 {
			t.Errorf("ListAuthenticatorsByUserID(%q) = %#v, %v; want an empty list", bad, l, err)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: bad, Name: core.Set(new("x"))}); !errors.Is(err, core.ErrNotFound) && !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("UpdateUser(%q): %v, want ErrNotFound", bad, err)
		}
		if bad == "" {
			continue
		}
		if _, err := a.CreateUser(ctx, core.User{ID: bad, Email: "bad@example.com"}); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("CreateUser(%q): %v, want ErrInvalidInput", bad, err)
		}
		if _, err := a.LinkAccount(ctx, core.Account{UserID: bad, Provider: "x", Type: core.AccountTypeOAuth, ProviderAccountID: "p2"}); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("LinkAccount for %q: %v, want ErrInvalidInput", bad, err)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "st2", UserID: bad, Expires: time.Now().Add(time.Hour)}); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("CreateSession for %q: %v, want ErrInvalidInput", bad, err)
		}
		if _, err := a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c2", CredentialPublicKey: "k", UserID: bad, ProviderAccountID: "p"}); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("CreateAuthenticator for %q: %v, want ErrInvalidInput", bad, err)
		}
		if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "st", UserID: core.Set(bad)}); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("UpdateSession to user %q: %v, want ErrInvalidInput", bad, err)
		}
	}
	for coll, want := range map[string]int64{"users": 1, "accounts": 1, "sessions": 1, "authenticators": 1} {
		if n, err := db.Collection(coll).CountDocuments(ctx, bson.D{}); err != nil || n != want {
			t.Errorf("%s holds %d documents (%v), want %d", coll, n, err, want)
		}
	}

	if got, err := a.DeleteUser(ctx, id); err != nil || got == nil || got.ID != id {
		t.Errorf("DeleteUser = %+v, %v", got, err)
	}
	for _, coll := range []string{"users", "accounts", "sessions", "authenticators"} {
		if n, err := db.Collection(coll).CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
			t.Errorf("after DeleteUser %s holds %d documents (%v), want 0", coll, n, err)
		}
	}
}

// TestAuthJSDocuments reads documents as Auth.js's MongoDB adapter writes
// them (ObjectIds, 32-bit numbers, optional fields absent, extra fields).
func TestAuthJSDocuments(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s, mongoadapter.WithObjectIDs())
	ctx := context.Background()
	uid := bson.NewObjectID()
	docs := map[string]bson.D{
		"users": {{Key: "_id", Value: uid}, {Key: "email", Value: "js@example.com"}, {Key: "emailVerified", Value: nil}},
		"accounts": {{Key: "_id", Value: bson.NewObjectID()}, {Key: "userId", Value: uid}, {Key: "type", Value: "oauth"},
			{Key: "provider", Value: "github"}, {Key: "providerAccountId", Value: "42"}, {Key: "access_token", Value: "at"},
			{Key: "expires_at", Value: int32(1931234567)}, {Key: "expires_in", Value: float64(3600)}, {Key: "token_type", Value: "bearer"}},
		"sessions": {{Key: "_id", Value: bson.NewObjectID()}, {Key: "sessionToken", Value: "js-st"}, {Key: "userId", Value: uid},
			{Key: "expires", Value: bson.NewDateTimeFromTime(time.Now().Add(time.Hour))}},
		"authenticators": {{Key: "_id", Value: bson.NewObjectID()}, {Key: "credentialID", Value: "js-c"}, {Key: "userId", Value: uid},
			{Key: "providerAccountId", Value: "42"}, {Key: "credentialPublicKey", Value: "k"}, {Key: "counter", Value: int32(5)},
			{Key: "credentialBackedUp", Value: false}, {Key: "credentialDeviceType", Value: "singleDevice"}},
	}
	for coll, d := range docs {
		if _, err := db.Collection(coll).InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	u, err := a.GetUserByEmail(ctx, "js@example.com")
	if err != nil || u == nil {
		t.Fatalf("GetUserByEmail = %+v, %v", u, err)
	}
	if want := (core.User{ID: uid.Hex(), Email: "js@example.com"}); !reflect.DeepEqual(*u, want) {
		t.Errorf("GetUserByEmail = %+v, want %+v", *u, want)
	}
	acc, err := a.GetAccount(ctx, "42", "github")
	if err != nil || acc == nil {
		t.Fatalf("GetAccount = %+v, %v", acc, err)
	}
	if acc.UserID != uid.Hex() || acc.ExpiresAt == nil || *acc.ExpiresAt != 1931234567 || acc.ExpiresIn == nil || *acc.ExpiresIn != 3600 ||
		acc.AccessToken == nil || *acc.AccessToken != "at" || acc.RefreshToken != nil || acc.AuthorizationDetails != nil {
		t.Errorf("GetAccount = %+v", acc)
	}
	if su, err := a.GetSessionAndUser(ctx, "js-st"); err != nil || su == nil || su.User.ID != uid.Hex() {
		t.Errorf("GetSessionAndUser = %+v, %v", su, err)
	}
	if au, err := a.GetAuthenticator(ctx, "js-c"); err != nil || au == nil || au.Counter != 5 || au.Transports != nil || au.UserID != uid.Hex() {
		t.Errorf("GetAuthenticator = %+v, %v", au, err)
	}
}

// TestOperatorLikeValues stores values that look like operators or paths
// and finds them literally, without matching anything else.
func TestOperatorLikeValues(t *testing.T) {
	s := newServer(t, nil)
	a, _ := newAdapter(t, s)
	ctx := context.Background()
	createUsers(t, a, "plain")
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "plain-token", UserID: "plain", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	values := []string{"$ne", "$gt", "$where", "$exists", "a.b", "$a.b", ".", "$", "{\"$ne\": null}", "$$ROOT"}
	for i, v := range values {
		id := v + "#" + string(rune('a'+i))
		u := core.User{ID: id, Email: v + "@x.y" + id, Name: new(v)}
		if _, err := a.CreateUser(ctx, u); err != nil {
			t.Fatalf("CreateUser(%q): %v", id, err)
		}
		if got, err := a.GetUser(ctx, id); err != nil || got == nil || got.ID != id || *got.Name != v {
			t.Errorf("GetUser(%q) = %+v, %v", id, got, err)
		}
		if got, err := a.GetUserByEmail(ctx, u.Email); err != nil || got == nil || got.ID != id {
			t.Errorf("GetUserByEmail(%q) = %+v, %v", u.Email, got, err)
		}
		acc := core.Account{UserID: id, Provider: v, Type: core.AccountTypeOIDC, ProviderAccountID: v + id}
		if _, err := a.LinkAccount(ctx, acc); err != nil {
			t.Fatalf("LinkAccount(%q): %v", v, err)
		}
		if got, err := a.GetUserByAccount(ctx, acc.Key()); err != nil || got == nil || got.ID != id {
			t.Errorf("GetUserByAccount(%+v) = %+v, %v", acc.Key(), got, err)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: v + id, UserID: id, Expires: time.Now().Add(time.Hour)}); err != nil {
			t.Fatalf("CreateSession(%q): %v", v, err)
		}
		if su, err := a.GetSessionAndUser(ctx, v+id); err != nil || su == nil || su.User.ID != id {
			t.Errorf("GetSessionAndUser(%q) = %+v, %v", v+id, su, err)
		}
		if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: v, Token: v + id, Expires: time.Now().Add(time.Hour)}); err != nil {
			t.Fatalf("CreateVerificationToken(%q): %v", v, err)
		}
		if vt, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: v, Token: v + id}); err != nil || vt == nil || vt.Identifier != v {
			t.Errorf("UseVerificationToken(%q) = %+v, %v", v, vt, err)
		}
	}
	// Lookups by the bare operator-like values match nothing.
	for _, v := range values {
		if got, err := a.GetUser(ctx, v); got != nil || err != nil {
			t.Errorf("GetUser(%q) = %+v, %v; want nil, nil", v, got, err)
		}
		if got, err := a.GetUserByEmail(ctx, v); got != nil || err != nil {
			t.Errorf("GetUserByEmail(%q) = %+v, %v; want nil, nil", v, got, err)
		}
		if su, err := a.GetSessionAndUser(ctx, v); su != nil || err != nil {
			t.Errorf("GetSessionAndUser(%q) = %+v, %v; want nil, nil", v, su, err)
		}
	}
}

// TestMigrate checks the indexes, and that a second call succeeds.
func TestMigrate(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := context.Background()
	if err := a.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	ttl := a.Capabilities().TTL
	t.Logf("TTL indexes: %v", ttl)
	want := map[string][]string{
		"users":               {"email_1 unique", "username_1 unique"},
		"accounts":            {"provider_1_providerAccountId_1 unique", "userId_1"},
		"sessions":            {"sessionToken_1 unique", "userId_1_sessionToken_1_expires_1", "expires_1"},
		"verification_tokens": {"identifier_1_token_1 unique", "expires_1"},
		"authenticators":      {"credentialID_1 unique", "userId_1_credentialID_1"},
		"authport_factors":    {"userId_1__id_1"},
	}
	for coll, names := range want {
		specs, err := db.Collection(coll).Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sp := range specs {
			if sp.Name == "_id_" {
				continue
			}
			d := sp.Name
			if sp.Unique != nil && *sp.Unique {
				d += " unique"
			}
			if sp.Name == "expires_1" && ttl && (sp.ExpireAfterSeconds == nil || *sp.ExpireAfterSeconds != 0) {
				t.Errorf("%s.expires_1 is not a TTL index with expireAfterSeconds 0: %+v", coll, sp)
			}
			got = append(got, d)
		}
		slices.Sort(got)
		slices.Sort(names)
		if !slices.Equal(got, names) {
			t.Errorf("%s indexes = %q, want %q", coll, got, names)
		}
	}
}

// TestCollectionNames checks WithCollections.
func TestCollectionNames(t *testing.T) {
	s := newServer(t, nil)
	names := mongoadapter.Collections{Users: "people", VerificationTokens: "vtokens"}
	a, db := newAdapter(t, s, mongoadapter.WithCollections(names))
	ctx := context.Background()
	got := a.Collections()
	want := mongoadapter.DefaultCollections()
	want.Users, want.VerificationTokens = "people", "vtokens"
	if got != want {
		t.Errorf("Collections() = %+v, want %+v", got, want)
	}
	createUsers(t, a, "u")
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if su, err := a.GetSessionAndUser(ctx, "s"); err != nil || su == nil {
		t.Errorf("GetSessionAndUser = %+v, %v", su, err)
	}
	for coll, n := range map[string]int64{"people": 1, "vtokens": 1, "sessions": 1, "users": 0, "verification_tokens": 0} {
		if got, err := db.Collection(coll).CountDocuments(ctx, bson.D{}); err != nil || got != n {
			t.Errorf("%s holds %d documents (%v), want %d", coll, got, err, n)
		}
	}
}

// TestCollectionNamesRejected checks that New refuses, before sending any
// command, collection names the server would refuse and two kinds of record
// sharing one collection, and accepts names that are merely unusual.
func TestCollectionNamesRejected(t *testing.T) {
	rec := &recorder{}
	s := newServer(t, rec.monitor())
	db := s.db(t)
	ctx := context.Background()
	for _, c := range []struct {
		names mongoadapter.Collections
		want  string // in the error
	}{
		{mongoadapter.Collections{Sessions: "tokens", VerificationTokens: "tokens"}, `Sessions and VerificationTokens are both "tokens"`},
		{mongoadapter.Collections{Sessions: "verification_tokens"}, `Sessions and VerificationTokens are both "verification_tokens"`},
		{mongoadapter.Collections{Authenticators: "users"}, `Users and Authenticators are both "users"`},
		{mongoadapter.Collections{Factors: "sessions"}, `Sessions and Factors are both "sessions"`},
		{mongoadapter.Collections{Factors: "authport_locks"}, `Factors and Locks are both "authport_locks"`},
		{mongoadapter.Collections{Users: "accounts", Accounts: "users"}, ""}, // swapped: fine
		{mongoadapter.Collections{Users: "a$b"}, `Users "a$b" contains '$'`},
		{mongoadapter.Collections{Accounts: "$cmd"}, "contains '$'"},
		{mongoadapter.Collections{Sessions: "a\x00b"}, "NUL"},
		{mongoadapter.Collections{VerificationTokens: "system.tokens"}, `starts with "system."`},
		{mongoadapter.Collections{Authenticators: ".keys"}, "starts with '.'"},
		{mongoadapter.Collections{Users: "\xff"}, "UTF-8"},
		{mongoadapter.Collections{Users: "auth.users", Sessions: "système", Accounts: "my accounts"}, ""},
	} {
		var a *mongoadapter.Adapter
		var err error
		cmds := rec.during(func() { a, err = mongoadapter.New(ctx, db, mongoadapter.WithCollections(c.names)) })
		if c.want == "" {
			if err != nil || a == nil {
				t.Errorf("New(WithCollections(%+v)): adapter %t, error %v; want an adapter", c.names, a != nil, err)
			}
			continue
		}
		if a != nil || !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(WithCollections(%+v)): adapter %t, error %v; want no adapter and an error matching ErrInvalidInput that says %s",
				c.names, a != nil, err, c.want)
		} else if len(cmds) > 0 {
			t.Errorf("New(WithCollections(%+v)) sent %q before rejecting the names", c.names, cmds)
		}
	}
}

// TestExpiredNeverReturned stores expired records the way a lagging TTL
// monitor leaves them and checks every read path ignores them; PurgeExpired
// then removes exactly those.
func TestExpiredNeverReturned(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := context.Background()
	createUsers(t, a, "u")
	past := time.Now().Add(-time.Second)
	// s1 and s3 expired, s2 live; s1 is read (and so removed on access,
	// SPEC §3), s3 is left to PurgeExpired.
	for i, tok := range []string{"s1", "s2", "s3"} {
		exp := past
		if i == 1 {
			exp = time.Now().Add(time.Hour)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u", Expires: exp}); err != nil {
			t.Fatal(err)
		}
		if tok == "s3" {
			continue
		}
		if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: tok, Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	if su, err := a.GetSessionAndUser(ctx, "s1"); su != nil || err != nil {
		t.Errorf("GetSessionAndUser of an expired session = %+v, %v", su, err)
	}
	if vt, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "i", Token: "s1"}); vt != nil || err != nil {
		t.Errorf("UseVerificationToken of an expired token = %+v, %v", vt, err)
	}
	res, err := a.PurgeExpired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res != (core.PurgeResult{Sessions: 1, VerificationTokens: 1}) {
		t.Errorf("PurgeExpired = %+v, want one of each", res)
	}
	for _, coll := range []string{"sessions", "verification_tokens"} {
		n, err := db.Collection(coll).CountDocuments(ctx, bson.D{{Key: "token", Value: "s1"}})
		if coll == "sessions" {
			n, err = db.Collection(coll).CountDocuments(ctx, bson.D{{Key: "sessionToken", Value: bson.D{{Key: "$in", Value: bson.A{"s1", "s3"}}}}})
		}
		if err != nil || n != 0 {
			t.Errorf("%s: expired record left after PurgeExpired (%d, %v)", coll, n, err)
		}
	}
	if su, err := a.GetSessionAndUser(ctx, "s2"); su == nil || err != nil {
		t.Errorf("GetSessionAndUser of a live session = %+v, %v", su, err)
	}
}

// TestOrphansLetNobodyIn: a session or account whose user is gone (the
// race documented on CreateSession and LinkAccount) is not returned.
func TestOrphansLetNobodyIn(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := context.Background()
	if _, err := db.Collection("sessions").InsertOne(ctx, bson.D{{Key: "sessionToken", Value: "orphan"}, {Key: "userId", Value: "gone"},
		{Key: "expires", Value: bson.NewDateTimeFromTime(time.Now().Add(time.Hour))}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("accounts").InsertOne(ctx, bson.D{{Key: "userId", Value: "gone"}, {Key: "provider", Value: "p"},
		{Key: "providerAccountId", Value: "orphan"}, {Key: "type", Value: "oauth"}}); err != nil {
		t.Fatal(err)
	}
	if su, err := a.GetSessionAndUser(ctx, "orphan"); su != nil || err != nil {
		t.Errorf("GetSessionAndUser of an orphan session = %+v, %v; want nil, nil", su, err)
	}
	if u, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: "p", ProviderAccountID: "orphan"}); u != nil || err != nil {
		t.Errorf("GetUserByAccount of an orphan account = %+v, %v; want nil, nil", u, err)
	}
}

// TestUnstorableInput: times outside BSON's range (the adapter) and strings
// that are not UTF-8 (the checked layer, core.Store) are rejected with
// ErrInvalidInput, and nothing is stored.
func TestUnstorableInput(t *testing.T) {
	s := newServer(t, nil)
	ad, db := newAdapter(t, s)
	a := core.NewStore(ad)
	ctx := context.Background()
	createUsers(t, a, "u")
	far := time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC)
	checks := map[string]error{}
	_, checks["createUser emailVerified"] = a.CreateUser(ctx, core.User{ID: "v", Email: "v@example.com", EmailVerified: &far})
	_, checks["createUser name"] = a.CreateUser(ctx, core.User{ID: "w", Email: "w@example.com", Name: new("\xff")})
	_, checks["updateUser emailVerified"] = a.UpdateUser(ctx, core.UserUpdate{ID: "u", EmailVerified: core.Set(&far)})
	_, checks["updateUser email"] = a.UpdateUser(ctx, core.UserUpdate{ID: "u", Email: core.Set("\xfe@example.com")})
	_, checks["createSession expires"] = a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: far})
	_, checks["updateSession expires"] = a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", Expires: core.Set(far)})
	_, checks["createVerificationToken expires"] = a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: far})
	_, checks["linkAccount authorization_details"] = a.LinkAccount(ctx, core.Account{UserID: "u", Provider: "p", Type: core.AccountTypeOAuth,
		ProviderAccountID: "x", AuthorizationDetails: []core.AuthorizationDetail{{Type: "\xff"}}})
	_, checks["createAuthenticator transports"] = a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c", CredentialPublicKey: "k",
		UserID: "u", ProviderAccountID: "p", Transports: new("\xff")})
	for what, err := range checks {
		if !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("%s: %v, want an error matching ErrInvalidInput", what, err)
		}
	}
	for coll, want := range map[string]int64{"users": 1, "accounts": 0, "sessions": 0, "verification_tokens": 0, "authenticators": 0} {
		if n, err := db.Collection(coll).CountDocuments(ctx, bson.D{}); err != nil || n != want {
			t.Errorf("%s holds %d documents (%v), want %d", coll, n, err, want)
		}
	}
	if u, err := a.GetUser(ctx, "u"); err != nil || u == nil || u.EmailVerified != nil || u.Email != "u@example.com" {
		t.Errorf("user changed by rejected updates: %+v, %v", u, err)
	}
}

// TestCapabilitiesDetected checks what New detects against what the server
// says of itself: FerretDB has neither $lookup, TTL indexes nor an atomic
// findAndModify; MongoDB has all three; replica set members and mongos have
// transactions.
func TestCapabilitiesDetected(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := context.Background()
	info, err := db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, ferr := info.LookupErr("ferretdbVersion")
	mongo := ferr != nil
	var hello struct {
		SetName string `bson:"setName"`
		Msg     string `bson:"msg"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	want := mongoadapter.Capabilities{
		Lookup:              mongo,
		Transactions:        hello.SetName != "" || hello.Msg == "isdbgrid",
		AtomicFindAndModify: mongo,
		TTL:                 mongo,
		PartialIndexes:      mongo,
	}
	if got := a.Capabilities(); got != want {
		t.Errorf("Capabilities() = %+v, want %+v (server: MongoDB %v, hello %+v)", got, want, mongo, hello)
	}
	forced, _ := newAdapter(t, s, mongoadapter.WithoutLookup(), mongoadapter.WithoutTransactions())
	if c := forced.Capabilities(); c.Lookup || c.Transactions {
		t.Errorf("with WithoutLookup and WithoutTransactions, Capabilities() = %+v", c)
	}
}

// TestDeleteUserFailurePartWay makes deleteUser fail part-way (the accounts
// collection has a name the server refuses, set with a test hook since New
// refuses it too, so deleting from it fails) and checks what is left:
// without a transaction the user and its sessions are gone (the user goes
// first, then the sweep, which stopped at the accounts); with one, nothing
// changed. Either way a retry, once the accounts can be deleted, finishes
// the job, sweeping the records of a user that is already gone.
func TestDeleteUserFailurePartWay(t *testing.T) {
	s := newServer(t, nil)
	for _, mode := range []struct {
		name string
		opts []mongoadapter.Option
	}{
		{"auto", nil},
		{"ordered", []mongoadapter.Option{mongoadapter.WithoutTransactions()}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			db := s.db(t)
			ctx := context.Background()
			a, err := mongoadapter.New(ctx, db, mode.opts...)
			if err != nil {
				t.Fatal(err)
			}
			createUsers(t, a, "u")
			if _, err := a.LinkAccount(ctx, core.Account{UserID: "u", Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "gh-u"}); err != nil {
				t.Fatal(err)
			}
			for _, tok := range []string{"s1", "s2"} {
				if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u", Expires: time.Now().Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
			}
			// New refuses such a name; the test hook sets it afterwards.
			mongoadapter.SetAccountsCollectionForTest(a, "bad$name")
			if _, err := a.DeleteUser(ctx, "u"); err == nil {
				t.Fatal("DeleteUser succeeded although deleting from the accounts collection cannot")
			} else {
				t.Logf("deleteUser failed as arranged: %v", err)
			}
			tx := a.Capabilities().Transactions
			count := func(coll string) int64 {
				t.Helper()
				n, err := db.Collection(coll).CountDocuments(ctx, bson.D{})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			wantSessions, wantUsers := int64(0), int64(0)
			if tx {
				wantSessions, wantUsers = 2, 1
			}
			if n, m := count("sessions"), count("users"); n != wantSessions || m != wantUsers {
				t.Errorf("after the failed deleteUser: %d sessions and %d users, want %d and %d (transactions: %v)", n, m, wantSessions, wantUsers, tx)
			}
			if n := count("accounts"); n != 1 {
				t.Errorf("after the failed deleteUser: %d accounts, want the 1 it could not delete", n)
			}
			mongoadapter.SetAccountsCollectionForTest(a, "accounts")
			u, err := a.DeleteUser(ctx, "u")
			if err != nil {
				t.Fatalf("retried deleteUser: %v", err)
			}
			if (u != nil) != tx {
				t.Errorf("retried deleteUser returned %+v; want the user only if the first attempt left it (transactions: %v)", u, tx)
			}
			for _, coll := range []string{"users", "accounts", "sessions"} {
				if n := count(coll); n != 0 {
					t.Errorf("after the retried deleteUser: %d documents in %s, want 0", n, coll)
				}
			}
		})
	}
}

// With no server to select, New fails in one short line naming the address
// and its error, not the driver's topology dump, and still wraps the
// driver's error.
func TestNewNoServer(t *testing.T) {
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:1/").SetServerSelectionTimeout(300 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	_, err = mongoadapter.New(t.Context(), client.Database("x"))
	var sse topology.ServerSelectionError
	if err == nil || !errors.As(err, &sse) {
		t.Fatalf("New: %v; want a server selection error", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "current topology") || strings.Contains(msg, "\n") || !strings.Contains(msg, "127.0.0.1:1: ") || !strings.Contains(msg, "no MongoDB server could be selected") {
		t.Errorf("message %q", msg)
	}
}

// TestWithClock: the clock given decides expiry, for sessions and tokens.
func TestWithClock(t *testing.T) {
	s := newServer(t, nil)
	later := time.Now().Add(2 * time.Hour)
	a, _ := newAdapter(t, s, mongoadapter.WithClock(func() time.Time { return later }))
	ctx := context.Background()
	createUsers(t, a, "u")
	exp := time.Now().Add(time.Hour) // live by the wall clock, expired by the adapter's
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	if su, err := a.GetSessionAndUser(ctx, "s"); su != nil || err != nil {
		t.Errorf("GetSessionAndUser of a session expired by the clock = %+v, %v; want nil, nil", su, err)
	}
	if vt, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "i", Token: "t"}); vt != nil || err != nil {
		t.Errorf("UseVerificationToken of a token expired by the clock = %+v, %v; want nil, nil", vt, err)
	}
	if _, err := mongoadapter.New(ctx, s.db(t), mongoadapter.WithClock(nil)); !errors.Is(err, core.ErrInvalidInput) || !strings.HasPrefix(err.Error(), "mongoadapter: ") {
		t.Errorf("New with a nil clock = %v, want mongoadapter: … ErrInvalidInput", err)
	}
}
