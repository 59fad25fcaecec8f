package mongoadapter_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// connectExample connects to the MongoDB server on localhost, as an
// application connects with the driver, and returns the database "auth"
// and a function that disconnects.
func connectExample(ctx context.Context) (*mongo.Database, func()) {
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:27017/"))
	if err != nil {
		log.Fatal(err)
	}
	return client.Database("auth"), func() { _ = client.Disconnect(ctx) }
}

// This example needs a MongoDB server on localhost, so it is compiled but
// not run by go test (it has no Output comment).
func Example() {
	ctx := context.Background()
	db, disconnect := connectExample(ctx)
	defer disconnect()

	store, err := mongoadapter.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	// Once at start-up: unique indexes, and TTL indexes where supported.
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	user, err := store.CreateUser(ctx, core.User{ID: "user-1", Email: "ada@example.com", Name: new("Ada")})
	if err != nil {
		log.Fatal(err)
	}
	_, err = store.CreateSession(ctx, core.Session{SessionToken: "random-token", UserID: user.ID, Expires: time.Now().Add(30 * 24 * time.Hour)})
	if err != nil {
		log.Fatal(err)
	}
	su, err := store.GetSessionAndUser(ctx, "random-token")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(su.User.Email, store.Capabilities())
}

// With WithObjectIDs, user ids are ObjectIds in hexadecimal, as Auth.js's
// MongoDB adapter stores them. Like the example above it needs a server and
// is not run.
func ExampleWithObjectIDs() {
	ctx := context.Background()
	db, disconnect := connectExample(ctx)
	defer disconnect()

	store, err := mongoadapter.New(ctx, db, mongoadapter.WithObjectIDs())
	if err != nil {
		log.Fatal(err)
	}
	id := bson.NewObjectID().Hex()
	if _, err := store.CreateUser(ctx, core.User{ID: id, Email: "grace@example.com"}); err != nil {
		log.Fatal(err)
	}
	// An id that is not an ObjectId is never replaced by one: it is
	// rejected on create and finds nothing on lookup.
	_, err = store.CreateUser(ctx, core.User{ID: "not-an-objectid", Email: "x@example.com"})
	fmt.Println(err != nil)
}

// A second factor's use is a compare-and-set: of two requests checking the
// same TOTP code, possibly on two instances of the application, one
// advances the factor's step and the other is told it changed. Like the
// examples above it needs a server and is not run.
func ExampleAdapter_SwapFactor() {
	ctx := context.Background()
	db, disconnect := connectExample(ctx)
	defer disconnect()

	store, err := mongoadapter.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := store.CreateUser(ctx, core.User{ID: "user-2", Email: "lin@example.com"}); err != nil {
		log.Fatal(err)
	}
	// The library seals the TOTP key before it reaches the adapter.
	f, err := store.CreateFactor(ctx, core.Factor{ID: "factor-1", UserID: "user-2", Type: core.FactorTOTP,
		Name: "Phone", Secret: []byte("sealed key"), CreatedAt: time.Now()})
	if err != nil {
		log.Fatal(err)
	}
	used := *f
	used.Step, used.LastUsedAt = time.Now().Unix()/30, time.Now()
	_, first := store.SwapFactor(ctx, *f, used)
	_, second := store.SwapFactor(ctx, *f, used) // the same code again
	fmt.Println(first == nil, errors.Is(second, core.ErrFactorChanged))
}

// With BetterAuth, the adapter shares the collections of a Better Auth app
// (its mongodbAdapter, on the same database): authport's sign-ins create
// users with ObjectId ids (NewUserID, wired into auth.Config.GenerateUserID
// as GenerateUserID: func() (string, error) { return store.NewUserID(ctx) }),
// and each side reads the users, sessions, accounts and verification values
// the other wrote. It needs a MongoDB server, so it is not run.
func ExampleBetterAuth() {
	ctx := context.Background()
	db, disconnect := connectExample(ctx)
	defer disconnect()

	store, err := mongoadapter.New(ctx, db, mongoadapter.BetterAuth())
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil { // beside Better Auth's own indexes
		log.Fatal(err)
	}
	id, err := store.NewUserID(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Better Auth requires an e-mail address of every user.
	if _, err := store.CreateUser(ctx, core.User{ID: id, Email: "ada@example.com", Name: new("Ada")}); err != nil {
		log.Fatal(err)
	}
	// A user Better Auth signed up is found the same way.
	u, err := store.GetUserByEmail(ctx, "ada@example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.ID == id, store.Collections().Users)
}
