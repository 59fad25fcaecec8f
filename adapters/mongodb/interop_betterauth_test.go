package mongoadapter_test

import (
	"fmt"
	"testing"

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
