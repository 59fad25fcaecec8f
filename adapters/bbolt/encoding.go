package bboltadapter

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/authport/authport/core"
)

// Record encoding, version 1 (see README "Encoding").
//
// Every record value starts with one version byte. The fields follow in a
// fixed order, each encoded as:
//
//	str      uvarint byte length, then the bytes
//	optstr   0x00 (null) | 0x01 str
//	time     zig-zag varint of Unix milliseconds
//	opttime  0x00 (null) | 0x01 time
//	int      zig-zag varint
//	optint   0x00 (null) | 0x01 int
//	bool     0x00 | 0x01
//	optlist  0x00 (null) | 0x01 uvarint count, then count × str
//	data     nothing (no application fields) | uvarint count ≥ 1, then
//	         count × (str name, str JSON value), names in ascending byte
//	         order, each once
//
// A user record ends with data: a record without application fields
// ([core.User.Data]) has the same bytes as before data was added.
//
// Varints must be minimal, so every record has exactly one encoding. A
// decoder reads the version byte first and dispatches on it, so a later
// version can add or change fields while old records stay readable.
const recordVersion1 = 1

// ErrCorrupt is matched (with errors.Is) by errors that report stored bytes
// the adapter cannot decode: a truncated record, trailing bytes, a record
// version this build does not know, or a malformed index key.
var ErrCorrupt = errors.New("corrupt record")

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendOptStr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return appendStr(append(b, 1), *s)
}

func appendTime(b []byte, t time.Time) []byte {
	return binary.AppendVarint(b, t.UnixMilli())
}

func appendOptTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, 0)
	}
	return appendTime(append(b, 1), *t)
}

func appendOptInt(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), *v)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendOptList(b []byte, l []string) []byte {
	if l == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(append(b, 1), uint64(len(l)))
	for _, s := range l {
		b = appendStr(b, s)
	}
	return b
}

// timeOK reports whether t survives the millisecond encoding unchanged
// (t must already be normalised).
func timeOK(t time.Time) bool {
	ms := t.UnixMilli()
	return time.UnixMilli(ms).UTC().Equal(t)
}

func encodeUser(u *core.User) []byte {
	n := 8 + len(u.ID) + len(u.Email)
	for k, v := range u.Data {
		n += len(k) + len(v) + 4
	}
	if u.Name != nil {
		n += len(*u.Name) + 4
	}
	if u.Image != nil {
		n += len(*u.Image) + 4
	}
	b := make([]byte, 0, n+16)
	b = append(b, recordVersion1)
	b = appendStr(b, u.ID)
	b = appendStr(b, u.Email)
	b = appendOptTime(b, u.EmailVerified)
	b = appendOptStr(b, u.Name)
	b = appendOptStr(b, u.Image)
	return appendData(b, u.Data)
}

// appendData appends the application fields, sorted by name; nothing when
// there are none.
func appendData(b []byte, data map[string]json.RawMessage) []byte {
	if len(data) == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(len(data)))
	for _, name := range slices.Sorted(maps.Keys(data)) {
		b = appendStr(b, name)
		b = appendStr(b, string(data[name]))
	}
	return b
}

func encodeAccount(a *core.Account) []byte {
	b := make([]byte, 0, 64+len(a.UserID)+len(a.Provider)+len(a.ProviderAccountID))
	b = append(b, recordVersion1)
	b = appendStr(b, a.UserID) // first, so that userIDOfAccount can stop early
	b = appendStr(b, a.Provider)
	b = appendStr(b, string(a.Type))
	b = appendStr(b, a.ProviderAccountID)
	b = appendOptStr(b, a.AccessToken)
	if a.AuthorizationDetails == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(append(b, 1), uint64(len(a.AuthorizationDetails)))
		for _, d := range a.AuthorizationDetails {
			b = appendStr(b, d.Type)
			for _, l := range [...][]string{d.Locations, d.Actions, d.Datatypes} {
				b = appendOptList(b, l)
			}
			b = appendStr(b, d.Identifier)
			b = appendOptList(b, d.Privileges)
		}
	}
	b = appendOptInt(b, a.ExpiresAt)
	b = appendOptInt(b, a.ExpiresIn)
	for _, p := range [...]*string{a.IDToken, a.RefreshToken, a.Scope, a.TokenType, a.SessionState} {
		b = appendOptStr(b, p)
	}
	return b
}

func encodeSession(s *core.Session) []byte {
	return encodeTimed(s.SessionToken, s.UserID, s.Expires)
}

func encodeVerificationToken(v *core.VerificationToken) []byte {
	return encodeTimed(v.Identifier, v.Token, v.Expires)
}

// encodeTimed encodes the records of two strings and a time: sessions
// (token, user id, expires) and verification tokens (identifier, token,
// expires).
func encodeTimed(s1, s2 string, t time.Time) []byte {
	b := make([]byte, 0, 16+len(s1)+len(s2))
	b = append(b, recordVersion1)
	b = appendStr(b, s1)
	b = appendStr(b, s2)
	return appendTime(b, t)
}

func encodeAuthenticator(a *core.Authenticator) []byte {
	b := make([]byte, 0, 32+len(a.CredentialID)+len(a.CredentialPublicKey)+len(a.CredentialDeviceType)+len(a.ProviderAccountID)+len(a.UserID))
	b = append(b, recordVersion1)
	b = appendStr(b, a.CredentialID)
	b = appendStr(b, a.CredentialPublicKey)
	b = binary.AppendVarint(b, a.Counter)
	b = appendBool(b, a.CredentialBackedUp)
	b = appendStr(b, a.CredentialDeviceType)
	b = appendStr(b, a.ProviderAccountID)
	b = appendStr(b, a.UserID)
	b = appendOptStr(b, a.Transports)
	return b
}
