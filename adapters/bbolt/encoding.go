package bboltadapter

import (
	"errors"
	"time"

	"github.com/authport/authport/core"
	rc "github.com/authport/authport/core/recordcodec"
)

// Record encoding, version 1 (see README "Encoding").
//
// Every record value starts with one version byte. The fields follow in a
// fixed order, in the primitives of package recordcodec (str, optstr,
// time, opttime, int = varint, optint, bool, optlist, data; see its
// documentation); the account fields are recordcodec's account layout.
//
// A user record ends with data: a record without application fields
// ([core.User.Data]) has the same bytes as before data was added. A session
// record ends with its metadata section (see appendSessionMetadata): a
// session without metadata has the same bytes as before the section was
// added, so records written earlier read as sessions with zero metadata.
//
// Varints must be minimal, so every record has exactly one encoding. A
// decoder reads the version byte first and dispatches on it, so a later
// version can add or change fields while old records stay readable.
const recordVersion1 = 1

// userVersionUsername is the version of a user record with a username:
// version 1's fields with the username (str, never "") after the e-mail.
// A user without a username is written as version 1, with the bytes it
// had before usernames were added, so files written earlier read as they
// did and every user has one encoding.
const userVersionUsername = 2

// ErrCorrupt is matched (with errors.Is) by errors that report stored bytes
// the adapter cannot decode: a truncated record, trailing bytes, a record
// version this build does not know, or a malformed index key.
var ErrCorrupt = errors.New("corrupt record")

// timeOK reports whether t survives the millisecond encoding unchanged
// (t must already be normalised).
func timeOK(t time.Time) bool {
	ms := t.UnixMilli()
	return time.UnixMilli(ms).UTC().Equal(t)
}

func encodeUser(u *core.User) []byte {
	n := 12 + len(u.ID) + len(u.Email) + len(u.Username)
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
	if u.Username == "" {
		b = rc.AppendStrs(append(b, recordVersion1), u.ID, u.Email)
	} else {
		b = rc.AppendStrs(append(b, userVersionUsername), u.ID, u.Email, u.Username)
	}
	b = rc.AppendOptTime(b, u.EmailVerified)
	b = rc.AppendOptStr(b, u.Name)
	b = rc.AppendOptStr(b, u.Image)
	return rc.AppendData(b, u.Data)
}

func encodeAccount(a *core.Account) []byte {
	b := make([]byte, 0, 64+len(a.UserID)+len(a.Provider)+len(a.ProviderAccountID))
	return rc.AppendAccount(append(b, recordVersion1), a)
}

func encodeSession(s *core.Session) []byte {
	extra := 0
	if hasMetadata(s) {
		extra = 24 + len(s.IPAddress) + len(s.UserAgent)
	}
	return appendSessionMetadata(encodeTimed(extra, s.SessionToken, s.UserID, s.Expires), s)
}

// hasMetadata reports whether any of the session's metadata is known.
func hasMetadata(s *core.Session) bool {
	return !s.CreatedAt.IsZero() || !s.UpdatedAt.IsZero() || s.IPAddress != "" || s.UserAgent != ""
}

// appendSessionMetadata appends the session's metadata section: nothing
// when all of it is unknown (zero), else createdAt opttime, updatedAt
// opttime, ipAddress str, userAgent str, where an opttime is null for a
// zero time. decodeSession refuses a section that is present but all zero,
// so that every session has one encoding.
func appendSessionMetadata(b []byte, s *core.Session) []byte {
	if !hasMetadata(s) {
		return b
	}
	b = appendOptionalTime(b, s.CreatedAt)
	b = appendOptionalTime(b, s.UpdatedAt)
	return rc.AppendStrs(b, s.IPAddress, s.UserAgent)
}

// appendOptionalTime appends t as an opttime, null when t is zero.
func appendOptionalTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return rc.AppendTime(append(b, 1), t)
}

func encodeVerificationToken(v *core.VerificationToken) []byte {
	return encodeTimed(0, v.Identifier, v.Token, v.Expires)
}

// encodeTimed encodes the records of two strings and a time: sessions
// (token, user id, expires) and verification tokens (identifier, token,
// expires), with room for extra bytes more (a session's metadata).
func encodeTimed(extra int, s1, s2 string, t time.Time) []byte {
	b := make([]byte, 0, 16+extra+len(s1)+len(s2))
	b = append(b, recordVersion1)
	return rc.AppendTime(rc.AppendStrs(b, s1, s2), t)
}

func encodeAuthenticator(a *core.Authenticator) []byte {
	b := make([]byte, 0, 32+len(a.CredentialID)+len(a.CredentialPublicKey)+len(a.CredentialDeviceType)+len(a.ProviderAccountID)+len(a.UserID))
	b = append(b, recordVersion1)
	b = rc.AppendStrs(b, a.CredentialID, a.CredentialPublicKey)
	b = rc.AppendBool(rc.AppendVarint(b, a.Counter), a.CredentialBackedUp)
	b = rc.AppendStrs(b, a.CredentialDeviceType, a.ProviderAccountID, a.UserID)
	return rc.AppendOptStr(b, a.Transports)
}

// encodeFactor encodes a factor: the version byte, then recordcodec's
// factor layout.
func encodeFactor(f *core.Factor) []byte {
	b := make([]byte, 0, 40+len(f.UserID)+len(f.ID)+len(f.Type)+len(f.Name)+len(f.Secret))
	return rc.AppendFactor(append(b, recordVersion1), f)
}
