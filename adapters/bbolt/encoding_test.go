package bboltadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/authport/authport/core"
)

func sp(s string) *string { return &s }
func ip(v int64) *int64   { return &v }

func tp(t time.Time) *time.Time { t = core.NormalizeTime(t); return &t }

// roundTrip encodes x, decodes it back and compares with reflect.DeepEqual,
// which tells nil from empty for pointers and slices.
func roundTrip[T any](t *testing.T, name string, x T, enc func(*T) []byte, dec func([]byte) (*T, error)) []byte {
	t.Helper()
	b := enc(&x)
	want := byte(recordVersion1)
	if u, ok := any(&x).(*core.User); ok && u.Username != "" {
		want = userVersionUsername
	}
	if len(b) == 0 || b[0] != want {
		t.Fatalf("%s: encoding does not start with version byte %d: % x", name, want, b)
	}
	got, err := dec(b)
	if err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
	if !reflect.DeepEqual(*got, x) {
		t.Errorf("%s: round trip\n got %#v\nwant %#v", name, *got, x)
	}
	return b
}

func TestEncodingRoundTrip(t *testing.T) {
	pre1970 := time.Date(1969, 7, 20, 20, 17, 40, 123_000_000, time.UTC)
	users := map[string]core.User{
		"nulls":        {ID: "u1", Email: "a@example.com"},
		"empty":        {ID: "u2", Email: "b@example.com", Name: sp(""), Image: sp(""), EmailVerified: tp(time.Unix(0, 0))},
		"full":         {ID: "u3", Email: "c@example.com", Name: sp("Ada"), Image: sp("https://x/y.png"), EmailVerified: tp(time.Now())},
		"pre-1970":     {ID: "u4", Email: "d", EmailVerified: tp(pre1970)},
		"zero time":    {ID: "u5", Email: "e", EmailVerified: tp(time.Time{})},
		"binary bytes": {ID: "\x00\xff\x01", Email: "\x00", Name: sp("\x00\x01\x02é")},
		"no e-mail":    {ID: "u6"},
		"username":     {ID: "u7", Username: "ada", Name: sp("Ada"), EmailVerified: tp(pre1970)},
		"both":         {ID: "u8", Email: "f@example.com", Username: "ada.l", Data: map[string]json.RawMessage{"a": json.RawMessage(`1`)}},
	}
	for name, u := range users {
		roundTrip(t, "user "+name, u, encodeUser, decodeUser)
	}

	accounts := map[string]core.Account{
		"nulls": {UserID: "u", Provider: "p", Type: core.AccountTypeOIDC, ProviderAccountID: "x"},
		"empty details and strings": {UserID: "u", Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "x",
			AccessToken: sp(""), AuthorizationDetails: []core.AuthorizationDetail{}, IDToken: sp(""), RefreshToken: sp(""),
			Scope: sp(""), TokenType: sp(""), SessionState: sp(""), ExpiresAt: ip(0), ExpiresIn: ip(0)},
		"full": {UserID: "u", Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "42",
			AccessToken: sp("at"), ExpiresAt: ip(1931234567), ExpiresIn: ip(-3600), IDToken: sp("id"),
			RefreshToken: sp("rt"), Scope: sp("read"), TokenType: sp("bearer"), SessionState: sp("ss"),
			AuthorizationDetails: []core.AuthorizationDetail{
				{Type: "payment", Locations: []string{"https://a", ""}, Actions: []string{}, Identifier: "id", Privileges: nil},
				{Type: ""},
			}},
	}
	accounts["password"] = core.Account{UserID: "u", Provider: core.PasswordProvider, Type: core.AccountTypeCredentials, ProviderAccountID: "u",
		PasswordHash: sp("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA")}
	for name, a := range accounts {
		roundTrip(t, "account "+name, a, encodeAccount, decodeAccount)
	}

	roundTrip(t, "session", core.Session{SessionToken: "tok", UserID: "u", Expires: core.NormalizeTime(time.Now())}, encodeSession, decodeSession)
	roundTrip(t, "session pre-1970", core.Session{SessionToken: "tok", UserID: "u", Expires: pre1970}, encodeSession, decodeSession)
	roundTrip(t, "token", core.VerificationToken{Identifier: "a@b", Token: "h", Expires: core.NormalizeTime(time.Now())}, encodeVerificationToken, decodeVerificationToken)
	roundTrip(t, "authenticator nulls", core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", UserID: "u", ProviderAccountID: "p"}, encodeAuthenticator, decodeAuthenticator)
	roundTrip(t, "authenticator full", core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", Counter: 1 << 40, CredentialBackedUp: true,
		CredentialDeviceType: "multiDevice", ProviderAccountID: "p", UserID: "u", Transports: sp("")}, encodeAuthenticator, decodeAuthenticator)
}

