package mongoadapter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// server connects to the MongoDB server of provision.MongoDB (skipping or
// failing t without one) once, on first use, and disconnects when the test
// that created it ends.
type server struct {
	owner   testing.TB
	monitor *event.CommandMonitor
	once    sync.Once
	client  *mongo.Client
	err     error
}

// newServer returns a lazily connected server owned by t. monitor, when not
// nil, sees every command of the client.
func newServer(t testing.TB, monitor *event.CommandMonitor) *server {
	return &server{owner: t, monitor: monitor}
}

// db returns a database of its own for t, dropped when t ends.
func (s *server) db(t testing.TB) *mongo.Database {
	t.Helper()
	uri := provision.MongoDB(t)
	s.once.Do(func() {
		opts := options.Client().ApplyURI(uri).SetTimeout(30 * time.Second)
		if s.monitor != nil {
			opts.SetMonitor(s.monitor)
		}
		s.client, s.err = mongo.Connect(opts)
		if s.err == nil {
			c := s.client
			s.owner.Cleanup(func() { _ = c.Disconnect(context.Background()) })
		}
	})
	if s.err != nil {
		t.Fatalf("connecting to %s: %v", uri, s.err)
	}
	db := s.client.Database(dbName())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			t.Errorf("dropping test database %s: %v", db.Name(), err)
		}
	})
	return db
}

// dbName returns a fresh database name.
func dbName() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "authport_test_" + hex.EncodeToString(b)
}

// newAdapter returns an adapter on a fresh database with its indexes.
func newAdapter(t testing.TB, s *server, opts ...mongoadapter.Option) (*mongoadapter.Adapter, *mongo.Database) {
	t.Helper()
	db := s.db(t)
	ctx := context.Background()
	a, err := mongoadapter.New(ctx, db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return a, db
}

// createUsers creates a user for each id, with the e-mail id@example.com.
func createUsers(t testing.TB, a core.UserCreator, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := a.CreateUser(context.Background(), core.User{ID: id, Email: id + "@example.com"}); err != nil {
			t.Fatalf("CreateUser(%q): %v", id, err)
		}
	}
}

// rawView reads the adapter's collections with the driver alone, decoding
// the documents field by field, without the adapter's code.
type rawView struct {
	db    *mongo.Database
	names mongoadapter.Collections
}

