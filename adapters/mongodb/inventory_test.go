package mongoadapter_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/conformance/interop"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// sessionDocs counts the session documents of the user with the id uid
// (stored as given), read with the driver alone.
func sessionDocs(t *testing.T, db *mongo.Database, uid any) int64 {
	t.Helper()
	n, err := db.Collection("sessions").CountDocuments(t.Context(), bson.D{{Key: "userId", Value: uid}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeleteSessionsCountUnderRace: 20 unexpired and 5 expired sessions,
// then 40 createSession and 10 deleteSessionsByUserId at once, 5 rounds.
// Afterwards no session that existed before is left; each new session is
// either gone or whole (readable and listed); and the counts the deletes
// returned add up exactly to the unexpired sessions that went: the 20, plus
// the new ones no longer there.
func TestDeleteSessionsCountUnderRace(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := t.Context()
	for round := range 5 {
		uid := fmt.Sprintf("u%d", round)
		createUsers(t, a, uid)
		var old []string
		for i := range 25 {
			sess := core.Session{SessionToken: fmt.Sprintf("old-%d-%02d", round, i), UserID: uid, Expires: time.Now().Add(time.Hour)}
			if i >= 20 {
				sess.Expires = time.Now().Add(-time.Minute)
			}
			if _, err := a.CreateSession(ctx, sess); err != nil {
				t.Fatal(err)
			}
			old = append(old, sess.SessionToken)
		}
		fresh := make([]string, 40)
		counts := make([]int, 10)
		errs := make([]error, 50)
		coretest.Concurrently(50, func(i int) {
			if i < 40 {
				fresh[i] = fmt.Sprintf("new-%d-%02d", round, i)
				_, errs[i] = a.CreateSession(ctx, core.Session{SessionToken: fresh[i], UserID: uid, Expires: time.Now().Add(time.Hour)})
				return
			}
			counts[i-40], errs[i] = a.DeleteSessionsByUserID(ctx, uid, "")
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, call %d: %v", round, i, err)
			}
		}
		for _, tok := range old {
			if su, err := a.GetSessionAndUser(ctx, tok); su != nil || err != nil {
				t.Errorf("round %d: session %s, there before the deletes, is readable after them: %+v, %v", round, tok, su, err)
			}
		}
		var left []string
		for _, tok := range fresh {
			if su, err := a.GetSessionAndUser(ctx, tok); err != nil {
				t.Fatal(err)
			} else if su != nil {
				left = append(left, tok)
			}
		}
		listed, err := a.ListSessionsByUserID(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		var tokens []string
		for _, l := range listed {
			tokens = append(tokens, l.SessionToken)
		}
		if !slices.Equal(tokens, left) {
			t.Errorf("round %d: listed %q, readable %q; want the same", round, tokens, left)
		}
		if n := sessionDocs(t, db, uid); n != int64(len(left)) {
			t.Errorf("round %d: %d session documents, %d readable", round, n, len(left))
		}
		sum := 0
		for _, c := range counts {
			sum += c
		}
		if want := 20 + len(fresh) - len(left); sum != want {
			t.Errorf("round %d: the deletes reported %d sessions (%v); want %d (20 old unexpired + %d new deleted)", round, sum, counts, want, len(fresh)-len(left))
		}
		t.Logf("round %d: %d new sessions left, counts %v", round, len(left), counts)
	}
}

// TestExtensionRacingRevoke: extendSession and updateSession (setting
// updatedAt) of a session, from two adapters, racing
// deleteSessionsByUserId, 30 rounds: the session never comes back, as a
// document or readable.
func TestExtensionRacingRevoke(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	b, err := mongoadapter.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	createUsers(t, a, "u")
	for round := range 30 {
		tok := fmt.Sprintf("s-%02d", round)
		from := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u", Expires: from}); err != nil {
			t.Fatal(err)
		}
		adapters := []*mongoadapter.Adapter{a, b}
		errs := make([]error, 13)
		coretest.Concurrently(13, func(i int) {
			x := adapters[i%2]
			switch {
			case i == 12:
				_, errs[i] = adapters[round%2].DeleteSessionsByUserID(ctx, "u", "")
			case i%3 == 0:
				_, errs[i] = x.UpdateSession(ctx, core.SessionUpdate{SessionToken: tok, UpdatedAt: core.Set(time.Now()), Expires: core.Set(from.Add(time.Minute))})
			default:
				_, _, errs[i] = x.ExtendSession(ctx, tok, from, from.Add(time.Duration(i)*time.Minute), time.Now())
			}
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, call %d: %v", round, i, err)
			}
		}
		if su, err := a.GetSessionAndUser(ctx, tok); su != nil || err != nil {
			t.Fatalf("round %d: the revoked session is readable again: %+v, %v", round, su, err)
		}
		if n := sessionDocs(t, db, "u"); n != 0 {
			t.Fatalf("round %d: %d session documents after the revocation", round, n)
		}
	}
}

// TestSessionMetadataDocument checks where the metadata live: fields of
// the session document, absent when unknown; extendSession and
// updateSession set updatedAt in their one write, updateSession with a zero
// UpdatedAt removes it; getSessionAndUser leaves the metadata out; fields of
// another type, as another application might write them, read as unknown.
func TestSessionMetadataDocument(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	ctx := t.Context()
	createUsers(t, a, "u")
	created := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	full := core.Session{SessionToken: "full", UserID: "u", Expires: exp, CreatedAt: created, UpdatedAt: created,
		IPAddress: "2001:db8::1", UserAgent: "Firefox"}
	for _, sess := range []core.Session{full, {SessionToken: "bare", UserID: "u", Expires: exp}} {
		if _, err := a.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(tok string) []string {
		t.Helper()
		raw, err := db.Collection("sessions").FindOne(ctx, bson.D{{Key: "sessionToken", Value: tok}},
			options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 0}})).Raw()
		if err != nil {
			t.Fatal(err)
		}
		elems, _ := raw.Elements()
		var out []string
		for _, e := range elems {
			out = append(out, e.Key()+":"+e.Value().Type.String())
		}
		return out
	}
	if got, want := keys("full"), []string{"sessionToken:string", "userId:string", "expires:UTC datetime", "createdAt:UTC datetime",
		"updatedAt:UTC datetime", "ipAddress:string", "userAgent:string"}; !slices.Equal(got, want) {
		t.Errorf("document of a session with metadata: %q, want %q", got, want)
	}
	if got, want := keys("bare"), []string{"sessionToken:string", "userId:string", "expires:UTC datetime"}; !slices.Equal(got, want) {
		t.Errorf("document of a session without metadata: %q, want %q", got, want)
	}
	if su, err := a.GetSessionAndUser(ctx, "full"); err != nil || su == nil || su.Session != full.WithoutMetadata() {
		t.Errorf("GetSessionAndUser = %+v, %v; want the session without its metadata", su, err)
	}

	seen := created.Add(time.Hour)
	if _, wrote, err := a.ExtendSession(ctx, "bare", exp, exp.Add(time.Hour), seen); err != nil || !wrote {
		t.Fatalf("ExtendSession = %v, %v", wrote, err)
	}
	if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "full", UpdatedAt: core.Set(time.Time{})}); err != nil {
		t.Fatal(err)
	}
	// Another application's fields of other types read as unknown.
	if _, err := db.Collection("sessions").InsertOne(ctx, bson.D{{Key: "sessionToken", Value: "other"}, {Key: "userId", Value: "u"},
		{Key: "expires", Value: bson.NewDateTimeFromTime(exp)}, {Key: "createdAt", Value: "yesterday"}, {Key: "ipAddress", Value: int32(7)}}); err != nil {
		t.Fatal(err)
	}
	got, err := a.ListSessionsByUserID(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	bare := core.Session{SessionToken: "bare", UserID: "u", Expires: exp.Add(time.Hour), UpdatedAt: seen}
	full.UpdatedAt = time.Time{}
	want := []core.Session{bare, full, {SessionToken: "other", UserID: "u", Expires: exp}}
	if !slices.Equal(got, want) {
		t.Errorf("ListSessionsByUserID =\n%+v\nwant\n%+v", got, want)
	}
	if k := keys("full"); slices.Contains(k, "updatedAt:UTC datetime") {
		t.Errorf("updateSession with a zero UpdatedAt left the field: %q", k)
	}
}

