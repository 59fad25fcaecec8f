package bboltadapter

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/authport/authport/conformance/fuzzrecord"
	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// Fuzz targets of the record encoding and key layout. FuzzDecode (in
// encoding_test.go) feeds the decoders arbitrary bytes; these build records
// and keys from fuzzed fields and check that they come back exactly.

// FuzzRecordRoundTrip builds every kind of record from fuzzed fields,
// normalised as the adapter stores it, and checks decode(encode(x)) == x,
// with null and empty kept apart. A time the millisecond encoding cannot
// hold must be one the adapter refuses before encoding (timeOK false).
func FuzzRecordRoundTrip(f *testing.F) {
	for _, b := range fuzzrecord.Seeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		src := fuzzrecord.New(b)

		u := src.User()
		if u.Username == "" { // a username from the input, unless the source gave one
			u.Username = src.Str()
		}
		u = u.Normalize()
		if u.EmailVerified == nil || timeOK(*u.EmailVerified) {
			checkRoundTrip(t, "user", u, encodeUser, decodeUser)
		} else if err := checkTime(core.MethodCreateUser, "emailVerified", u.EmailVerified); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("emailVerified %v does not survive the encoding, but checkTime accepts it (err %v)", *u.EmailVerified, err)
		}

		a := src.Account().Normalize()
		enc := checkRoundTrip(t, "account", a, encodeAccount, decodeAccount)
		if id, err := userIDOfAccount(enc); err != nil || id != a.UserID {
			t.Errorf("userIDOfAccount = %q, %v; want %q", id, err, a.UserID)
		}

		s := src.Session()
		if !hasMetadata(&s) { // metadata from the input, unless the source gave some
			if t := src.OptTime(); t != nil {
				s.CreatedAt = *t
			}
			if t := src.OptTime(); t != nil {
				s.UpdatedAt = *t
			}
			s.IPAddress, s.UserAgent = src.Str(), src.Str()
		}
		if s = s.Normalize(); checkSessionTimes(core.MethodCreateSession, &s) == nil {
			checkRoundTrip(t, "session", s, encodeSession, decodeSession)
		}
		v := src.VerificationToken().Normalize()
		if timeOK(v.Expires) {
			checkRoundTrip(t, "verification token", v, encodeVerificationToken, decodeVerificationToken)
		}
		au := src.Authenticator().Clone()
		checkRoundTrip(t, "authenticator", au, encodeAuthenticator, decodeAuthenticator)

		fa := core.Factor{ID: src.Str(), UserID: src.Str(), Type: core.FactorType(src.Str()), Name: src.Str(),
			Secret: []byte(src.Str()), Step: src.Int64(), CreatedAt: src.Time()}
		if src.Bool() {
			fa.LastUsedAt = src.Time()
		}
		if fa = fa.Normalize(); checkFactorTimes(core.MethodCreateFactor, &fa) == nil {
			checkRoundTrip(t, "factor", fa, encodeFactor, decodeFactor)
		}
	})
}

// checkRoundTrip encodes x, decodes it and compares with reflect.DeepEqual
// (which tells nil from empty); it returns the encoding.
func checkRoundTrip[T any](t *testing.T, kind string, x T, enc func(*T) []byte, dec func([]byte) (*T, error)) []byte {
	t.Helper()
	b := enc(&x)
	got, err := dec(b)
	if err != nil {
		t.Fatalf("%s: decoding its own encoding: %v\nrecord %#v\nbytes % x", kind, err, x, b)
	}
	if !reflect.DeepEqual(*got, x) {
		t.Fatalf("%s: round trip\n got %#v\nwant %#v", kind, *got, x)
	}
	if again := enc(got); !bytes.Equal(again, b) {
		t.Fatalf("%s: re-encoding differs\n got % x\nwant % x", kind, again, b)
	}
	return b
}

// FuzzKeys checks the composite index keys: pairKey is injective and split
// back by splitPairKey, every key of a user starts with its ownerPrefix and
// no other user's prefix of another length, and expiry keys sort in time
// order (before 1970 too) and split back.
func FuzzKeys(f *testing.F) {
	f.Add("a", "b", "ab", "", int64(0), int64(1))
	f.Add("", "x", "\x01", "", int64(-1), int64(0))
	f.Add("\x00", "\xff", "\x00\xff", "\x01", int64(math.MinInt64), int64(math.MaxInt64))
	f.Add("user", "tok", "user", "tok2", int64(1_700_000_000_000), int64(1_700_000_000_000))
	f.Fuzz(func(t *testing.T, a, b, c, d string, ms1, ms2 int64) {
		k1, k2 := pairKey(a, b), pairKey(c, d)
		if (a == c && b == d) != bytes.Equal(k1, k2) {
			t.Fatalf("pairKey(%q, %q) = % x and pairKey(%q, %q) = % x", a, b, k1, c, d, k2)
		}
		ga, gb, err := splitPairKey(k1)
		if err != nil || string(ga) != a || string(gb) != b {
			t.Fatalf("splitPairKey(pairKey(%q, %q)) = %q, %q, %v", a, b, ga, gb, err)
		}
		if !bytes.HasPrefix(k1, ownerPrefix(a)) {
			t.Fatalf("pairKey(%q, %q) lacks ownerPrefix(%q)", a, b, a)
		}
		if a != c && bytes.HasPrefix(k1, ownerPrefix(c)) {
			t.Fatalf("pairKey(%q, %q) starts with ownerPrefix(%q): one user's index range holds another's", a, b, c)
		}

		e1, e2 := expiryKey(ms1, k1), expiryKey(ms2, k2)
		gms, gk, err := splitExpiryKey(e1)
		if err != nil || gms != ms1 || !bytes.Equal(gk, k1) {
			t.Fatalf("splitExpiryKey(expiryKey(%d, % x)) = %d, % x, %v", ms1, k1, gms, gk, err)
		}
		if ms1 < ms2 && bytes.Compare(e1, e2) >= 0 {
			t.Fatalf("expiry %d sorts after %d", ms1, ms2)
		}
		// A purge up to ms2 takes every entry expiring at or before ms2
		// and none after it.
		upTo := expiryUpTo(ms2)
		if (ms1 <= ms2) != (bytes.Compare(e1, upTo) < 0) {
			t.Fatalf("expiry %d against expiryUpTo(%d): compare %d", ms1, ms2, bytes.Compare(e1, upTo))
		}
	})
}

// FuzzAdapterRoundTrip writes records built from fuzzed fields through the
// adapter into a real bbolt file and reads them back (see
// fuzzrecord.RoundTrip for the properties), then checks that deleting the
// user left no entry in any bucket. The file is shared by the inputs of
// one worker.
func FuzzAdapterRoundTrip(f *testing.F) {
	for _, b := range fuzzrecord.Seeds() {
		f.Add(b)
	}
	a, err := Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"), WithWriteMode(WriteUpdate), WithBoltOptions(&bolt.Options{NoSync: true}))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = a.Close() })
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzrecord.RoundTrip(context.Background(), t, a, b)
		if n := a.countForTest(t); n != 0 {
			t.Fatalf("%d entries left after deleteUser", n)
		}
	})
}

// countForTest counts the entries of every bucket of the adapter.
func (a *Adapter) countForTest(t *testing.T) int {
	t.Helper()
	n := 0
	err := a.db.View(func(tx *bolt.Tx) error {
		r := tx.Bucket(a.root)
		for _, name := range allBuckets {
			n += r.Bucket(name).Stats().KeyN
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
