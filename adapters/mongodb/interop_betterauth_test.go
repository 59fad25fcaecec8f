package mongoadapter_test

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/authport/authport/conformance/interop/betterauth"
	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// baNodeNeed are the packages interop/betterauth.mjs needs.
var baNodeNeed = []string{"better-auth/package.json", "mongodb/package.json"}

// TestInteropBetterAuth runs the Better Auth interop suite
// (conformance/interop/betterauth) on MongoDB (the stand-in where
// AUTHPORT_MONGODB_URL names it): a betterAuth() app on Better Auth's own
// mongodbAdapter (better-auth 1.7.25 and the mongodb driver, pinned in
// interop/package-lock.json, in a Node process) and authport's adapter with
// BetterAuth() share one database, each side writing its own documents.
func TestInteropBetterAuth(t *testing.T) {
	betterauth.Run(t, betterauth.Pairing{Name: "mongodb", Setup: setupBetterAuthRow})
}

// setupBetterAuthRow opens authport on a fresh database with BetterAuth()
// (its indexes made by Migrate) and starts the Better Auth app on the same
// database; user ids are ObjectIds on both sides (NewUserID).
func setupBetterAuthRow(t *testing.T) *betterauth.Fixture {
	t.Helper()
	nodeproc.Check(t, "interop", baNodeNeed...) // before any database is made
	url := provision.MongoDB(t)
	a, db := newAdapter(t, newServer(t, nil), mongoadapter.BetterAuth())
	secret := betterauth.NewSecret()
	node := betterauth.Start(t, nodeproc.Config{Dir: "interop", Script: "betterauth.mjs", Need: baNodeNeed}, secret,
		map[string]any{"url": url, "databaseName": db.Name(), "transactions": a.Capabilities().Transactions}, nil)
	return &betterauth.Fixture{
		Adapter: a, Node: node, Secret: secret,
		Leftovers: func(t testing.TB, id string) []string { return baMongoLeftovers(t, db, a.Collections(), id) },
		NewUserID: func(t testing.TB) string {
			id, err := a.NewUserID(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return id
		},
		// Better Auth's consumeVerificationValue is a findOneAndDelete,
		// as authport's useVerificationToken is: atomic where the server's
		// findAndModify is (MongoDB; not FerretDB).
		AtomicConsume: a.Capabilities().AtomicFindAndModify,
		// Better Auth's mongodbAdapter deletes with deleteOne:
		// deleteVerificationByIdentifier removes one of an identifier's
		// values.
		DeletesOne: true,
	}
}

// baMongoLeftovers counts, with the driver alone, the documents of Better
// Auth's user, session and account collections (and authport's own
// collections beside them) that belong to the user with the id: as _id or
// userId, an ObjectId or the string itself.
func baMongoLeftovers(t testing.TB, db *mongo.Database, names mongoadapter.Collections, id string) []string {
	t.Helper()
	ids := bson.A{id}
	if oid, err := bson.ObjectIDFromHex(id); err == nil {
		ids = append(ids, oid)
	}
	var out []string
	for _, q := range []struct{ coll, field string }{
		{names.Users, "_id"}, {names.Sessions, "userId"}, {names.Accounts, "userId"},
		{names.Authenticators, "userId"}, {names.Factors, "userId"},
	} {
		n, err := db.Collection(q.coll).CountDocuments(t.Context(), bson.D{{Key: q.field, Value: bson.D{{Key: "$in", Value: ids}}}})
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d in %s", n, q.coll))
		}
	}
	return out
}

// TestInteropBetterAuthFirst: a Better Auth app that ran first on an
// empty database (its mongodbAdapter creating its collections and its own
// indexes, under its own names) and then authport with BetterAuth():
// Migrate succeeds beside Better Auth's indexes, adding no second unique
// index on the same keys, and authport reads the user Better Auth signed
// up.
func TestInteropBetterAuthFirst(t *testing.T) {
	nodeproc.Check(t, "interop", baNodeNeed...)
	url := provision.MongoDB(t)
	db := newServer(t, nil).db(t)
	node := betterauth.Start(t, nodeproc.Config{Dir: "interop", Script: "betterauth.mjs", Need: baNodeNeed}, betterauth.NewSecret(),
		map[string]any{"url": url, "databaseName": db.Name()}, nil)
	var r betterauth.TokenAndUser
	if err := node.Do(map[string]any{"method": "signUp", "args": []any{map[string]any{
		"email": "first@example.com", "password": "correct horse battery", "name": "First"}}}, &r); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	uniqueOn := func(coll, key string) []string {
		t.Helper()
		cur, err := db.Collection(coll).Indexes().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var specs []bson.Raw
		if err := cur.All(ctx, &specs); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range specs {
			k, _ := s.Lookup("key").DocumentOK()
			u, _ := s.Lookup("unique").BooleanOK()
			if elems, _ := k.Elements(); u && len(elems) == 1 && elems[0].Key() == key {
				names = append(names, s.Lookup("name").StringValue())
			}
		}
		return names
	}
	// Better Auth builds its indexes in the background: wait for them.
	deadline := time.Now().Add(10 * time.Second)
	for len(uniqueOn("user", "email")) == 0 || len(uniqueOn("session", "token")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Better Auth made no unique index on user.email and session.token: %v, %v", uniqueOn("user", "email"), uniqueOn("session", "token"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := [][]string{uniqueOn("user", "email"), uniqueOn("session", "token")}
	a, err := mongoadapter.New(ctx, db, mongoadapter.BetterAuth())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Migrate(ctx); err != nil {
		t.Fatalf("Migrate on Better Auth's collections and indexes: %v", err)
	}
	if after := [][]string{uniqueOn("user", "email"), uniqueOn("session", "token")}; fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("unique indexes on user.email and session.token: %v before Migrate, %v after; want Better Auth's kept, none added", before, after)
	}
	u, err := a.GetUserByEmail(ctx, "first@example.com")
	if err != nil || u == nil || u.ID != string(r.User.ID) || u.Name == nil || *u.Name != "First" || u.EmailVerified != nil {
		t.Errorf("authport reads Better Auth's first user as %+v, %v", u, err)
	}
	su, err := a.GetSessionAndUser(ctx, r.Token)
	if err != nil || su == nil || su.User.ID != string(r.User.ID) {
		t.Errorf("authport reads Better Auth's first session as %+v, %v", su, err)
	}
}
