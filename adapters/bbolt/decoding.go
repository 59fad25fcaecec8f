package bboltadapter

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/authport/authport/core"
	rc "github.com/authport/authport/core/recordcodec"
)

// reader returns a reader of the record b after checking its version
// byte: a record of a version other than 1 fails (badRecord, out of the
// good record's path).
func reader(b []byte) rc.Reader {
	if len(b) == 0 || b[0] != recordVersion1 {
		return badRecord(b)
	}
	return rc.NewReader(b[1:])
}

// userReader is reader for a user record, which may also be of version
// userVersionUsername.
func userReader(b []byte) rc.Reader {
	if len(b) > 0 && b[0] == userVersionUsername {
		return rc.NewReader(b[1:])
	}
	return reader(b)
}

// badRecord returns the failed reader of a record that is empty or of
// another version.
func badRecord(b []byte) rc.Reader {
	r := rc.NewReader(b)
	if v := r.Byte(); r.Err() == nil {
		r.Fail(fmt.Sprintf("unsupported record version %d", v))
	}
	return r
}

// end returns the reader's failure (trailing bytes included) as an error
// matching ErrCorrupt that names the kind of record; nil, inlined, for a
// record read to its end.
func end(kind string, r *rc.Reader) error {
	if r.Done() {
		return nil
	}
	return corrupt(kind, r)
}

func corrupt(kind string, r *rc.Reader) error {
	return fmt.Errorf("%w: %s: %w", ErrCorrupt, kind, r.End())
}

// decodeUser decodes a user record into one allocation, a userBox holding
// the User, what its pointer fields point to and the copy of the record its
// strings are substrings of (see inlineBuffer).
func decodeUser(b []byte) (*core.User, error) {
	switch n := len(b) - 1; { // the bytes after the version byte are copied
	case n <= len(userBuffer1{}):
		return decodeUserIn[userBuffer1](b)
	case n <= len(userBuffer2{}):
		return decodeUserIn[userBuffer2](b)
	case n <= len(userBuffer3{}):
		return decodeUserIn[userBuffer3](b)
	default:
		return decodeUserIn[noBuffer](b)
	}
}

func decodeUserIn[B inlineBuffer](b []byte) (*core.User, error) {
	box := &userBox[B]{}
	if err := box.decodeUser(b, &box.u, bytesOf(&box.buf)); err != nil {
		return nil, err
	}
	return &box.u, nil
}

// userBox holds a User, what its optional fields point to and the copy of
// the record its strings are substrings of, so that a user is decoded into
// one allocation.
type userBox[B inlineBuffer] struct {
	u core.User
	userFields
	buf B
}

// userFields holds what a decoded User's pointer fields point to, inside
// the one allocation that also holds the User.
type userFields struct {
	verified    time.Time
	name, image string
}

// inlineBuffer is the copy of a user record inside the allocation that
// holds the decoded user, so that decoding a user takes one allocation, not
// two. Its sizes make each box fill a size class of Go's allocator (the
// userBuffer ones a userBox: 208, 288 and 512 bytes; the sessionBuffer ones
// a sessionAndUserBox: 352, 416 and 640 bytes, since a Session holds its
// metadata fields); the decoders take the
// smallest that holds the record, and for a longer record the box without
// one (noBuffer) and a string of the record's own. A typical user (an
// e-mail address, a name, an image URL) takes the second or third.
type inlineBuffer interface {
	noBuffer | userBuffer1 | userBuffer2 | userBuffer3 | sessionBuffer1 | sessionBuffer2 | sessionBuffer3
}

type (
	noBuffer       [0]byte
	userBuffer1    [72]byte
	userBuffer2    [152]byte
	userBuffer3    [376]byte
	sessionBuffer1 [80]byte
	sessionBuffer2 [144]byte
	sessionBuffer3 [368]byte
)

// bytesOf returns the bytes of buf as a slice of length 0 and buf's
// capacity.
func bytesOf[B inlineBuffer](buf *B) []byte {
	if len(*buf) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(buf)), len(*buf))[:0]
}

// decodeUser decodes the user record b (version 1, or version 2 with a
// username) into u, whose pointer fields point
// into f, with the checks of the format: version, minimal varints, lengths
// within the value, flag bytes, no trailing bytes. Its strings are
// substrings of one copy of the record, in buf's capacity when it fits.
func (f *userFields) decodeUser(b []byte, u *core.User, buf []byte) error {
	r := userReader(b)
	r.Own(buf)
	u.ID = r.Str()
	u.Email = r.Str()
	if len(b) > 0 && b[0] == userVersionUsername {
		if u.Username = r.Str(); u.Username == "" && r.Err() == nil {
			r.Fail("a user record of version 2 with an empty username")
		}
	}
	if r.Bool() {
		f.verified = r.Time()
		u.EmailVerified = &f.verified
	}
	if r.Bool() {
		f.name = r.Str()
		u.Name = &f.name
	}
	if r.Bool() {
		f.image = r.Str()
		u.Image = &f.image
	}
	if r.Len() > 0 {
		u.Data = r.Data()
	}
	return end("user", &r)
}

// decodeSessionRef reads a session record's user id (a slice of b, valid
// only while b is) and expiry, allocating nothing: getSessionAndUser's
// first step. The metadata section after the expiry is left unread (the
// read of every request has no use for it); decodeSession checks it.
func decodeSessionRef(b []byte) (uid []byte, expires time.Time, err error) {
	r := reader(b)
	r.Bytes() // the token, which is the record's key
	uid = r.Bytes()
	expires = r.Time()
	if r.Err() != nil {
		return nil, time.Time{}, corrupt("session", &r)
	}
	return uid, expires, nil
}