func (r rawView) all(ctx context.Context, coll string) ([]bson.Raw, error) {
	cur, err := r.db.Collection(coll).Find(ctx, bson.D{})
	if err != nil {
		return nil, err
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	return docs, nil
}

// field reads one field of a raw document, checking its BSON type. A
// nullable field may be null (never absent: the adapter stores nulls).
type field struct {
	doc bson.Raw
	err error
}

func (f *field) value(name string, types ...bson.Type) (bson.RawValue, bool) {
	v, err := f.doc.LookupErr(name)
	if err != nil {
		if f.err == nil {
			f.err = fmt.Errorf("document %s has no field %q", f.doc, name)
		}
		return v, false
	}
	for _, t := range types {
		if v.Type == t {
			return v, true
		}
	}
	if f.err == nil {
		f.err = fmt.Errorf("field %q of %s has BSON type %v, want %v", name, f.doc, v.Type, types)
	}
	return v, false
}

// one reads the field of BSON type t with conv; the zero T when it is
// missing or of another type (f.err says which).
func one[T any](f *field, name string, t bson.Type, conv func(bson.RawValue) T) T {
	v, ok := f.value(name, t)
	if !ok {
		var zero T
		return zero
	}
	return conv(v)
}

// nullable reads the field of BSON type t or null with conv; nil when it is
// null, missing or of another type (f.err says which of the last two).
func nullable[T any](f *field, name string, t bson.Type, conv func(bson.RawValue) T) *T {
	v, ok := f.value(name, t, bson.TypeNull)
	if !ok || v.Type == bson.TypeNull {
		return nil
	}
	x := conv(v)
	return &x
}

func dateTime(v bson.RawValue) time.Time { return time.UnixMilli(v.DateTime()).UTC() }

func (f *field) str(name string) string {
	return one(f, name, bson.TypeString, bson.RawValue.StringValue)
}

func (f *field) nullStr(name string) *string {
	return nullable(f, name, bson.TypeString, bson.RawValue.StringValue)
}

// optStr reads a string field the adapter stores only when it is set: nil
// when it is absent. A stored "" or null is an error: the adapter stores
// neither (both would be indexed, or read as set).
func (f *field) optStr(name string) *string {
	if _, err := f.doc.LookupErr(name); err != nil {
		return nil
	}
	v := f.str(name)
	if f.err == nil && v == "" {
		f.err = fmt.Errorf("field %q of %s is \"\": the adapter stores an absent field for none", name, f.doc)
	}
	return &v
}

// absentStr is optStr with "" for an absent field.
func (f *field) absentStr(name string) string {
	if p := f.optStr(name); p != nil {
		return *p
	}
	return ""
}

func (f *field) id(name string) string {
	v, ok := f.value(name, bson.TypeString, bson.TypeObjectID)
	if !ok {
		return ""
	}
	if v.Type == bson.TypeObjectID {
		return v.ObjectID().Hex()
	}
	return v.StringValue()
}

func (f *field) time(name string) time.Time { return one(f, name, bson.TypeDateTime, dateTime) }

func (f *field) nullTime(name string) *time.Time {
	return nullable(f, name, bson.TypeDateTime, dateTime)
}

func (f *field) int64(name string) int64 { return one(f, name, bson.TypeInt64, bson.RawValue.Int64) }

func (f *field) nullInt64(name string) *int64 {
	return nullable(f, name, bson.TypeInt64, bson.RawValue.Int64)
}

func (f *field) bool(name string) bool {
	return one(f, name, bson.TypeBoolean, bson.RawValue.Boolean)
}

// strings reads a list of strings that may be absent (nil).
func (f *field) strings(name string) []string {
	if _, err := f.doc.LookupErr(name); err != nil {
		return nil
	}
	v, ok := f.value(name, bson.TypeArray)
	if !ok {
		return nil
	}
	vals, err := v.Array().Values()
	if err != nil {
		f.err = err
		return nil
	}
	out := []string{}
	for _, e := range vals {
		out = append(out, e.StringValue())
	}
	return out
}

// records reads every document of the collection coll with read, which
// reads its fields through f (f.err, when set, is the error).
func records[R any](ctx context.Context, r rawView, coll string, read func(f *field) (R, error)) ([]R, error) {
	docs, err := r.all(ctx, coll)
	if err != nil {
		return nil, err
	}
	out := []R{}
	for _, d := range docs {
		f := field{doc: d}
		rec, err := read(&f)
		if err == nil {
			err = f.err
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

func (r rawView) Users(ctx context.Context) ([]core.User, error) {
	return records(ctx, r, r.names.Users, func(f *field) (core.User, error) {
		u := core.User{
			ID: f.id("_id"), Email: f.absentStr("email"), Username: f.absentStr("username"), EmailVerified: f.nullTime("emailVerified"),
			Name: f.nullStr("name"), Image: f.nullStr("image"),
		}
		if f.err != nil {
			return u, f.err
		}
		var err error
		u.Data, err = otherFields(f.doc)
		return u, err
	})
}

// otherFields returns the fields of a user document beside the standard
// ones, as JSON (relaxed extended JSON), nil when there are none.
func otherFields(d bson.Raw) (map[string]json.RawMessage, error) {
	elems, err := d.Elements()
	if err != nil {
		return nil, err
	}
	var data map[string]json.RawMessage
	for _, e := range elems {
		switch e.Key() {
		case "_id", "email", "username", "emailVerified", "name", "image":
			continue
		}
		b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: e.Value()}}, false, false)
		if err != nil {
			return nil, err
		}
		var w struct{ V json.RawMessage }
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, err
		}
		if data == nil {
			data = map[string]json.RawMessage{}
		}
		data[e.Key()] = w.V
	}
	return data, nil
}