// TestMigrateEarlierDatabase: a database migrated by an earlier version
// (sessions indexed by userId_1) gains the compound index and keeps its
// own; a second Migrate changes nothing.
func TestMigrateEarlierDatabase(t *testing.T) {
	s := newServer(t, nil)
	db := s.db(t)
	ctx := t.Context()
	if _, err := db.Collection("sessions").Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "sessionToken", Value: 1}}, Options: options.Index().SetName("sessionToken_1").SetUnique(true)},
		{Keys: bson.D{{Key: "userId", Value: 1}}, Options: options.Index().SetName("userId_1")},
	}); err != nil {
		t.Fatal(err)
	}
	a, err := mongoadapter.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"_id_", "expires_1", "sessionToken_1", "userId_1", "userId_1_sessionToken_1_expires_1"}
	for i := range 2 {
		if err := a.Migrate(ctx); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
		specs, err := db.Collection("sessions").Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sp := range specs {
			got = append(got, sp.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("sessions indexes after Migrate #%d = %q, want %q", i+1, got, want)
		}
	}
}

// TestListSessionsPlan checks, on a real MongoDB (FerretDB's explain is
// SQLite's plan), that the listing is an index scan of
// userId_1_sessionToken_1_expires_1 with no sort in memory.
func TestListSessionsPlan(t *testing.T) {
	s := newServer(t, nil)
	a, db := newAdapter(t, s)
	if !a.Capabilities().AtomicFindAndModify {
		t.Skip("FerretDB: its explain output is not MongoDB's")
	}
	ctx := t.Context()
	// Enough sessions of other users that only the compound index serves
	// the query well (on an empty collection every plan ties).
	var docs []any
	for i := range 300 {
		docs = append(docs, bson.D{{Key: "sessionToken", Value: fmt.Sprintf("t%03d", i)}, {Key: "userId", Value: fmt.Sprintf("u%d", i%100)},
			{Key: "expires", Value: bson.NewDateTimeFromTime(time.Now().Add(time.Hour))}})
	}
	if _, err := db.Collection("sessions").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var out bson.Raw
	err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{
		{Key: "find", Value: "sessions"},
		{Key: "filter", Value: bson.D{{Key: "userId", Value: "u7"}, {Key: "expires", Value: bson.D{{Key: "$gt", Value: bson.NewDateTimeFromTime(time.Now())}}}}},
		{Key: "sort", Value: bson.D{{Key: "sessionToken", Value: 1}}},
	}}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&out)
	if err != nil {
		t.Fatal(err)
	}
	plan := out.Lookup("queryPlanner", "winningPlan")
	stages, ixNames := planValues(plan, "stage"), planValues(plan, "indexName")
	if !slices.Contains(ixNames, "userId_1_sessionToken_1_expires_1") || slices.Contains(stages, "SORT") {
		t.Errorf("the listing's winning plan (stages %q, indexes %q) is not an index scan of userId_1_sessionToken_1_expires_1 without SORT: %s", stages, ixNames, plan)
	}
}

