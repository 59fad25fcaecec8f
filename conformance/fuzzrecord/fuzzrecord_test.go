package fuzzrecord

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// TestSeedsReachTheirShapes pins what the seeds are for, so that a change
// to the Source's reading order cannot quietly make them ordinary.
func TestSeedsReachTheirShapes(t *testing.T) {
	seeds := Seeds()
	if u := New(seeds[0]).User(); u.ID != "" || u.EmailVerified != nil || u.Name != nil {
		t.Errorf("empty input: user %#v, want the zero user", u)
	}
	if u := New(seeds[1]).User(); u.EmailVerified == nil || u.EmailVerified.Year() > -292_000_000 || u.Name == nil || *u.Name != "" {
		t.Errorf("seed 1: user %#v, want emailVerified near the least int64 milliseconds and an empty name", u)
	}
	if u := New(seeds[3]).User(); u.EmailVerified == nil || time.UnixMilli(u.EmailVerified.UnixMilli()).Equal(*u.EmailVerified) {
		t.Errorf("seed 3: user %#v, want emailVerified beyond int64 milliseconds", u)
	}
	src := New(seeds[4])
	u, a, s, au, v := src.User(), src.Account(), src.Session(), src.Authenticator(), src.VerificationToken()
	if u.ID != "user1" || u.Email != "ada@example.com" || u.Name == nil || *u.Name != "Ada" {
		t.Errorf("seed 4: user %#v", u)
	}
	if a.Provider != "github" || !a.Type.Valid() || len(a.AuthorizationDetails) != 2 || a.TokenType == nil || *a.TokenType != "Bearer" ||
		a.AuthorizationDetails[0].Locations == nil || len(a.AuthorizationDetails[0].Locations) != 0 || len(a.AuthorizationDetails[0].Actions) != 1 {
		t.Errorf("seed 4: account %#v", a)
	}
	if s.SessionToken != "tok" || s.UserID != "user1" || s.Expires.Before(time.Now()) {
		t.Errorf("seed 4: session %#v, want a live one", s)
	}
	if au.CredentialID != "cred" || au.Counter != 5 || !au.CredentialBackedUp || au.Transports == nil || *au.Transports != "usb" {
		t.Errorf("seed 4: authenticator %#v", au)
	}
	if v.Identifier != "ada@example.com" || v.Token != "hash" || v.Expires.Before(time.Now()) || src.Len() != 0 {
		t.Errorf("seed 4: token %#v, %d bytes left", v, src.Len())
	}

	// The seeds after it add what the optional extensions keep, read after
	// the records as RoundTrip reads them, which stay seed 4's.
	for i := 5; i < len(seeds); i++ {
		if in := read(New(seeds[i])); !reflect.DeepEqual(in.user, u) || in.token != v || !reflect.DeepEqual(in.account, a) || !reflect.DeepEqual(in.authenticator, au) || in.session.WithoutMetadata() != s {
			t.Errorf("seed %d: records %#v, want seed 4's", i, in)
		}
	}
	src = New(seeds[5])
	in := read(src)
	if n, err := core.NormalizeUsername(in.username); err != nil || n != "ada.lovelace" || in.passwordHash == nil ||
		!strings.HasPrefix(*in.passwordHash, "$argon2id$") || !strings.HasPrefix(in.newHash, "$argon2id$") || in.newHash == *in.passwordHash {
		t.Errorf("seed 5: username %q (%v), hash %v, new hash %q, want a normalised name and two PHC hashes", in.username, err, in.passwordHash, in.newHash)
	}
	if s := in.session; s.CreatedAt.IsZero() || !s.UpdatedAt.After(s.CreatedAt) || s.IPAddress == "" || s.UserAgent == "" {
		t.Errorf("seed 5: session metadata %#v", s)
	}
	f, next := in.factor, in.next
	if f.Validate() != nil || f.Type != core.FactorTOTP || string(f.Secret) != "sealed-key" || !f.LastUsedAt.IsZero() ||
		next.Step != f.Step+1 || next.LastUsedAt.Before(f.CreatedAt) || string(next.Secret) == string(f.Secret) || src.Len() != 0 {
		t.Errorf("seed 5: factor %#v swapped to %#v, %d bytes left; want a valid TOTP factor, never used, then its next step", f, next, src.Len())
	}

	src = New(seeds[6])
	in = read(src)
	if in.username != "" || in.passwordHash != nil || in.newHash != "" {
		t.Errorf("seed 6: username %q, hash %v, new hash %q, want none", in.username, in.passwordHash, in.newHash)
	}
	if s := in.session; s.CreatedAt.Location() == time.UTC || s.CreatedAt.Nanosecond()%1e6 == 0 || s.UpdatedAt.UnixMilli() != -1 || s.IPAddress != "" {
		t.Errorf("seed 6: session metadata %#v, want sub-millisecond non-UTC, pre-1970 and no address", s)
	}
	f, next = in.factor, in.next
	if f.Validate() != nil || f.Type != core.FactorRecoveryCodes || f.Secret == nil || len(f.Secret) != 0 || f.Step != math.MaxInt64 ||
		f.CreatedAt.Location() == time.UTC || next.Secret != nil || next.Step != 0 || next.LastUsedAt.UnixMilli() != 1 || src.Len() != 0 {
		t.Errorf("seed 6: factor %#v swapped to %#v, %d bytes left", f, next, src.Len())
	}

	src = New(seeds[7])
	in = read(src)
	if f := in.factor; f.Type.Valid() || f.Type != "TOTP" || !f.LastUsedAt.Before(time.Unix(0, 0)) || src.Len() != 0 {
		t.Errorf("seed 7: factor %#v, %d bytes left; want an invalid type", f, src.Len())
	}
	src = New(seeds[8])
	if in := read(src); in.username != "Ada" || in.factor.ID != "" {
		t.Errorf("seed 8: username %q, factor %#v; want a raw username and no factor", in.username, in.factor)
	}
	src = New(seeds[9])
	in = read(src)
	if n, err := core.NormalizeUsername(in.username); err != nil || n != in.username || len(n) != core.MaxUsername ||
		in.factor.Validate() != nil || in.factor.Type != core.FactorPasskey || !strings.ContainsRune(in.factor.Name, '🔑') ||
		string(in.factor.Secret) != "\x00\x80\xff\x00" || len(in.next.Secret) != 3 || in.session.UserAgent != "Mozilla/5.0 ü 漢字" || src.Len() != 0 {
		t.Errorf("seed 9: username %q (%v), session %#v, factor %#v swapped to %#v, %d bytes left", in.username, err, in.session, in.factor, in.next, src.Len())
	}
}

// TestSourceAfterTheEnd checks that a used-up Source gives zero values.
func TestSourceAfterTheEnd(t *testing.T) {
	s := New([]byte{5, 'a'})
	if got := s.Str(); got != "a" {
		t.Errorf("Str cut short = %q, want %q", got, "a")
	}
	if s.Len() != 0 || s.Byte() != 0 || s.Int64() != 0 || s.OptStr() != nil || s.Strs() != nil || s.OptTime() != nil {
		t.Error("a used-up Source does not give zero values")
	}
}

// TestUsername checks the three kinds of [Source.Username].
func TestUsername(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{[]byte{0, 3, 'a', 'b', 'c'}, ""},
		{[]byte{1, 3, 0, 26, 36}, "a0."},
		{[]byte{1, 2, 38, 38 + 39}, "--"},
		{[]byte{0xf1, 3, 'A', 0, 0xff}, "A\x00\xff"},
		{[]byte{1}, ""},
	} {
		if got := New(c.in).Username(); got != c.want {
			t.Errorf("Username(% x) = %q, want %q", c.in, got, c.want)
		}
	}
}
