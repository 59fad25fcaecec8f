package mongoadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/authport/authport/core"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// isFerretDB reports whether the database's server is FerretDB (its
// buildInfo has a ferretdbVersion), which has no partial indexes.
func isFerretDB(t testing.TB, db *mongo.Database) bool {
	t.Helper()
	info, err := db.RunCommand(t.Context(), bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, err = info.LookupErr("ferretdbVersion")
	return err == nil
}

// checkOptionalIndexes checks email_1 and username_1 of the users
// collection: unique, and partial over strings where the adapter says the
// server has partial indexes.
func checkOptionalIndexes(t *testing.T, a *mongoadapter.Adapter, db *mongo.Database) {
	t.Helper()
	cur, err := db.Collection("users").Indexes().List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var specs []bson.Raw
	if err := cur.All(t.Context(), &specs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, sp := range specs {
		name, _ := sp.Lookup("name").StringValueOK()
		field := map[string]string{"email_1": "email", "username_1": "username"}[name]
		if field == "" {
			continue
		}
		seen[name] = true
		if u, _ := sp.Lookup("unique").BooleanOK(); !u {
			t.Errorf("users.%s is not unique: %s", name, sp)
		}
		pf, hasPF := sp.Lookup("partialFilterExpression").DocumentOK()
		if !a.Capabilities().PartialIndexes {
			continue
		}
		want := fmt.Sprintf(`{"%s": {"$type": "string"}}`, field)
		if !hasPF || pf.String() != want {
			t.Errorf("users.%s has partialFilterExpression %v, want %s: %s", name, pf, want, sp)
		}
	}
	if !seen["email_1"] || !seen["username_1"] {
		t.Errorf("users indexes %v lack email_1 or username_1", specs)
	}
}

// checkEmailLessUsers checks, through the adapter, what the e-mail index
// must allow and refuse: two users without an address (absent field)
// coexist, a taken address is refused; and, through the driver, documents
// with email null as Auth.js writes them: any number where the index is
// partial, exactly one where it is sparse (Capabilities.PartialIndexes).
func checkEmailLessUsers(t *testing.T, a *mongoadapter.Adapter, db *mongo.Database, prefix string) {
	t.Helper()
	ctx := t.Context()
	for _, id := range []string{prefix + "-a", prefix + "-b"} {
		if _, err := a.CreateUser(ctx, core.User{ID: id}); err != nil {
			t.Errorf("CreateUser(%s) without an address: %v", id, err)
		}
	}
	if _, err := a.CreateUser(ctx, core.User{ID: prefix + "-c", Email: prefix + "@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateUser(ctx, core.User{ID: prefix + "-d", Email: prefix + "@example.com"}); !errors.Is(err, core.ErrAlreadyExists) {
		t.Errorf("CreateUser with a taken address: %v, want ErrAlreadyExists", err)
	}
	var errs []error
	for _, id := range []string{prefix + "-n1", prefix + "-n2"} {
		_, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "email", Value: nil}})
		errs = append(errs, err)
	}
	if errs[0] != nil {
		t.Errorf("inserting the first user with email null: %v", errs[0])
	}
	if a.Capabilities().PartialIndexes {
		if errs[1] != nil {
			t.Errorf("inserting a second user with email null (partial index): %v", errs[1])
		}
	} else if !mongo.IsDuplicateKeyError(errs[1]) {
		t.Errorf("inserting a second user with email null (sparse index, which indexes null): %v, want a duplicate key error", errs[1])
	}
	if u, err := a.GetUser(ctx, prefix+"-n1"); err != nil || u == nil || u.Email != "" {
		t.Errorf("GetUser of a user with email null = %+v, %v; want Email \"\"", u, err)
	}
	if u, err := a.GetUserByEmail(ctx, ""); u != nil || err != nil {
		t.Errorf("GetUserByEmail(\"\") = %+v, %v; want nil, nil", u, err)
	}
}

