package mongoadapter_test

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/authport/authport/conformance/interop"
	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// TestInteropAuthJS runs the Auth.js interop suite (conformance/interop)
// with Auth.js's own @auth/mongodb-adapter (and the official mongodb
// driver; versions pinned in interop/package.json), in a Node process
// through interop/mongodb.mjs, against the same database as an authport
// adapter with WithObjectIDs.
func TestInteropAuthJS(t *testing.T) {
	interop.Run(t, interop.Pairing{Name: "mongodb-adapter", Setup: setupInterop})
}

func setupInterop(t *testing.T) *interop.Fixture {
	url := provision.MongoDB(t)
	a, db := newAdapter(t, newServer(t, nil), mongoadapter.WithObjectIDs())
	node := interop.Start(t, nodeproc.Config{Dir: "interop", Script: "mongodb.mjs", Need: []string{"@auth/mongodb-adapter/index.js"}},
		map[string]string{"url": url, "databaseName": db.Name()}, nil)
	return &interop.Fixture{
		Adapter: a, Node: node,
		Leftovers: func(t testing.TB, u interop.Trace) []string { return leftovers(t, db, u) },
		NewUserID: func(testing.TB) string { return bson.NewObjectID().Hex() },
		// @auth/mongodb-adapter 3.11.3 has no getAccount and no
		// authenticator methods; its unlinkAccount and deleteSession return
		// what they deleted.
		ReturnsDeleted: true,
		Authenticators: true,
		// It uses findOneAndDelete: atomic exactly where the server's
		// findAndModify is (MongoDB; not FerretDB).
		AtomicUse:         a.Capabilities().AtomicFindAndModify,
		UsersWithoutEmail: true,
		// Without partial indexes (FerretDB) email_1 is sparse, which
		// indexes null.
		NullEmailOnce: !a.Capabilities().PartialIndexes,
	}
}

// leftovers counts the documents of each collection that mention the user
// (its ObjectId as _id or userId, or its e-mail), read with the driver.
func leftovers(t testing.TB, db *mongo.Database, u interop.Trace) []string {
	t.Helper()
	oid, err := bson.ObjectIDFromHex(u.ID)
	if err != nil {
		t.Fatal(err)
	}
	names := mongoadapter.DefaultCollections()
	var out []string
	for _, c := range []string{names.Users, names.Accounts, names.Sessions, names.VerificationTokens, names.Authenticators} {
		n, err := db.Collection(c).CountDocuments(t.Context(), bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "_id", Value: oid}}, bson.D{{Key: "userId", Value: oid}}, bson.D{{Key: "userId", Value: u.ID}},
			bson.D{{Key: "email", Value: u.Email}}, bson.D{{Key: "identifier", Value: u.Email}},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d in %s", n, c))
		}
	}
	return out
}

// TestInteropObjectIDs checks that the users Auth.js creates have
// ObjectIds, which authport's WithObjectIDs reads as their hex.
func TestInteropObjectIDs(t *testing.T) {
	f := setupInterop(t)
	var nu interop.User
	if err := f.Node.Do(map[string]any{"method": "createUser", "args": []any{map[string]any{"email": "oid@example.com", "emailVerified": nil}}}, &nu); err != nil {
		t.Fatal(err)
	}
	if _, err := bson.ObjectIDFromHex(string(nu.ID)); err != nil {
		t.Fatalf("Auth.js's user id %q is not an ObjectId's hex: %v", nu.ID, err)
	}
	if u, err := f.Adapter.GetUser(t.Context(), string(nu.ID)); err != nil || u == nil || u.Email != "oid@example.com" {
		t.Errorf("GetUser(%q) = %+v, %v", nu.ID, u, err)
	}
}

// TestInteropEmailNull: Auth.js's core creates a user without an address
// with email undefined, which the MongoDB driver stores as null. Two such
// users coexist where Migrate made email_1 a partial index; where the
// server has no partial indexes (FerretDB) it is sparse, which indexes
// null, and the second is refused as a duplicate, while users without the
// field (as authport writes them) still coexist.
func TestInteropEmailNull(t *testing.T) {
	f := setupInterop(t)
	a := f.Adapter.(*mongoadapter.Adapter)
	create := func() (*interop.User, error) {
		var u *interop.User
		err := f.Node.Do(map[string]any{"method": "createUser", "args": []any{map[string]any{"email": nil, "emailVerified": nil, "name": "X"}}}, &u)
		return u, err
	}
	first, err := create()
	if err != nil || first == nil {
		t.Fatalf("Auth.js createUser with email null: %+v, %v", first, err)
	}
	second, err := create()
	if a.Capabilities().PartialIndexes {
		if err != nil || second == nil {
			t.Errorf("Auth.js createUser, a second user with email null (partial index): %+v, %v", second, err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "E11000") {
		t.Errorf("Auth.js createUser, a second user with email null (sparse index, which indexes null) = %+v, %v; want a duplicate key error", second, err)
	}
	for range 2 {
		if _, err := a.CreateUser(t.Context(), core.User{ID: bson.NewObjectID().Hex()}); err != nil {
			t.Errorf("authport createUser without an address beside Auth.js's user with email null: %v", err)
		}
	}
}
