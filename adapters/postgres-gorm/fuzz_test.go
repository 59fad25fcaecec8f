package gormadapter

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/conformance/fuzzrecord"
	"github.com/authport/authport/core"
)

// Fuzz targets of the row scanning: the conversion of stored column values
// to records (times in every driver's form, nullable columns,
// authorization details as JSON), and round trips through the adapter into
// SQLite (always) and PostgreSQL and MySQL (when reachable).

// FuzzScanTime feeds the time scanner every form a driver hands it: text
// of any shape (never a panic; what it accepts comes back in UTC to the
// millisecond), the bind parameter timeArg makes for each dialect, and
// time.Time values in any zone.
func FuzzScanTime(f *testing.F) {
	f.Add("2024-05-06 07:08:09.123", int64(1715000000123), int64(0))
	f.Add("2024-05-06T07:08:09.123456789+02:00", int64(-1), int64(999_999_999))
	f.Add("2024-05-06", int64(0), int64(1))
	f.Add("0000-01-01 00:00:00", int64(-62_167_219_200_000), int64(0))
	f.Add("9999-12-31 23:59:59.999", int64(253_402_300_799_999), int64(0))
	f.Add("10000-01-01 00:00:00.000", int64(253_402_300_800_000), int64(0))
	f.Add("", int64(-62_167_219_200_001), int64(0))
	f.Add("0001-01-01 00:00:00", int64(-62_135_596_800_000), int64(0))
	f.Fuzz(func(t *testing.T, s string, ms, nsec int64) {
		for _, src := range []any{s, []byte(s)} {
			var n nullTime
			if err := n.Scan(src); err == nil {
				if !n.valid || n.t.Location() != time.UTC || !n.t.Equal(core.NormalizeTime(n.t)) {
					t.Fatalf("Scan(%q) = %v (valid %v), not a UTC time to the millisecond", s, n.t, n.valid)
				}
			} else if n.valid {
				t.Fatalf("Scan(%q) failed (%v) but left a valid time", s, err)
			}
		}

		// A time as the adapter stores it comes back unchanged from the
		// bind parameter it writes, where that parameter is text (SQLite)
		// and where it is a time.Time (PostgreSQL, MySQL).
		want := core.NormalizeTime(time.UnixMilli(ms))
		for _, name := range []string{"sqlite", "postgres", "mysql"} {
			d := &dialect{name: name}
			arg := d.timeArg(want)
			var n nullTime
			err := n.Scan(arg)
			if err != nil || !n.valid || !n.t.Equal(want) || n.t.Location() != time.UTC {
				if checkTime("createSession", "expires", &want) != nil {
					continue // refused before it reaches the database
				}
				t.Fatalf("%s: time %v stored as %#v scans back as %v, %v", name, want, arg, n.t, err)
			}
		}
		zoned := time.Unix(ms/1000, nsec%1_000_000_000).In(time.FixedZone("", int(nsec%86400)))
		var n nullTime
		if err := n.Scan(zoned); err != nil || !n.t.Equal(core.NormalizeTime(zoned)) || n.t.Location() != time.UTC {
			t.Fatalf("Scan(%v) = %v, %v", zoned, n.t, err)
		}
	})
}