// WriteUserData sets top-level fields of the user document, as another
// application sharing the collection would (conformance.UserDataWriter).
func (r rawView) WriteUserData(ctx context.Context, userID string, data map[string]json.RawMessage) error {
	var id any = userID
	if oid, err := bson.ObjectIDFromHex(userID); err == nil && len(userID) == 24 {
		id = oid
	}
	set := bson.D{}
	for k, v := range data {
		var x any
		if err := bson.UnmarshalExtJSON([]byte(`{"v":`+string(v)+`}`), false, &x); err != nil {
			return err
		}
		set = append(set, bson.E{Key: k, Value: x.(bson.D)[0].Value})
	}
	res, err := r.db.Collection(r.names.Users).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: set}})
	if err == nil && res.MatchedCount != 1 {
		err = fmt.Errorf("no user %q", userID)
	}
	return err
}

func (r rawView) Accounts(ctx context.Context) ([]core.Account, error) {
	return records(ctx, r, r.names.Accounts, func(f *field) (core.Account, error) {
		acc := core.Account{
			UserID: f.id("userId"), Provider: f.str("provider"), Type: core.AccountType(f.str("type")),
			ProviderAccountID: f.str("providerAccountId"), AccessToken: f.nullStr("access_token"),
			ExpiresAt: f.nullInt64("expires_at"), ExpiresIn: f.nullInt64("expires_in"),
			IDToken: f.nullStr("id_token"), RefreshToken: f.nullStr("refresh_token"), Scope: f.nullStr("scope"),
			TokenType: f.nullStr("token_type"), SessionState: f.nullStr("session_state"),
			PasswordHash: f.optStr("password"),
		}
		if v, ok := f.value("authorization_details", bson.TypeArray, bson.TypeNull); ok && v.Type == bson.TypeArray {
			vals, err := v.Array().Values()
			if err != nil {
				return acc, err
			}
			acc.AuthorizationDetails = []core.AuthorizationDetail{}
			for _, e := range vals {
				df := field{doc: e.Document()}
				acc.AuthorizationDetails = append(acc.AuthorizationDetails, core.AuthorizationDetail{
					Type: df.str("type"), Locations: df.strings("locations"), Actions: df.strings("actions"),
					Datatypes: df.strings("datatypes"), Identifier: df.str("identifier"), Privileges: df.strings("privileges"),
				})
				if df.err != nil {
					return acc, df.err
				}
			}
		}
		return acc, nil
	})
}

// WriteAccount inserts the account exactly as given (not normalized), with
// the driver alone, as another application sharing the collection (Auth.js's
// MongoDB adapter) would. User ids are stored as strings, as the suite's
// adapters (without WithObjectIDs) store them.
func (r rawView) WriteAccount(ctx context.Context, a core.Account) error {
	var details any
	if a.AuthorizationDetails != nil {
		arr := bson.A{}
		for _, d := range a.AuthorizationDetails {
			arr = append(arr, bson.D{{Key: "type", Value: d.Type}, {Key: "locations", Value: d.Locations},
				{Key: "actions", Value: d.Actions}, {Key: "datatypes", Value: d.Datatypes},
				{Key: "identifier", Value: d.Identifier}, {Key: "privileges", Value: d.Privileges}})
		}
		details = arr
	}
	_, err := r.db.Collection(r.names.Accounts).InsertOne(ctx, bson.D{
		{Key: "userId", Value: a.UserID}, {Key: "type", Value: string(a.Type)}, {Key: "provider", Value: a.Provider},
		{Key: "providerAccountId", Value: a.ProviderAccountID}, {Key: "access_token", Value: a.AccessToken},
		{Key: "authorization_details", Value: details}, {Key: "expires_at", Value: a.ExpiresAt},
		{Key: "expires_in", Value: a.ExpiresIn}, {Key: "id_token", Value: a.IDToken},
		{Key: "refresh_token", Value: a.RefreshToken}, {Key: "scope", Value: a.Scope},
		{Key: "token_type", Value: a.TokenType}, {Key: "session_state", Value: a.SessionState},
	})
	return err
}

