package mongoadapter

import (
	"reflect"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// The $lookup paths run only on servers that have $lookup (not on the
// FerretDB stand-in); these tests decode documents of the shape a $lookup
// stage returns, so that the decoding is checked everywhere.

func TestDecodeSessionLookup(t *testing.T) {
	exp := time.Date(2031, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	user := bson.D{{Key: "_id", Value: "u1"}, {Key: "email", Value: "u1@example.com"},
		{Key: "emailVerified", Value: nil}, {Key: "name", Value: "Ada"}, {Key: "image", Value: nil}}
	for _, c := range []struct {
		name  string
		users bson.A
		want  *core.SessionAndUser
	}{
		{"joined", bson.A{user}, &core.SessionAndUser{
			Session: core.Session{SessionToken: "st", UserID: "u1", Expires: exp},
			User:    core.User{ID: "u1", Email: "u1@example.com", Name: new("Ada")},
		}},
		{"user gone", bson.A{}, nil},
	} {
		doc := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "sessionToken", Value: "st"}, {Key: "userId", Value: "u1"},
			{Key: "expires", Value: bson.NewDateTimeFromTime(exp)}, {Key: "user", Value: c.users}}
		var d sessionUserDoc
		unmarshal(t, doc, &d)
		got, err := d.sessionAndUser((*userDoc).user)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestDecodeAccountLookup(t *testing.T) {
	oid := bson.NewObjectID()
	var d accountUserDoc
	unmarshal(t, bson.D{{Key: "user", Value: bson.A{bson.D{{Key: "_id", Value: oid}, {Key: "email", Value: "e"}}}}}, &d)
	if len(d.User) != 1 {
		t.Fatalf("decoded %d users, want 1", len(d.User))
	}
	u, err := d.User[0].user()
	if err != nil {
		t.Fatal(err)
	}
	if want := (core.User{ID: oid.Hex(), Email: "e"}); !reflect.DeepEqual(*u, want) {
		t.Errorf("got %+v, want %+v", *u, want)
	}
}

func TestDateRange(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-300_000_000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if _, ok := date(tm); ok {
			t.Errorf("date(%v) accepted a time outside BSON's range", tm)
		}
	}
	tm := time.Date(-5, 6, 7, 8, 9, 10, 11_000_000, time.UTC)
	d, ok := date(tm)
	if !ok || !fromDate(d).Equal(tm) {
		t.Errorf("date(%v) round trip = %v, %v", tm, fromDate(d), ok)
	}
}