// TestEncodingIsCompact pins the size of a typical session record, so that
// a change that bloats the format shows up.
func TestEncodingIsCompact(t *testing.T) {
	s := core.Session{SessionToken: "0123456789abcdef0123456789abcdef", UserID: "user-123", Expires: core.NormalizeTime(time.Now())}
	b := encodeSession(&s)
	// 1 version + 1+32 token + 1+8 user id + 6 varint ms (a 2020s date).
	if want := 1 + 33 + 9 + 6; len(b) != want {
		t.Errorf("session record is %d bytes, want %d: % x", len(b), want, b)
	}
}

func TestDecodeRejectsCorruptValues(t *testing.T) {
	u := core.User{ID: "u", Email: "e", Name: sp("n")}
	good := encodeUser(&u)
	cases := map[string][]byte{
		"empty":              {},
		"unknown version":    append([]byte{3}, good[1:]...),
		"v2, empty username": {2, 1, 'u', 1, 'e', 0, 0, 0, 0},
		"v2, no username":    {2, 1, 'u', 1, 'e'},
		"version 0":          append([]byte{0}, good[1:]...),
		"truncated":          good[:len(good)-1],
		"trailing bytes":     append(bytes.Clone(good), 0),
		"bad flag":           {1, 1, 'u', 1, 'e', 7},
		"huge string len":    {1, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"overlong uvarint":   {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"non-minimal len":    {1, 0x81, 0x00, 'u', 1, 'e', 0, 0, 0},
		"string past end":    {1, 5, 'a'},
		"only version byte":  {1},
	}
	for name, b := range cases {
		if _, err := decodeUser(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeUser(%s): err = %v, want ErrCorrupt", name, err)
		}
	}
	// An account whose authorization_details claims 2^40 entries.
	bad := []byte{1, 1, 'u', 1, 'p', 1, 'o', 1, 'x', 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}
	if _, err := decodeAccount(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("decodeAccount(huge list): err = %v, want ErrCorrupt", err)
	}
}

// FuzzDecode checks that no byte string makes a decoder panic, and that
// whatever decodes re-encodes to the same bytes (the encoding is canonical).
func FuzzDecode(f *testing.F) {
	f.Add(encodeUser(&core.User{ID: "u", Email: "e", Name: sp(""), EmailVerified: tp(time.Now())}))
	f.Add(encodeUser(&core.User{ID: "u", Username: "ada", Image: sp("i")}))
	f.Add(encodeAccount(&core.Account{UserID: "u", Provider: "p", Type: "oauth", ProviderAccountID: "x",
		AuthorizationDetails: []core.AuthorizationDetail{{Type: "t", Locations: []string{"l"}}}, ExpiresAt: ip(5)}))
	f.Add(encodeSession(&core.Session{SessionToken: "t", UserID: "u", Expires: time.UnixMilli(1)}))
	f.Add(encodeSession(&core.Session{SessionToken: "t", UserID: "u", Expires: time.UnixMilli(1), CreatedAt: time.UnixMilli(-1), IPAddress: "::1", UserAgent: "ua"}))
	f.Add(encodeAuthenticator(&core.Authenticator{CredentialID: "c", Transports: sp("usb")}))
	f.Add(encodeFactor(&core.Factor{ID: "f", UserID: "u", Type: core.FactorTOTP, Name: "n", Secret: []byte{0, 1}, Step: 3, CreatedAt: time.UnixMilli(1), LastUsedAt: time.UnixMilli(-2)}))
	f.Add([]byte{1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		if u, err := decodeUser(b); err == nil && !bytes.Equal(encodeUser(u), b) {
			t.Errorf("user re-encodes differently")
		}
		if a, err := decodeAccount(b); err == nil && !bytes.Equal(encodeAccount(a), b) {
			t.Errorf("account re-encodes differently")
		}
		if su, err := decodeSessionAndUser(core.Session{SessionToken: "t"}, b); err == nil && (!bytes.Equal(encodeUser(&su.User), b) || su.Session.UserID != su.User.ID) {
			t.Errorf("session and user: the user re-encodes differently, or the session's user id is not the user's")
		}
		if s, err := decodeSession(b); err == nil && !bytes.Equal(encodeSession(s), b) {
			t.Errorf("session re-encodes differently")
		}
		if v, err := decodeVerificationToken(b); err == nil && !bytes.Equal(encodeVerificationToken(v), b) {
			t.Errorf("token re-encodes differently")
		}
		if a, err := decodeAuthenticator(b); err == nil && !bytes.Equal(encodeAuthenticator(a), b) {
			t.Errorf("authenticator re-encodes differently")
		}
		if x, err := decodeFactor(b); err == nil && !bytes.Equal(encodeFactor(x), b) {
			t.Errorf("factor re-encodes differently")
		}
		_, _ = userIDOfAccount(b)
		_, _, _ = splitPairKey(b)
		_, _, _ = splitExpiryKey(b)
	})
}

// TestUserBoxes: a user record is decoded into one allocation whose size
// is one of the allocator's size classes, through every box size and on
// both sides of each boundary, by decodeUser and decodeSessionAndUser
// alike; a record longer than the largest box takes a second allocation.
func TestUserBoxes(t *testing.T) {
	sizes := map[string][2]uintptr{ // the box's size, the size class it must fill
		"userBox 1":           {unsafe.Sizeof(userBox[userBuffer1]{}), 208},
		"userBox 2":           {unsafe.Sizeof(userBox[userBuffer2]{}), 288},
		"userBox 3":           {unsafe.Sizeof(userBox[userBuffer3]{}), 512},
		"sessionAndUserBox 1": {unsafe.Sizeof(sessionAndUserBox[sessionBuffer1]{}), 352},
		"sessionAndUserBox 2": {unsafe.Sizeof(sessionAndUserBox[sessionBuffer2]{}), 416},
		"sessionAndUserBox 3": {unsafe.Sizeof(sessionAndUserBox[sessionBuffer3]{}), 640},
	}
	for name, s := range sizes {
		if s[0] != s[1] {
			t.Errorf("%s is %d bytes, want %d (a size class: change its buffer's length when core's records change)", name, s[0], s[1])
		}
	}
	limits := []int{len(userBuffer1{}), len(userBuffer2{}), len(userBuffer3{}), len(sessionBuffer1{}), len(sessionBuffer2{}), len(sessionBuffer3{})}
	for _, limit := range limits {
		for _, n := range []int{limit, limit + 1} {
			// A user whose record after the version byte is n bytes: the
			// name's length makes up the difference, and the image's where
			// the name's length byte becomes two.
			u := core.User{ID: "u1", Email: "ada@example.com", EmailVerified: tp(time.UnixMilli(1_700_000_000_000)), Name: sp(""), Image: sp("https://example.com/a.png")}
			for len(encodeUser(&u))-1 < n {
				*u.Name += "n"
			}
			if len(encodeUser(&u))-1 > n {
				*u.Name, *u.Image = (*u.Name)[1:], *u.Image+"g"
			}
			b := roundTrip(t, fmt.Sprintf("user of %d bytes", n), u, encodeUser, decodeUser)
			if len(b)-1 != n {
				t.Fatalf("record of %d bytes, want %d", len(b)-1, n)
			}
			want := 1.0
			if n > len(userBuffer3{}) {
				want = 2
			}
			if got := testing.AllocsPerRun(20, func() { _, _ = decodeUser(b) }); got != want {
				t.Errorf("decodeUser of a %d-byte record: %v allocations, want %v", n, got, want)
			}
			s := core.Session{SessionToken: "s1", Expires: time.UnixMilli(1_800_000_000_000)}
			su, err := decodeSessionAndUser(s, b)
			if err != nil || !reflect.DeepEqual(su.User, u) || su.Session.UserID != u.ID || su.Session.SessionToken != s.SessionToken || !su.Session.Expires.Equal(s.Expires) {
				t.Errorf("decodeSessionAndUser of a %d-byte record = %+v, %v", n, su, err)
			}
			want = 1
			if n > len(sessionBuffer3{}) {
				want = 2
			}
			if got := testing.AllocsPerRun(20, func() { _, _ = decodeSessionAndUser(s, b) }); got != want {
				t.Errorf("decodeSessionAndUser of a %d-byte record: %v allocations, want %v", n, got, want)
			}
		}
	}
}

// TestEncodingUserData: application fields follow the standard fields,
// sorted by name, so that a user without them keeps its bytes; a section
// that is empty, out of order or not JSON is corrupt.
func TestEncodingUserData(t *testing.T) {
	plain := core.User{ID: "u", Email: "e", Name: sp("n")}
	withData := plain
	withData.Data = map[string]json.RawMessage{"role": json.RawMessage(`"admin"`), "level": json.RawMessage(`3`)}
	b := roundTrip(t, "user with data", withData, encodeUser, decodeUser)
	base := encodeUser(&plain)
	want := append(bytes.Clone(base), 2, 5, 'l', 'e', 'v', 'e', 'l', 1, '3', 4, 'r', 'o', 'l', 'e', 7, '"', 'a', 'd', 'm', 'i', 'n', '"')
	if !bytes.Equal(b, want) {
		t.Errorf("encoding\n got % x\nwant % x", b, want)
	}
	for name, bad := range map[string][]byte{
		"empty section":   append(bytes.Clone(base), 0),
		"out of order":    append(bytes.Clone(base), 2, 1, 'b', 1, '1', 1, 'a', 1, '2'),
		"repeated name":   append(bytes.Clone(base), 2, 1, 'a', 1, '1', 1, 'a', 1, '2'),
		"not JSON":        append(bytes.Clone(base), 1, 1, 'a', 1, '{'),
		"count too large": append(bytes.Clone(base), 3, 1, 'a', 1, '1'),
	} {
		if _, err := decodeUser(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeUser(%s): err = %v, want ErrCorrupt", name, err)
		}
	}
}

// TestEncodingUsername pins the bytes of a user record: a user without a
// username is a version-1 record with the bytes users had before usernames
// (so records written earlier read back, without a username), one with a
// username is version 2 with the username after the e-mail, and a user
// without an e-mail address stores "".
func TestEncodingUsername(t *testing.T) {
	// A version-1 record as every earlier build wrote it: id "u1", e-mail
	// "a@e", emailVerified null, name "A", image null.
	v1 := []byte{1, 2, 'u', '1', 3, 'a', '@', 'e', 0, 1, 1, 'A', 0}
	old := core.User{ID: "u1", Email: "a@e", Name: sp("A")}
	got, err := decodeUser(v1)
	if err != nil || !reflect.DeepEqual(*got, old) {
		t.Fatalf("decodeUser(version-1 record) = %#v, %v; want %#v", got, err, old)
	}
	if b := encodeUser(&old); !bytes.Equal(b, v1) {
		t.Errorf("user without a username\n got % x\nwant % x (the version-1 bytes)", b, v1)
	}

	named := old
	named.Username = "ada"
	want := []byte{2, 2, 'u', '1', 3, 'a', '@', 'e', 3, 'a', 'd', 'a', 0, 1, 1, 'A', 0}
	if b := roundTrip(t, "user with a username", named, encodeUser, decodeUser); !bytes.Equal(b, want) {
		t.Errorf("user with a username\n got % x\nwant % x", b, want)
	}

	noEmail := core.User{ID: "u1", Username: "ada"}
	want = []byte{2, 2, 'u', '1', 0, 3, 'a', 'd', 'a', 0, 0, 0}
	if b := roundTrip(t, "user without an e-mail", noEmail, encodeUser, decodeUser); !bytes.Equal(b, want) {
		t.Errorf("user without an e-mail\n got % x\nwant % x", b, want)
	}
	// The read path decodes both versions into its one allocation.
	for _, u := range []core.User{old, named, noEmail} {
		b := encodeUser(&u)
		su, err := decodeSessionAndUser(core.Session{SessionToken: "s"}, b)
		if err != nil || !reflect.DeepEqual(su.User, u) {
			t.Errorf("decodeSessionAndUser(% x) = %+v, %v; want %+v", b, su, err, u)
		}
		if n := testing.AllocsPerRun(20, func() { _, _ = decodeSessionAndUser(core.Session{SessionToken: "s"}, b) }); n != 1 {
			t.Errorf("decodeSessionAndUser(% x): %v allocations, want 1", b, n)
		}
	}
}
