package mongoadapter

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/conformance/fuzzrecord"
	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Fuzz targets of the conversion between records and BSON documents; they
// need no server (FuzzAdapterRoundTrip in fuzz_test.go does).

// FuzzDocumentRoundTrip builds users and accounts from fuzzed fields
// (usernames and password hashes included),
// converts them to the documents the adapter stores, marshals those to
// BSON, and decodes them the way the adapter reads them. A record the
// conversion accepts must come back exactly as normalised (null and empty
// kept apart, authorization details included); one it refuses must hold a
// time outside BSON dates, and be refused with core.ErrInvalidInput.
// Records with strings that are not valid UTF-8 are skipped: core.Store
// refuses them before the adapter. With ObjectIds on, the user id is a
// hex ObjectId. Every time that date accepts comes back from fromDate.
func FuzzDocumentRoundTrip(f *testing.F) {
	fuzzrecord.AddSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		src := fuzzrecord.New(b)
		a := &Adapter{objectIDs: src.Bool()}
		u := src.User().Normalize()
		if a.objectIDs {
			var oid bson.ObjectID
			for i := range oid {
				oid[i] = src.Byte()
			}
			u.ID = hex.EncodeToString(oid[:])
		}
		acc := src.Account().Normalize()
		// The fields of issue 39, drawn after the others so that the
		// corpus keeps its meaning for them: a username ("" is an absent
		// field, like an e-mail address "") and a password hash.
		u.Username, acc.PasswordHash = src.Str(), src.OptStr()
		// Strings that are not valid UTF-8 never reach the adapter: the
		// checked layer (core.Store) refuses them.
		if utf8.ValidString(u.ID) && utf8.ValidString(u.Email) && utf8.ValidString(u.Username) && validPtr(u.Name) && validPtr(u.Image) {
			doc, err := a.userDocument(u)
			_, usernameData := u.Data[fUsername]
			switch {
			case usernameData:
				if !errors.Is(err, core.ErrInvalidInput) {
					t.Fatalf("userDocument with the application field %s: %v, want an ErrInvalidInput", fUsername, err)
				}
			case err == nil && !dateOK(u.EmailVerified):
				t.Fatalf("userDocument accepts %#v, which BSON cannot hold", u)
			case err != nil && dateOK(u.EmailVerified):
				t.Fatalf("userDocument refuses %#v: %v", u, err)
			case err != nil && !errors.Is(err, core.ErrInvalidInput):
				t.Fatalf("userDocument(%#v): %v, want an ErrInvalidInput", u, err)
			case err == nil:
				var ud userDoc
				unmarshal(t, doc, &ud)
				got, err := ud.user()
				if err != nil || !reflect.DeepEqual(*got, u) {
					t.Fatalf("user round trip: %#v, %v\nwant %#v", got, err, u)
				}
			}
		}

		acc.UserID = u.ID
		uid, _ := a.userIDValue(u.ID)
		if accountUTF8(acc) && validPtr(acc.PasswordHash) {
			var ad accountDoc
			unmarshal(t, accountDocument(acc, uid), &ad)
			got, err := ad.account()
			if err != nil || !reflect.DeepEqual(*got, acc) {
				t.Fatalf("account round trip: %#v, %v\nwant %#v", got, err, acc)
			}
		}

		for _, exp := range []time.Time{src.Session().Normalize().Expires, src.VerificationToken().Normalize().Expires} {
			if d, ok := date(exp); ok && !fromDate(d).Equal(exp) {
				t.Fatalf("date accepts %v, which comes back as %v", exp, fromDate(d))
			}
		}

		// A second factor (issue 40), drawn last: its secret may hold any
		// byte, its creation and last use any time.
		fa := core.Factor{ID: src.Str(), UserID: u.ID, Type: core.FactorType(src.Str()), Name: src.Str(),
			Secret: []byte(src.Str()), Step: src.Int64(), CreatedAt: src.Time()}
		if lu := src.OptTime(); lu != nil {
			fa.LastUsedAt = *lu
		}
		fa = fa.Normalize()
		if utf8.ValidString(fa.ID) && utf8.ValidString(fa.UserID) && utf8.ValidString(string(fa.Type)) && utf8.ValidString(fa.Name) && fa.Step >= 0 {
			doc, err := factorDocument(core.MethodCreateFactor, fa, uid)
			storable := dateOK(&fa.CreatedAt) && (fa.LastUsedAt.IsZero() || dateOK(&fa.LastUsedAt))
			switch {
			case err == nil && !storable:
				t.Fatalf("factorDocument accepts %#v, which BSON cannot hold", fa)
			case err != nil && (storable || !errors.Is(err, core.ErrInvalidInput)):
				t.Fatalf("factorDocument(%#v): %v", fa, err)
			case err == nil:
				var fd factorDoc
				unmarshal(t, doc, &fd)
				got, err := fd.factor()
				if err != nil || !reflect.DeepEqual(*got, fa) {
					t.Fatalf("factor round trip: %#v, %v\nwant %#v", got, err, fa)
				}
			}
		}
	})
}

