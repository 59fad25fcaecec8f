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

func (f *field) str(name string) string {
	v, ok := f.value(name, bson.TypeString)
	if !ok {
		return ""
	}
	return v.StringValue()
}

func (f *field) nullStr(name string) *string {
	v, ok := f.value(name, bson.TypeString, bson.TypeNull)
	if !ok || v.Type == bson.TypeNull {
		return nil
	}
	s := v.StringValue()
	return &s
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

func (f *field) time(name string) time.Time {
	v, ok := f.value(name, bson.TypeDateTime)
	if !ok {
		return time.Time{}
	}
	return time.UnixMilli(v.DateTime()).UTC()
}

func (f *field) nullTime(name string) *time.Time {
	v, ok := f.value(name, bson.TypeDateTime, bson.TypeNull)
	if !ok || v.Type == bson.TypeNull {
		return nil
	}
	t := time.UnixMilli(v.DateTime()).UTC()
	return &t
}

func (f *field) int64(name string) int64 {
	v, ok := f.value(name, bson.TypeInt64)
	if !ok {
		return 0
	}
	return v.Int64()
}

func (f *field) nullInt64(name string) *int64 {
	v, ok := f.value(name, bson.TypeInt64, bson.TypeNull)
	if !ok || v.Type == bson.TypeNull {
		return nil
	}
	n := v.Int64()
	return &n
}

func (f *field) bool(name string) bool {
	v, ok := f.value(name, bson.TypeBoolean)
	if !ok {
		return false
	}
	return v.Boolean()
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

func (r rawView) Users(ctx context.Context) ([]core.User, error) {
	docs, err := r.all(ctx, r.names.Users)
	if err != nil {
		return nil, err
	}
	out := []core.User{}
	for _, d := range docs {
		f := field{doc: d}
		u := core.User{
			ID: f.id("_id"), Email: f.str("email"), EmailVerified: f.nullTime("emailVerified"),
			Name: f.nullStr("name"), Image: f.nullStr("image"),
		}
		if f.err != nil {
			return nil, f.err
		}
		if u.Data, err = otherFields(d); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
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
		case "_id", "email", "emailVerified", "name", "image":
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
	docs, err := r.all(ctx, r.names.Accounts)
	if err != nil {
		return nil, err
	}
	out := []core.Account{}
	for _, d := range docs {
		f := field{doc: d}
		acc := core.Account{
			UserID: f.id("userId"), Provider: f.str("provider"), Type: core.AccountType(f.str("type")),
			ProviderAccountID: f.str("providerAccountId"), AccessToken: f.nullStr("access_token"),
			ExpiresAt: f.nullInt64("expires_at"), ExpiresIn: f.nullInt64("expires_in"),
			IDToken: f.nullStr("id_token"), RefreshToken: f.nullStr("refresh_token"), Scope: f.nullStr("scope"),
			TokenType: f.nullStr("token_type"), SessionState: f.nullStr("session_state"),
		}
		if v, ok := f.value("authorization_details", bson.TypeArray, bson.TypeNull); ok && v.Type == bson.TypeArray {
			vals, err := v.Array().Values()
			if err != nil {
				return nil, err
			}
			acc.AuthorizationDetails = []core.AuthorizationDetail{}
			for _, e := range vals {
				df := field{doc: e.Document()}
				acc.AuthorizationDetails = append(acc.AuthorizationDetails, core.AuthorizationDetail{
					Type: df.str("type"), Locations: df.strings("locations"), Actions: df.strings("actions"),
					Datatypes: df.strings("datatypes"), Identifier: df.str("identifier"), Privileges: df.strings("privileges"),
				})
				if df.err != nil {
					return nil, df.err
				}
			}
		}
		if f.err != nil {
			return nil, f.err
		}
		out = append(out, acc)
	}
	return out, nil
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

func (r rawView) Sessions(ctx context.Context) ([]core.Session, error) {
	docs, err := r.all(ctx, r.names.Sessions)
	if err != nil {
		return nil, err
	}
	out := []core.Session{}
	for _, d := range docs {
		f := field{doc: d}
		out = append(out, core.Session{SessionToken: f.str("sessionToken"), UserID: f.id("userId"), Expires: f.time("expires")})
		if f.err != nil {
			return nil, f.err
		}
	}
	return out, nil
}

func (r rawView) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	docs, err := r.all(ctx, r.names.VerificationTokens)
	if err != nil {
		return nil, err
	}
	out := []core.VerificationToken{}
	for _, d := range docs {
		f := field{doc: d}
		out = append(out, core.VerificationToken{Identifier: f.str("identifier"), Token: f.str("token"), Expires: f.time("expires")})
		if f.err != nil {
			return nil, f.err
		}
	}
	return out, nil
}

func (r rawView) Authenticators(ctx context.Context) ([]core.Authenticator, error) {
	docs, err := r.all(ctx, r.names.Authenticators)
	if err != nil {
		return nil, err
	}
	out := []core.Authenticator{}
	for _, d := range docs {
		f := field{doc: d}
		out = append(out, core.Authenticator{
			CredentialID: f.str("credentialID"), CredentialPublicKey: f.str("credentialPublicKey"),
			Counter: f.int64("counter"), CredentialBackedUp: f.bool("credentialBackedUp"),
			CredentialDeviceType: f.str("credentialDeviceType"), ProviderAccountID: f.str("providerAccountId"),
			UserID: f.id("userId"), Transports: f.nullStr("transports"),
		})
		if f.err != nil {
			return nil, f.err
		}
	}
	return out, nil
}