// TestMigrateReplacesPlainEmailIndex: on a database whose email_1 is the
// plain unique index earlier versions made (one user without an address
// already stored), Migrate makes it the partial index (sparse where the
// server has no partial indexes), twice in a row and from four adapters at
// once, and users without an address then coexist. On FerretDB the four
// run one after another: the stand-in closes the connection of concurrent
// createIndexes commands on one collection, whoever sends them
// (tools/mongostandin/README.md).
func TestMigrateReplacesPlainEmailIndex(t *testing.T) {
	s := newServer(t, nil)
	for round := range 3 {
		db := s.db(t)
		ctx := t.Context()
		users := db.Collection("users")
		if _, err := users.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}},
			Options: options.Index().SetName("email_1").SetUnique(true)}); err != nil {
			t.Fatal(err)
		}
		if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: "earlier"}, {Key: "email", Value: "earlier@example.com"}}); err != nil {
			t.Fatal(err)
		}
		var adapters []*mongoadapter.Adapter
		for range 4 {
			a, err := mongoadapter.New(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			adapters = append(adapters, a)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(adapters))
		concurrent := !isFerretDB(t, db)
		for i, a := range adapters {
			wg.Go(func() { errs[i] = a.Migrate(ctx) })
			if !concurrent {
				wg.Wait()
			}
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: Migrate of adapter %d (run at once with three others: %v): %v", round, i, concurrent, err)
			}
		}
		a := adapters[0]
		if err := a.Migrate(ctx); err != nil {
			t.Fatalf("round %d: Migrate again: %v", round, err)
		}
		if got, want := a.Capabilities().PartialIndexes, !isFerretDB(t, db); got != want {
			t.Errorf("Capabilities().PartialIndexes = %v, want %v", got, want)
		}
		checkOptionalIndexes(t, a, db)
		checkEmailLessUsers(t, a, db, fmt.Sprintf("r%d", round))
		if u, err := a.GetUserByEmail(ctx, "earlier@example.com"); err != nil || u == nil || u.ID != "earlier" {
			t.Errorf("the user stored before Migrate: %+v, %v", u, err)
		}
	}
}

// TestMigrateFresh: on a new database Migrate makes the optional indexes
// at once, and users without an address coexist.
func TestMigrateFresh(t *testing.T) {
	a, db := newAdapter(t, newServer(t, nil))
	checkOptionalIndexes(t, a, db)
	checkEmailLessUsers(t, a, db, "fresh")
}

// TestOptionalFieldsShape checks the stored documents of a user without an
// address, with a username, and of a password account: "" is an absent
// field, the username and the hash are strings; removing the address or
// username removes the field; an account without a hash has no password
// field.
func TestOptionalFieldsShape(t *testing.T) {
	a, db := newAdapter(t, newServer(t, nil))
	ctx := t.Context()
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Username: "ada.l"}); err != nil {
		t.Fatal(err)
	}
	hash := "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"
	if _, err := a.LinkAccount(ctx, core.Account{UserID: "u", Provider: core.PasswordProvider, Type: core.AccountTypeCredentials,
		ProviderAccountID: "u", PasswordHash: &hash}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.LinkAccount(ctx, core.Account{UserID: "u", Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "gh"}); err != nil {
		t.Fatal(err)
	}
	shape := func(coll string, filter bson.D) string {
		return fmt.Sprint(keysAndTypes(t, rawDoc(t, db, coll, filter)))
	}
	if got, want := shape("users", bson.D{{Key: "_id", Value: "u"}}), "[username:string emailVerified:null name:null image:null]"; got != want {
		t.Errorf("user without an address: fields %s, want %s", got, want)
	}
	if got := shape("accounts", bson.D{{Key: "provider", Value: core.PasswordProvider}}); !strings.Contains(got, "password:string") {
		t.Errorf("password account: fields %s, want a password string", got)
	}
	if got := shape("accounts", bson.D{{Key: "provider", Value: "github"}}); strings.Contains(got, "password") {
		t.Errorf("account without a hash: fields %s, want no password field", got)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u", Email: core.Set("u@example.com")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u", Email: core.Set(""), Username: core.Set("")}); err != nil {
		t.Fatal(err)
	}
	if got, want := shape("users", bson.D{{Key: "_id", Value: "u"}}), "[emailVerified:null name:null image:null]"; got != want {
		t.Errorf("after removing the address and the username: fields %s, want %s", got, want)
	}
}

// TestUsernameDataRefused: an application field named username, the field
// usernames are stored in, is refused on create and update, and nothing is
// written.
func TestUsernameDataRefused(t *testing.T) {
	a, db := newAdapter(t, newServer(t, nil))
	ctx := t.Context()
	data := map[string]json.RawMessage{"username": json.RawMessage(`"x"`)}
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Data: data}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("CreateUser with application field username: %v, want ErrInvalidInput", err)
	}
	if n, err := db.Collection("users").CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Errorf("users after the refused create: %d, %v", n, err)
	}
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Username: "ada"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u", Data: data}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("UpdateUser with application field username: %v, want ErrInvalidInput", err)
	}
	if u, err := a.GetUserByUsername(ctx, "ada"); err != nil || u == nil || u.ID != "u" || u.Data != nil {
		t.Errorf("GetUserByUsername after the refused update = %+v, %v", u, err)
	}
}