var _ conformance.RawWriter = rawView{}

// Sessions reads the sessions with their metadata, whose fields are absent
// when unknown (never null, never a zero date or "").
func (r rawView) Sessions(ctx context.Context) ([]core.Session, error) {
	return records(ctx, r, r.names.Sessions, func(f *field) (core.Session, error) {
		return core.Session{
			SessionToken: f.str("sessionToken"), UserID: f.id("userId"), Expires: f.time("expires"),
			CreatedAt: absent(f, "createdAt", bson.TypeDateTime, dateTime), UpdatedAt: absent(f, "updatedAt", bson.TypeDateTime, dateTime),
			IPAddress: absent(f, "ipAddress", bson.TypeString, bson.RawValue.StringValue),
			UserAgent: absent(f, "userAgent", bson.TypeString, bson.RawValue.StringValue),
		}, nil
	})
}

// absent reads a field that is absent when unknown, of BSON type t, with
// conv; the zero T when it is absent. A present field of another type or
// holding the zero value is an error (f.err).
func absent[T comparable](f *field, name string, t bson.Type, conv func(bson.RawValue) T) T {
	var zero T
	if _, err := f.doc.LookupErr(name); err != nil {
		return zero
	}
	x := one(f, name, t, conv)
	if x == zero && f.err == nil {
		f.err = fmt.Errorf("field %q of %s holds the zero value; want it absent", name, f.doc)
	}
	return x
}

func (r rawView) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	return records(ctx, r, r.names.VerificationTokens, func(f *field) (core.VerificationToken, error) {
		return core.VerificationToken{Identifier: f.str("identifier"), Token: f.str("token"), Expires: f.time("expires")}, nil
	})
}

func (r rawView) Authenticators(ctx context.Context) ([]core.Authenticator, error) {
	return records(ctx, r, r.names.Authenticators, func(f *field) (core.Authenticator, error) {
		return core.Authenticator{
			CredentialID: f.str("credentialID"), CredentialPublicKey: f.str("credentialPublicKey"),
			Counter: f.int64("counter"), CredentialBackedUp: f.bool("credentialBackedUp"),
			CredentialDeviceType: f.str("credentialDeviceType"), ProviderAccountID: f.str("providerAccountId"),
			UserID: f.id("userId"), Transports: f.nullStr("transports"),
		}, nil
	})
}

// Factors reads the second factors (conformance.FactorRaw): _id a string
// (the factor id), secret binary data of the generic subtype (empty for
// none), step an int64, lastUsedAt absent when never used.
func (r rawView) Factors(ctx context.Context) ([]core.Factor, error) {
	return records(ctx, r, r.names.Factors, func(f *field) (core.Factor, error) {
		fa := core.Factor{
			ID: f.str("_id"), UserID: f.id("userId"), Type: core.FactorType(f.str("type")), Name: f.str("name"),
			Step: f.int64("step"), CreatedAt: f.time("createdAt"),
			LastUsedAt: absent(f, "lastUsedAt", bson.TypeDateTime, dateTime),
		}
		if v, ok := f.value("secret", bson.TypeBinary); ok {
			sub, data := v.Binary()
			if sub != bson.TypeBinaryGeneric {
				return fa, fmt.Errorf("secret of %s has binary subtype %#x, want 0", f.doc, sub)
			}
			if len(data) > 0 {
				fa.Secret = append([]byte(nil), data...)
			}
		}
		return fa, nil
	})
}
