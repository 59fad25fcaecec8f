// Package fuzzrecord builds adapter records from a fuzzer's bytes, so that
// every adapter's fuzz targets can check their encoders with records of
// any shape: null and empty fields, empty and nil lists, any bytes in
// strings (NUL, invalid UTF-8), times from before 1970 to far beyond what
// a millisecond counter holds.
//
// A [Source] reads its bytes front to back and never fails: once they run
// out it yields zero values, so every byte string gives some record, and a
// small change to the bytes gives a small change to the record (which is
// what lets the fuzzer's mutations explore shapes).
//
// What the optional extensions keep has methods of its own, which the
// record methods do not call: [Source.Username] (a user's),
// [Source.SessionMetadata] and [Source.Factor]; an account's password
// hash is an [Source.OptStr]. A reader that adds them reads them after the
// records, so that inputs stored before keep their meaning.
//
// The records are raw, as a caller might pass them: not validated, not
// normalised. A fuzz target normalises them as the adapter does, and
// asserts either that the adapter rejects them or that they round-trip.
package fuzzrecord

import (
	"encoding/binary"
	"time"

	"github.com/authport/authport/core"
)

// Source reads records and their parts from fuzzer input.
type Source struct{ b []byte }

// New returns a Source reading b.
func New(b []byte) *Source { return &Source{b: b} }

// Len returns how many bytes are left.
func (s *Source) Len() int { return len(s.b) }

// Byte returns the next byte, or 0 when the input is used up.
func (s *Source) Byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

// Bool returns whether the next byte is odd.
func (s *Source) Bool() bool { return s.Byte()&1 == 1 }

// Int64 returns the next eight bytes, big-endian (zero-padded at the end of
// the input), as a signed integer: any int64, extremes included.
func (s *Source) Int64() int64 {
	var buf [8]byte
	n := copy(buf[:], s.b)
	s.b = s.b[n:]
	return int64(binary.BigEndian.Uint64(buf[:]))
}

// Str returns a string of the next byte's value (modulo 64) in length, cut
// short at the end of the input. Its bytes are whatever the input holds.
func (s *Source) Str() string {
	n := min(int(s.Byte()%64), len(s.b))
	v := string(s.b[:n])
	s.b = s.b[n:]
	return v
}

// OptStr returns nil when the next byte is even, else a pointer to [Source.Str].
func (s *Source) OptStr() *string {
	if !s.Bool() {
		return nil
	}
	v := s.Str()
	return &v
}

// OptInt64 returns nil when the next byte is even, else a pointer to
// [Source.Int64].
func (s *Source) OptInt64() *int64 {
	if !s.Bool() {
		return nil
	}
	v := s.Int64()
	return &v
}

// Strs returns nil, or a list of up to 3 strings (possibly empty, not nil).
func (s *Source) Strs() []string {
	c := s.Byte()
	if c&1 == 0 {
		return nil
	}
	l := make([]string, (c>>1)%4)
	for i := range l {
		l[i] = s.Str()
	}
	return l
}

// Time returns a time of one of three kinds, chosen by the next byte: whole
// milliseconds of any int64 (pre-1970 and far-future times included); any
// int64 of nanoseconds since 1970, in a fixed non-UTC zone; or any int64 of
// seconds with nanoseconds, most of which lie beyond what milliseconds
// since 1970 can hold.
func (s *Source) Time() time.Time {
	switch s.Byte() % 3 {
	case 0:
		return time.UnixMilli(s.Int64()).UTC()
	case 1:
		return time.Unix(0, s.Int64()).In(time.FixedZone("UTC-7", -7*3600))
	default:
		sec := s.Int64()
		return time.Unix(sec, int64(uint64(s.Int64())%1e9))
	}
}

// OptTime returns nil when the next byte is even, else a pointer to
// [Source.Time].
func (s *Source) OptTime() *time.Time {
	if !s.Bool() {
		return nil
	}
	t := s.Time()
	return &t
}

// User returns a user with every field read from the input.
func (s *Source) User() core.User {
	return core.User{ID: s.Str(), Email: s.Str(), EmailVerified: s.OptTime(), Name: s.OptStr(), Image: s.OptStr()}
}

// accountTypes are the valid types, and one that is not.
var accountTypes = [...]core.AccountType{core.AccountTypeOAuth, core.AccountTypeOIDC, core.AccountTypeEmail, core.AccountTypeWebAuthn}