// TestSwapPasswordHashOnAuthJSAccount: an account Auth.js (or Better Auth)
// wrote with password null reads back without a hash, and swapping from ""
// sets one.
func TestSwapPasswordHashOnAuthJSAccount(t *testing.T) {
	a, db := newAdapter(t, newServer(t, nil))
	ctx := context.Background()
	createUsers(t, a, "u")
	if _, err := db.Collection("accounts").InsertOne(ctx, bson.D{{Key: "userId", Value: "u"}, {Key: "type", Value: "credentials"},
		{Key: "provider", Value: core.PasswordProvider}, {Key: "providerAccountId", Value: "u"}, {Key: "password", Value: nil}}); err != nil {
		t.Fatal(err)
	}
	key := core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "u"}
	if acc, err := a.GetAccount(ctx, "u", core.PasswordProvider); err != nil || acc == nil || acc.PasswordHash != nil {
		t.Fatalf("GetAccount of an account with password null = %+v, %v; want no hash", acc, err)
	}
	if acc, err := a.SwapPasswordHash(ctx, key, "other", "h1"); !errors.Is(err, core.ErrPasswordHashChanged) || acc == nil || acc.PasswordHash != nil {
		t.Errorf("SwapPasswordHash from a hash the account lacks = %+v, %v; want the stored account and ErrPasswordHashChanged", acc, err)
	}
	if acc, err := a.SwapPasswordHash(ctx, key, "", "h1"); err != nil || acc == nil || acc.PasswordHash == nil || *acc.PasswordHash != "h1" {
		t.Errorf("SwapPasswordHash from \"\" = %+v, %v; want hash h1", acc, err)
	}
	if acc, err := a.SwapPasswordHash(ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "nobody"}, "", "h1"); acc != nil || err != nil {
		t.Errorf("SwapPasswordHash of no account = %+v, %v; want nil, nil", acc, err)
	}
}

// TestUserLookupPlan checks, on a real MongoDB (FerretDB has no partial
// indexes, and its explain output is SQLite's plan), that the finds of
// getUserByEmail and getUserByUsername, as the adapter sends them
// (captured from the driver), are index scans of the partial indexes.
func TestUserLookupPlan(t *testing.T) {
	var mu sync.Mutex
	var filters []bson.Raw
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "find" {
			return
		}
		if f, ok := e.Command.Lookup("filter").DocumentOK(); ok {
			mu.Lock()
			filters = append(filters, slices.Clone(f))
			mu.Unlock()
		}
	}}
	a, db := newAdapter(t, newServer(t, mon))
	if !a.Capabilities().PartialIndexes {
		t.Skip("no partial indexes on this server (FerretDB)")
	}
	ctx := t.Context()
	for i := range 200 {
		u := core.User{ID: fmt.Sprintf("u%d", i), Email: fmt.Sprintf("u%d@example.com", i), Username: fmt.Sprintf("user%d", i)}
		if i%2 == 0 {
			u.Email, u.Username = "", ""
		}
		if _, err := a.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		index  string
		lookup func() (*core.User, error)
	}{
		{"email_1", func() (*core.User, error) { return a.GetUserByEmail(ctx, "u7@example.com") }},
		{"username_1", func() (*core.User, error) { return a.GetUserByUsername(ctx, "user7") }},
	} {
		mu.Lock()
		filters = nil
		mu.Unlock()
		if u, err := c.lookup(); err != nil || u == nil || u.ID != "u7" {
			t.Fatalf("lookup by %s = %+v, %v", c.index, u, err)
		}
		mu.Lock()
		sent := slices.Clone(filters)
		mu.Unlock()
		if len(sent) != 1 {
			t.Fatalf("lookup by %s sent %d finds, want 1", c.index, len(sent))
		}
		var out bson.Raw
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "users"}, {Key: "filter", Value: sent[0]}}},
			{Key: "verbosity", Value: "queryPlanner"}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		plan := out.Lookup("queryPlanner", "winningPlan")
		if ix := planValues(plan, "indexName"); !slices.Contains(ix, c.index) {
			t.Errorf("the find %s uses indexes %q, want %s: %s", sent[0], ix, c.index, plan)
		}
	}
}