// dateOK reports whether t is within the years the adapter stores (a
// little short of what BSON dates, int64 milliseconds, hold) and survives
// them exactly.
func dateOK(t *time.Time) bool {
	if t == nil {
		return true
	}
	y := t.Year()
	return -maxDateYear <= y && y <= maxDateYear && time.UnixMilli(t.UnixMilli()).Equal(*t)
}

func validPtr(s *string) bool { return s == nil || utf8.ValidString(*s) }

func accountUTF8(a core.Account) bool {
	all := []string{a.UserID, a.Provider, string(a.Type), a.ProviderAccountID}
	for _, p := range []*string{a.AccessToken, a.IDToken, a.RefreshToken, a.Scope, a.TokenType, a.SessionState} {
		if p != nil {
			all = append(all, *p)
		}
	}
	for _, d := range a.AuthorizationDetails {
		all = append(all, d.Type, d.Identifier)
		for _, l := range [][]string{d.Locations, d.Actions, d.Datatypes, d.Privileges} {
			all = append(all, l...)
		}
	}
	for _, v := range all {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// unmarshal marshals doc to BSON, as the driver sends it, and decodes it
// into v, as the driver reads it.
func unmarshal(t *testing.T, doc bson.D, v any) {
	t.Helper()
	raw, err := bson.Marshal(doc)
	if err != nil {
		t.Fatalf("marshalling %v: %v", doc, err)
	}
	if err := bson.Unmarshal(raw, v); err != nil {
		t.Fatalf("unmarshalling %v: %v", doc, err)
	}
}

// FuzzDecodeDocuments feeds arbitrary bytes to the driver's decoder and the
// adapter's conversions of every stored document kind, as a corrupt or
// foreign document would reach them: each either fails or gives a record,
// and never panics. A user, account or factor that decodes converts back
// to a document that decodes to the same record.
func FuzzDecodeDocuments(f *testing.F) {
	a := &Adapter{}
	name := "Ada"
	ud, _ := a.userDocument(core.User{ID: "u", Email: "e", Name: &name, EmailVerified: ptr(time.UnixMilli(1700000000000).UTC())})
	ad := accountDocument(core.Account{UserID: "u", Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "x",
		AuthorizationDetails: []core.AuthorizationDetail{{Type: "t", Locations: []string{}, Actions: []string{"a"}}}}, "u")
	// Issue 39's fields: a user without an address, with a username, and
	// a password account; and the forms another application writes:
	// email and password null.
	udn, _ := a.userDocument(core.User{ID: "n", Username: "ada.l"})
	hash := "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"
	adp := accountDocument(core.Account{UserID: "n", Provider: core.PasswordProvider, Type: core.AccountTypeCredentials,
		ProviderAccountID: "n", PasswordHash: &hash}, "n")
	fd, _ := factorDocument(core.MethodCreateFactor, core.Factor{ID: "f", UserID: "u", Type: core.FactorTOTP, Secret: []byte{0, 1, 0},
		Step: 3, CreatedAt: time.UnixMilli(1700000000000).UTC(), LastUsedAt: time.UnixMilli(1700000001000).UTC()}, "u")
	// Better Auth's documents (BetterAuth), as authport writes them and as
	// Better Auth does (emailVerified a boolean, no type, a date expiry).
	ab := &Adapter{ba: true, f: betterAuthFields(), now: func() time.Time { return time.UnixMilli(1700000000000) }}
	bud, _ := ab.userDocument(core.User{ID: bson.NewObjectID().Hex(), Email: "e", EmailVerified: ptr(time.UnixMilli(1700000000000).UTC())})
	expAt := int64(1700000000)
	bad, _ := accountDocumentBA(core.Account{UserID: "u", Provider: "p", Type: core.AccountTypeOIDC, ProviderAccountID: "x",
		ExpiresAt: &expAt, TokenType: ptr("dpop"), AuthorizationDetails: []core.AuthorizationDetail{}}, bson.NewObjectID(), 1)
	bsd, _ := sessionDocumentNamed(core.Session{SessionToken: "s", UserID: "u", Expires: time.UnixMilli(1)}, "u", betterAuthFields(), bson.NewObjectID())
	for _, d := range []any{ud, ad, udn, adp, bud, bad, bsd,
		bson.D{{Key: fID, Value: bson.NewObjectID()}, {Key: fName, Value: ""}, {Key: fEmail, Value: "b"}, {Key: fEmailVerified, Value: true},
			{Key: fCreatedAt, Value: bson.DateTime(1)}, {Key: baEmailVerifiedAt, Value: "not a date"}},
		bson.D{{Key: baProviderID, Value: "credential"}, {Key: baAccountID, Value: "b"}, {Key: fUserID, Value: bson.NewObjectID()},
			{Key: baAccessTokenExpiresAt, Value: "soon"}, {Key: baExpiresIn, Value: 1.5}},
		bson.D{{Key: fIdentifier, Value: "i"}, {Key: baValue, Value: "v"}, {Key: baExpiresAt, Value: bson.DateTime(-1)}},
		bson.D{{Key: fID, Value: "js"}, {Key: fEmail, Value: nil}, {Key: fUsername, Value: int32(1)}},
		bson.D{{Key: fUserID, Value: "js"}, {Key: fProvider, Value: core.PasswordProvider}, {Key: fPassword, Value: nil}},
		bson.D{{Key: fSessionToken, Value: "s"}, {Key: fUserID, Value: bson.NewObjectID()}, {Key: fExpires, Value: bson.DateTime(1)},
			{Key: fJoinedUser, Value: bson.A{ud}}},
		bson.D{{Key: fCredentialID, Value: "c"}, {Key: fUserID, Value: int32(5)}, {Key: fCounter, Value: int32(-1)}, {Key: fTransports, Value: nil}},
		bson.D{{Key: fAuthorizationDetails, Value: bson.A{bson.D{{Key: "locations", Value: "not a list"}}}}},
		fd,
		bson.D{{Key: fID, Value: "f"}, {Key: fUserID, Value: "u"}, {Key: fSecret, Value: "not binary"}, {Key: fStep, Value: int32(-1)}},
		bson.D{{Key: fID, Value: bson.NewObjectID()}, {Key: fUserID, Value: bson.NewObjectID()}, {Key: fSecret, Value: nil},
			{Key: fLastUsedAt, Value: "never"}, {Key: fStep, Value: 1.5}},
	} {
		raw, err := bson.Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodesBack(t, b, (*userDoc).user, a.userDocument, canonData)
		decodesBack(t, b, (*accountDoc).account, func(acc core.Account) (bson.D, error) {
			return accountDocument(acc, acc.UserID), nil
		}, nil)
		decodesBack(t, b, ab.toUser, ab.userDocument, canonData)
		decodesBack(t, b, (*accountDoc).account, func(acc core.Account) (bson.D, error) {
			return accountDocumentBA(acc, acc.UserID, 1)
		}, nil)
		var su sessionUserDoc
		if bson.Unmarshal(b, &su) == nil {
			if got, err := su.sessionAndUser((*userDoc).user); err == nil && got != nil && got.User.ID == "" && len(su.User) > 0 && su.User[0].ID.Type == bson.TypeString && su.User[0].ID.StringValue() != "" {
				t.Fatalf("session's user lost its id: %#v", got)
			}
		}
		var td tokenDoc
		if bson.Unmarshal(b, &td) == nil {
			_, _ = td.token()
		}
		var au authenticatorDoc
		if bson.Unmarshal(b, &au) == nil {
			_, _ = au.authenticator()
		}
		decodesBack(t, b, (*factorDoc).factor, func(f core.Factor) (bson.D, error) {
			return factorDocument(core.MethodCreateFactor, f, f.UserID)
		}, nil)
	})
}

// decodesBack checks that a record the adapter reads from the document b
// (stored as a D, converted with conv) comes back the same when written
// again with doc and read back (after canon, when given, on both); b that
// does not decode, or a record the adapter refuses to write, is skipped.
func decodesBack[D, R any](t *testing.T, b []byte, conv func(*D) (*R, error), doc func(R) (bson.D, error), canon func(*R)) {
	t.Helper()
	var d D
	if bson.Unmarshal(b, &d) != nil {
		return
	}
	got, err := conv(&d)
	if err != nil {
		return
	}
	written, err := doc(*got)
	if err != nil {
		return
	}
	var again D
	unmarshal(t, written, &again)
	back, err := conv(&again)
	if err == nil && canon != nil {
		canon(got)
		canon(back)
	}
	if err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("decoded %T %#v comes back as %#v, %v", got, got, back, err)
	}
}

// canonData rewrites a user's application fields in one JSON spelling:
// the contract keeps a field's JSON value, not its bytes ("\ufffd" and the
// character itself are one string; a stored string that is not UTF-8 reads
// as the former, and written back as JSON, as the latter). Numbers keep
// their text.
func canonData(u *core.User) {
	for k, v := range u.Data {
		if !json.Valid(v) {
			continue // compared as it is
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if dec.Decode(&x) != nil {
			continue // compared as it is
		}
		if c, err := json.Marshal(x); err == nil {
			u.Data[k] = c
		}
	}
}

func ptr[T any](v T) *T { return &v }
