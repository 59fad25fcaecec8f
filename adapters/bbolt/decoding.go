package bboltadapter

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"github.com/authport/authport/core"
)

// decoder reads one record. The first failure sticks in err; later reads
// return zero values. It never panics, whatever the bytes.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
}

// version reads the version byte and fails on any version but 1.
func (d *decoder) version(kind string) {
	if len(d.b) == 0 {
		d.fail(kind + ": empty value")
		return
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v != recordVersion1 {
		d.fail(fmt.Sprintf("%s: unsupported record version %d", kind, v))
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || (n > 1 && d.b[n-1] == 0) { // overflow, truncated or not minimal
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 || (n > 1 && d.b[n-1] == 0) { // overflow, truncated or not minimal
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) flag() bool {
	switch d.byte1() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bad flag byte")
	return false
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("string length beyond value")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// bytes is str without the copy: a slice of the value being decoded.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("string length beyond value")
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

// strOf is str for a value of which src is a string copy: it returns a
// substring of src instead of allocating a string.
func (d *decoder) strOf(src string) string {
	// The common case first, without the varint decoder's call: a length
	// below 128 is one byte (and so minimal).
	if len(d.b) > 0 && d.b[0] < 0x80 && d.err == nil {
		if n := int(d.b[0]); n < len(d.b) {
			off := len(src) - len(d.b) + 1
			d.b = d.b[1+n:]
			return src[off : off+n]
		}
	}
	b := d.bytes()
	if d.err != nil {
		return ""
	}
	off := len(src) - len(d.b) - len(b)
	return src[off : off+len(b)]
}

func (d *decoder) optStr() *string {
	if !d.flag() {
		return nil
	}
	s := d.str()
	if d.err != nil {
		return nil
	}
	return &s
}

func (d *decoder) time() time.Time {
	ms := d.varint()
	if d.err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func (d *decoder) optTime() *time.Time {
	if !d.flag() {
		return nil
	}
	t := d.time()
	if d.err != nil {
		return nil
	}
	return &t
}

func (d *decoder) optInt() *int64 {
	if !d.flag() {
		return nil
	}
	v := d.varint()
	if d.err != nil {
		return nil
	}
	return &v
}

// count reads a list length, bounded by the bytes left (every element takes
// at least one byte), so a corrupt length cannot make a huge allocation.
func (d *decoder) count() int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(len(d.b)) {
		d.fail("list length beyond value")
		return 0
	}
	return int(n)
}

func (d *decoder) optList() []string {
	if !d.flag() {
		return nil
	}
	n := d.count()
	if d.err != nil {
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = d.str()
	}
	if d.err != nil {
		return nil
	}
	return l
}

func (d *decoder) end(kind string) error {
	if d.err == nil && len(d.b) != 0 {
		d.fail(kind + ": trailing bytes")
	}
	return d.err
}

// decodeUser decodes a user record into one allocation, a userBox holding
// the User, what its pointer fields point to and the copy of b that its
// strings are substrings of (a second one for a record longer than
// userInline).
func decodeUser(b []byte) (*core.User, error) {
	box := &userBox{}
	if err := box.decodeUser(b, &box.u); err != nil {
		return nil, err
	}
	return &box.u, nil
}

// userBox holds a User and what its optional fields point to, so that a
// user is decoded into one allocation, the record's bytes included when they
// fit (see userFields).
type userBox struct {
	u core.User
	userFields
}

// userFields holds what a decoded User's pointer fields point to, and the
// copy of the record's bytes its strings are substrings of, inside the one
// allocation that also holds the User.
type userFields struct {
	verified    time.Time
	name, image string
	buf         [userInline]byte
}

// userInline is how many bytes of a user record are copied into the
// allocation that holds the decoded user (a larger record gets a string of
// its own). With it the boxes fill their size classes (256 and 320 bytes).
const userInline = 136

// source returns a copy of b that the decoded strings are substrings of:
// in f.buf when it fits, so that the decode allocates nothing more.
func (f *userFields) source(b []byte) string {
	if len(b) == 0 || len(b) > len(f.buf) {
		return string(b)
	}
	n := copy(f.buf[:], b)
	return unsafe.String(&f.buf[0], n)
}

// decodeUser decodes the user record b into u, whose pointer fields point
// into f, with the checks of the format: version, minimal varints, lengths
// within the value, flag bytes, no trailing bytes. Every string field is a
// substring of one copy of b (f.source).
func (f *userFields) decodeUser(b []byte, u *core.User) error {
	src := f.source(b)
	d := decoder{b: b}
	d.version("user")
	u.ID = d.strOf(src)
	u.Email = d.strOf(src)
	if d.flag() {
		f.verified = d.time()
		u.EmailVerified = &f.verified
	}
	if d.flag() {
		f.name = d.strOf(src)
		u.Name = &f.name
	}
	if d.flag() {
		f.image = d.strOf(src)
		u.Image = &f.image
	}
	if len(d.b) > 0 && d.err == nil {
		u.Data = d.data(src)
	}
	return d.end("user")
}

// data reads the application fields of a user record: names are
// substrings of src, values copies. A count of 0, names out of order or
// repeated, or a value that is not JSON are corrupt (the encoding is
// canonical).
func (d *decoder) data(src string) map[string]json.RawMessage {
	n := d.count()
	if d.err != nil {
		return nil
	}
	if n == 0 {
		d.fail("user: empty application fields")
		return nil
	}
	out := make(map[string]json.RawMessage, n)
	prev := ""
	for i := range n {
		name := d.strOf(src)
		v := d.bytes()
		switch {
		case d.err != nil:
			return nil
		case i > 0 && name <= prev:
			d.fail("user: application fields out of order")
			return nil
		case !json.Valid(v):
			d.fail("user: application field " + name + " is not JSON")
			return nil
		}
		out[name] = bytes.Clone(v)
		prev = name
	}
	return out
}

// decodeSessionRef reads a session record's user id (a slice of b, valid
// only while b is) and expiry, allocating nothing: getSessionAndUser's
// first step.
func decodeSessionRef(b []byte) (uid []byte, expires time.Time, err error) {
	d := decoder{b: b}
	d.version("session")
	d.bytes() // the token, which is the record's key
	uid = d.bytes()
	expires = d.time()
	return uid, expires, d.end("session")
}

// sessionAndUserBox holds a SessionAndUser and what its user's pointer
// fields point to, so that decodeSessionAndUser allocates it at once.
type sessionAndUserBox struct {
	su core.SessionAndUser
	userFields
}

// decodeSessionAndUser decodes the user record b into a SessionAndUser
// with session s (its user id set to the user's), in one allocation (two
// for a record longer than userInline), as decodeUser does. It decodes what decodeUser decodes, with the same
// checks.
func decodeSessionAndUser(s core.Session, b []byte) (*core.SessionAndUser, error) {
	box := &sessionAndUserBox{}
	if err := box.decodeUser(b, &box.su.User); err != nil {
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
	d := decoder{b: b}
	d.version("account")
	id := d.bytes()
	return id, d.err
}

func decodeAccount(b []byte) (*core.Account, error) {
	d := decoder{b: b}
	d.version("account")
	a := &core.Account{}
	a.UserID = d.str()
	a.Provider = d.str()
	a.Type = core.AccountType(d.str())
	a.ProviderAccountID = d.str()
	a.AccessToken = d.optStr()
	if d.flag() {
		n := d.count()
		if d.err == nil {
			a.AuthorizationDetails = make([]core.AuthorizationDetail, n)
			for i := range a.AuthorizationDetails {
				ad := &a.AuthorizationDetails[i]
				ad.Type = d.str()
				ad.Locations = d.optList()
				ad.Actions = d.optList()
				ad.Datatypes = d.optList()
				ad.Identifier = d.str()
				ad.Privileges = d.optList()
			}
		}
	}
	a.ExpiresAt = d.optInt()
	a.ExpiresIn = d.optInt()
	a.IDToken = d.optStr()
	a.RefreshToken = d.optStr()
	a.Scope = d.optStr()
	a.TokenType = d.optStr()
	a.SessionState = d.optStr()
	if err := d.end("account"); err != nil {
		return nil, err
	}
	return a, nil
}

func decodeSession(b []byte) (*core.Session, error) {
	token, uid, expires, err := decodeTimed("session", b)
	if err != nil {
		return nil, err
	}
	return &core.Session{SessionToken: token, UserID: uid, Expires: expires}, nil
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
	d := decoder{b: b}
	d.version(kind)
	s1, s2, t = d.str(), d.str(), d.time()
	if err := d.end(kind); err != nil {
		return "", "", time.Time{}, err
	}
	return s1, s2, t, nil
}

func decodeAuthenticator(b []byte) (*core.Authenticator, error) {
	d := decoder{b: b}
	d.version("authenticator")
	a := &core.Authenticator{}
	a.CredentialID = d.str()
	a.CredentialPublicKey = d.str()
	a.Counter = d.varint()
	a.CredentialBackedUp = d.flag()
	a.CredentialDeviceType = d.str()
	a.ProviderAccountID = d.str()
	a.UserID = d.str()
	a.Transports = d.optStr()
	if err := d.end("authenticator"); err != nil {
		return nil, err
	}
	return a, nil
}