// sessionAndUserBox holds a SessionAndUser, what its user's pointer fields
// point to and the copy of the user record, so that decodeSessionAndUser
// allocates it at once.
type sessionAndUserBox[B inlineBuffer] struct {
	su core.SessionAndUser
	userFields
	buf B
}

// decodeSessionAndUser decodes the user record b into a SessionAndUser
// with session s (its user id set to the user's), in one allocation, as
// decodeUser does, with the same checks.
func decodeSessionAndUser(s core.Session, b []byte) (*core.SessionAndUser, error) {
	switch n := len(b) - 1; {
	case n <= len(sessionBuffer1{}):
		return decodeSessionAndUserIn[sessionBuffer1](s, b)
	case n <= len(sessionBuffer2{}):
		return decodeSessionAndUserIn[sessionBuffer2](s, b)
	case n <= len(sessionBuffer3{}):
		return decodeSessionAndUserIn[sessionBuffer3](s, b)
	default:
		return decodeSessionAndUserIn[noBuffer](s, b)
	}
}

func decodeSessionAndUserIn[B inlineBuffer](s core.Session, b []byte) (*core.SessionAndUser, error) {
	box := &sessionAndUserBox[B]{}
	if err := box.decodeUser(b, &box.su.User, bytesOf(&box.buf)); err != nil {
		return nil, err
	}
	s.UserID = box.su.User.ID
	box.su.Session = s
	return &box.su, nil
}

// userIDOfAccount reads only the user id of an encoded account.
func userIDOfAccount(b []byte) (string, error) {
	id, err := userIDRefOfAccount(b)
	return string(id), err
}

// userIDRefOfAccount is userIDOfAccount without the copy: the id is a
// slice of b, valid only while b is (inside the read transaction).
func userIDRefOfAccount(b []byte) ([]byte, error) {
	r := reader(b)
	id := r.Bytes()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: account: %w", ErrCorrupt, err)
	}
	return id, nil
}

func decodeAccount(b []byte) (*core.Account, error) {
	r := reader(b)
	r.Own(nil) // one copy for all the strings
	a := &core.Account{}
	r.Account(a)
	if err := end("account", &r); err != nil {
		return nil, err
	}
	return a, nil
}

// decodeSession decodes a session record with its metadata section, if
// any (a record without one, as written before the section was added, has
// zero metadata).
func decodeSession(b []byte) (*core.Session, error) {
	r := reader(b)
	r.Own(nil) // one copy for all the strings
	s := &core.Session{SessionToken: r.Str(), UserID: r.Str(), Expires: r.Time()}
	if r.Len() > 0 {
		readSessionMetadata(&r, s)
	}
	if err := end("session", &r); err != nil {
		return nil, err
	}
	return s, nil
}

// readSessionMetadata reads what appendSessionMetadata appends, refusing a
// section with nothing known in it (the encoding of such a session has no
// section).
func readSessionMetadata(r *rc.Reader, s *core.Session) {
	s.CreatedAt = readOptionalTime(r)
	s.UpdatedAt = readOptionalTime(r)
	s.IPAddress, s.UserAgent = r.Str(), r.Str()
	if r.Err() == nil && !hasMetadata(s) {
		r.Fail("session metadata section with nothing in it")
	}
}

// readOptionalTime reads what appendOptionalTime appends: the zero time for
// null, and a failure for a present time that is the zero time.
func readOptionalTime(r *rc.Reader) time.Time {
	if !r.Bool() {
		return time.Time{}
	}
	t := r.Time()
	if r.Err() == nil && t.IsZero() {
		r.Fail("a present time that is the zero time")
	}
	return t
}

func decodeVerificationToken(b []byte) (*core.VerificationToken, error) {
	identifier, token, expires, err := decodeTimed("verification token", b)
	if err != nil {
		return nil, err
	}
	return &core.VerificationToken{Identifier: identifier, Token: token, Expires: expires}, nil
}

// decodeTimed decodes what encodeTimed encodes.
func decodeTimed(kind string, b []byte) (s1, s2 string, t time.Time, err error) {
	r := reader(b)
	r.Own(nil) // one copy for all the strings
	s1, s2, t = r.Str(), r.Str(), r.Time()
	if err := end(kind, &r); err != nil {
		return "", "", time.Time{}, err
	}
	return s1, s2, t, nil
}

func decodeAuthenticator(b []byte) (*core.Authenticator, error) {
	r := reader(b)
	r.Own(nil) // one copy for all the strings
	a := &core.Authenticator{}
	a.CredentialID = r.Str()
	a.CredentialPublicKey = r.Str()
	a.Counter = r.Varint()
	a.CredentialBackedUp = r.Bool()
	a.CredentialDeviceType = r.Str()
	a.ProviderAccountID = r.Str()
	a.UserID = r.Str()
	a.Transports = r.OptStr()
	if err := end("authenticator", &r); err != nil {
		return nil, err
	}
	return a, nil
}

func decodeFactor(b []byte) (*core.Factor, error) {
	r := reader(b)
	r.Own(nil) // one copy for all the strings (the secret is copied apart)
	f := &core.Factor{}
	r.Factor(f)
	if err := end("factor", &r); err != nil {
		return nil, err
	}
	return f, nil
}