// Account returns an account with every field read from the input. Its type
// is one of the four valid types unless the type byte asks for any string.
func (s *Source) Account() core.Account {
	a := core.Account{UserID: s.Str(), Provider: s.Str()}
	if c := s.Byte(); c < 240 {
		a.Type = accountTypes[c%4]
	} else {
		a.Type = core.AccountType(s.Str())
	}
	a.ProviderAccountID = s.Str()
	a.AccessToken = s.OptStr()
	if c := s.Byte(); c&1 == 1 {
		a.AuthorizationDetails = make([]core.AuthorizationDetail, (c>>1)%4)
		for i := range a.AuthorizationDetails {
			a.AuthorizationDetails[i] = core.AuthorizationDetail{
				Type: s.Str(), Locations: s.Strs(), Actions: s.Strs(), Datatypes: s.Strs(),
				Identifier: s.Str(), Privileges: s.Strs(),
			}
		}
	}
	a.ExpiresAt = s.OptInt64()
	a.ExpiresIn = s.OptInt64()
	a.IDToken = s.OptStr()
	a.RefreshToken = s.OptStr()
	a.Scope = s.OptStr()
	a.TokenType = s.OptStr()
	a.SessionState = s.OptStr()
	return a
}

// Session returns a session with every field read from the input.
func (s *Source) Session() core.Session {
	return core.Session{SessionToken: s.Str(), UserID: s.Str(), Expires: s.Time()}
}

// VerificationToken returns a verification token with every field read
// from the input.
func (s *Source) VerificationToken() core.VerificationToken {
	return core.VerificationToken{Identifier: s.Str(), Token: s.Str(), Expires: s.Time()}
}

// Authenticator returns an authenticator with every field read from the
// input; the counter is any int64, negative ones included.
func (s *Source) Authenticator() core.Authenticator {
	return core.Authenticator{
		CredentialID: s.Str(), CredentialPublicKey: s.Str(), Counter: s.Int64(), CredentialBackedUp: s.Bool(),
		CredentialDeviceType: s.Str(), ProviderAccountID: s.Str(), UserID: s.Str(), Transports: s.OptStr(),
	}
}

// Bytes returns nil when the next byte is even, else the bytes of
// [Source.Str]: possibly empty, not nil.
func (s *Source) Bytes() []byte {
	if !s.Bool() {
		return nil
	}
	return []byte(s.Str())
}

// usernameChars are the characters of a username, lowercase: what
// [Source.Username] spells its names with.
const usernameChars = "abcdefghijklmnopqrstuvwxyz0123456789._-"

// Username returns a username ([core.User.Username]) of one of three
// kinds, chosen by the next byte: "" (none) when it is even; when it is
// odd and below 0xf0, [Source.Str] spelt with the characters a username
// may hold (each byte picks one), so that most pass the library's rules
// and some break them (too short or long, a '.', '_' or '-' at an end);
// else [Source.Str] as it is, any bytes.
func (s *Source) Username() string {
	c := s.Byte()
	switch {
	case c&1 == 0:
		return ""
	case c >= 0xf0:
		return s.Str()
	}
	b := []byte(s.Str())
	for i, c := range b {
		b[i] = usernameChars[int(c)%len(usernameChars)]
	}
	return string(b)
}

// SessionMetadata sets the metadata of sess ([core.Session.CreatedAt],
// UpdatedAt, IPAddress, UserAgent) from the input: each time zero (unknown)
// or any [Source.Time], each string any [Source.Str].
func (s *Source) SessionMetadata(sess *core.Session) {
	sess.CreatedAt, sess.UpdatedAt = s.optionalTime(), s.optionalTime()
	sess.IPAddress, sess.UserAgent = s.Str(), s.Str()
}

// optionalTime returns the zero time when the next byte is even, else
// [Source.Time].
func (s *Source) optionalTime() time.Time {
	if t := s.OptTime(); t != nil {
		return *t
	}
	return time.Time{}
}

// factorTypes are the factor types core/auth writes.
var factorTypes = [...]core.FactorType{core.FactorTOTP, core.FactorRecoveryCodes, core.FactorEmail, core.FactorPasskey, core.FactorTrustedDevice}

// Factor returns a second factor with every field read from the input. Its
// type is one of the five core/auth writes unless the type byte asks for
// any string; its secret nil or any bytes (empty included); its step any
// int64, negative ones included; its last use zero (never) or any
// [Source.Time].
func (s *Source) Factor() core.Factor {
	f := core.Factor{ID: s.Str(), UserID: s.Str()}
	if c := s.Byte(); c < 240 {
		f.Type = factorTypes[c%byte(len(factorTypes))]
	} else {
		f.Type = core.FactorType(s.Str())
	}
	f.Name = s.Str()
	f.Secret = s.Bytes()
	f.Step = s.Int64()
	f.CreatedAt = s.Time()
	f.LastUsedAt = s.optionalTime()
	return f
}