// planValues returns the string values of the fields named key anywhere in
// the document or array v.
func planValues(v bson.RawValue, key string) []string {
	var out []string
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		elems, _ := v.Document().Elements()
		for _, e := range elems {
			if s, ok := e.Value().StringValueOK(); ok && e.Key() == key {
				out = append(out, s)
			}
			out = append(out, planValues(e.Value(), key)...)
		}
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		for _, e := range vals {
			out = append(out, planValues(e, key)...)
		}
	}
	return out
}

// TestInteropSessionInventory: Auth.js's @auth/mongodb-adapter and the
// session inventory on one database. Auth.js reads, extends and deletes a
// session authport created with metadata (its update keeps the metadata);
// authport lists Auth.js's sessions (without metadata) beside its own and
// extends one; after authport's deleteSessionsByUserId Auth.js finds none.
func TestInteropSessionInventory(t *testing.T) {
	f := setupInterop(t)
	a, node, ctx := f.Adapter.(*mongoadapter.Adapter), f.Node, t.Context()
	var nu struct {
		ID string `json:"id"`
	}
	node.Call(&nu, "createUser", map[string]any{"email": "inv@example.com", "emailVerified": nil})
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	mine := core.Session{SessionToken: "authport-1", UserID: nu.ID, Expires: exp, CreatedAt: exp.Add(-time.Hour),
		UpdatedAt: exp.Add(-time.Minute), IPAddress: "203.0.113.7", UserAgent: "Firefox"}
	if _, err := a.CreateSession(ctx, mine); err != nil {
		t.Fatal(err)
	}
	type nodeSession struct {
		SessionToken string `json:"sessionToken"`
		UserID       string `json:"userId"`
	}
	var su *struct {
		Session nodeSession `json:"session"`
	}
	node.Call(&su, "getSessionAndUser", mine.SessionToken)
	if su == nil || su.Session.SessionToken != mine.SessionToken || su.Session.UserID != nu.ID {
		t.Fatalf("Auth.js's getSessionAndUser of authport's session with metadata = %+v", su)
	}
	later := exp.Add(24 * time.Hour)
	node.Call(nil, "updateSession", map[string]any{"sessionToken": mine.SessionToken, "expires": interop.Date(later)})
	node.Call(nil, "createSession", map[string]any{"sessionToken": "authjs-1", "userId": nu.ID, "expires": interop.Date(exp)})

	got, err := a.ListSessionsByUserID(ctx, nu.ID)
	if err != nil {
		t.Fatal(err)
	}
	mine.Expires = later
	want := []core.Session{{SessionToken: "authjs-1", UserID: nu.ID, Expires: exp}, mine}
	if !slices.Equal(got, want) {
		t.Errorf("ListSessionsByUserID after Auth.js's update and create =\n%+v\nwant\n%+v", got, want)
	}
	seen := time.Now().Truncate(time.Millisecond).UTC()
	if _, wrote, err := a.ExtendSession(ctx, "authjs-1", exp, later, seen); err != nil || !wrote {
		t.Fatalf("ExtendSession of Auth.js's session = %v, %v", wrote, err)
	}
	su = nil
	node.Call(&su, "getSessionAndUser", "authjs-1")
	if su == nil {
		t.Fatal("Auth.js lost the session authport extended")
	}
	if n, err := a.DeleteSessionsByUserID(ctx, nu.ID, ""); err != nil || n != 2 {
		t.Fatalf("DeleteSessionsByUserID = %d, %v; want 2", n, err)
	}
	for _, tok := range []string{"authport-1", "authjs-1"} {
		su = nil
		node.Call(&su, "getSessionAndUser", tok)
		if su != nil {
			t.Errorf("Auth.js finds %s after authport's deleteSessionsByUserId: %+v", tok, su)
		}
	}
}