// FuzzRowRoundTrip builds accounts, users, sessions, tokens and
// authenticators from fuzzed fields, puts them in the row structs the
// adapter scans into (as the database returns what the adapter wrote),
// and checks that the records come back exactly, nulls kept apart. Stored
// authorization_details that are not a JSON list of objects are an error,
// never a panic.
func FuzzRowRoundTrip(f *testing.F) {
	for _, b := range fuzzrecord.Seeds() {
		f.Add(b, "")
	}
	f.Add([]byte{}, `[{"type":"t","locations":[],"actions":["a"]},{}]`)
	f.Add([]byte{}, `{"type":"t"}`)
	f.Add([]byte{}, `[null, 1]`)
	f.Fuzz(func(t *testing.T, b []byte, storedDetails string) {
		src := fuzzrecord.New(b)
		u := src.User().Normalize()
		row := userRow{id: u.ID}
		// As stored: "" is NULL (nullIfEmpty).
		row.email.String, row.email.Valid = u.Email, nullIfEmpty(u.Email) != nil
		row.username.String, row.username.Valid = u.Username, nullIfEmpty(u.Username) != nil
		row.name.String, row.name.Valid = deref(u.Name), u.Name != nil
		row.image.String, row.image.Valid = deref(u.Image), u.Image != nil
		if err := row.verified.Scan(timeOrNil(u.EmailVerified)); err != nil {
			t.Fatal(err)
		}
		if got := row.user(); !reflect.DeepEqual(*got, u) {
			t.Fatalf("user row round trip\n got %#v\nwant %#v", *got, u)
		}

		a := src.Account().Normalize()
		if detailsUTF8(a.AuthorizationDetails) {
			details, err := encodeDetails(a.AuthorizationDetails)
			if err != nil {
				t.Fatal(err)
			}
			ar := accountRow{userID: a.UserID, typ: sql.NullString{String: string(a.Type), Valid: true}, provider: a.Provider, providerAccountID: a.ProviderAccountID}
			if details != nil {
				ar.details.String, ar.details.Valid = details.(string), true
			}
			for _, c := range []struct {
				p   *string
				dst *string
				ok  *bool
			}{
				{a.AccessToken, &ar.accessToken.String, &ar.accessToken.Valid},
				{a.IDToken, &ar.idToken.String, &ar.idToken.Valid},
				{a.RefreshToken, &ar.refreshToken.String, &ar.refreshToken.Valid},
				{a.Scope, &ar.scope.String, &ar.scope.Valid},
				{a.TokenType, &ar.tokenType.String, &ar.tokenType.Valid},
				{a.SessionState, &ar.sessionState.String, &ar.sessionState.Valid},
				{a.PasswordHash, &ar.password.String, &ar.password.Valid},
			} {
				*c.dst, *c.ok = deref(c.p), c.p != nil
			}
			if a.ExpiresAt != nil {
				ar.expiresAt.Int64, ar.expiresAt.Valid = *a.ExpiresAt, true
			}
			if a.ExpiresIn != nil {
				ar.expiresIn.Int64, ar.expiresIn.Valid = *a.ExpiresIn, true
			}
			got, err := ar.account()
			// The JSON form omits empty lists inside a details object
			// (the omitempty tags of core.AuthorizationDetail, which is
			// the form Auth.js writes too), so they come back nil.
			want := a.Clone()
			want.AuthorizationDetails = fuzzrecord.WithoutEmptyLists(want.AuthorizationDetails)
			if err != nil || !reflect.DeepEqual(*got, want) {
				t.Fatalf("account row round trip: %v\n got %#v\nwant %#v", err, got, want)
			}
		}

		// expiry is the expiryRow of the two keys and a time as scanned.
		expiry := func(first, second string, expires time.Time) *expiryRow {
			r := &expiryRow{first: first, second: second}
			if err := r.expires.Scan(expires); err != nil {
				t.Fatal(err)
			}
			return r
		}
		s := src.Session().Normalize()
		if got := expiry(s.SessionToken, s.UserID, s.Expires).session(); !reflect.DeepEqual(*got, s) {
			t.Fatalf("session row round trip\n got %#v\nwant %#v", *got, s)
		}
		v := src.VerificationToken().Normalize()
		if got := expiry(v.Identifier, v.Token, v.Expires).verificationToken(); !reflect.DeepEqual(*got, v) {
			t.Fatalf("token row round trip\n got %#v\nwant %#v", *got, v)
		}
		au := src.Authenticator().Clone()
		aur := authenticatorRow{credentialID: au.CredentialID, publicKey: au.CredentialPublicKey, counter: au.Counter,
			backedUp: au.CredentialBackedUp, deviceType: au.CredentialDeviceType, accountID: au.ProviderAccountID, userID: au.UserID}
		aur.transports.String, aur.transports.Valid = deref(au.Transports), au.Transports != nil
		if got := aur.authenticator(); !reflect.DeepEqual(got, au) {
			t.Fatalf("authenticator row round trip\n got %#v\nwant %#v", got, au)
		}

		// Whatever is stored as authorization_details is an error or a
		// list, which the adapter would write back in a form that reads
		// back the same.
		ar := accountRow{}
		ar.details.String, ar.details.Valid = storedDetails, true
		if got, err := ar.account(); err == nil {
			if got.AuthorizationDetails == nil {
				// JSON null in the column means no details, as SQL NULL
				// does; anything else that parses is a list.
				if strings.TrimSpace(storedDetails) != "null" {
					t.Fatalf("stored details %q read back as null", storedDetails)
				}
			} else if detailsUTF8(got.AuthorizationDetails) {
				enc, err := encodeDetails(got.AuthorizationDetails)
				if err != nil {
					t.Fatal(err)
				}
				ar.details.String = enc.(string)
				again, err := ar.account()
				if err != nil || !reflect.DeepEqual(again.AuthorizationDetails, fuzzrecord.WithoutEmptyLists(got.AuthorizationDetails)) {
					t.Fatalf("stored details %q read as %#v, written back as %s, read again as %#v, %v",
						storedDetails, got.AuthorizationDetails, enc, again, err)
				}
			}
		}
	})
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// fuzzAdapter runs fuzzrecord.RoundTrip against the adapter on a fresh
// database of the backend (skipping, through provision, when a server
// backend is not reachable), and checks that deleting the user left no row.
func fuzzAdapter(f *testing.F, backend string) {
	for _, b := range fuzzrecord.Seeds() {
		f.Add(b)
	}
	a, db := newAdapter(f, backend, false)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzrecord.RoundTrip(ctx, t, core.NewStore(a), b)
		for _, table := range []string{a.names.Users, a.names.Accounts, a.names.Sessions, a.names.VerificationTokens, a.names.Authenticators, a.names.Factors} {
			var n int64
			if err := db.gdb.WithContext(ctx).Table(table).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("%d rows left in %s", n, table)
			}
		}
	})
}

// FuzzSQLiteRoundTrip: fuzzrecord.RoundTrip through the adapter into an
// SQLite file.
func FuzzSQLiteRoundTrip(f *testing.F) { fuzzAdapter(f, "sqlite") }

// FuzzPostgresRoundTrip: fuzzrecord.RoundTrip into PostgreSQL
// (AUTHPORT_POSTGRES_URL; skipped without, unless AUTHPORT_REQUIRE).
func FuzzPostgresRoundTrip(f *testing.F) { fuzzAdapter(f, "postgres") }

// FuzzMySQLRoundTrip: fuzzrecord.RoundTrip into MariaDB or MySQL
// (AUTHPORT_MYSQL_URL; skipped without, unless AUTHPORT_REQUIRE).
func FuzzMySQLRoundTrip(f *testing.F) { fuzzAdapter(f, "mysql") }

// detailsUTF8 reports whether every string in ds is valid UTF-8 (what
// core.Store requires before an account reaches the adapter).
func detailsUTF8(ds []core.AuthorizationDetail) bool {
	for _, d := range ds {
		for _, l := range [][]string{{d.Type, d.Identifier}, d.Locations, d.Actions, d.Datatypes, d.Privileges} {
			for _, s := range l {
				if !utf8.ValidString(s) {
					return false
				}
			}
		}
	}
	return true
}
