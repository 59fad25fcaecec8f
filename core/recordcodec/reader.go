package recordcodec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"github.com/authport/authport/core"
)

// Reader reads the fields of one record in order. The first failure sticks
// (see [Reader.Err]); later reads return zero values. Its zero value reads
// an empty record.
//
// A string it returns is a substring of the string given to
// [NewStringReader] or of the copy [Reader.Own] made (no copy of its own),
// else a string of its own.
type Reader struct {
	b   []byte
	src string // after NewStringReader or Own: b is a suffix of src's bytes
	err error
}

// NewReader returns a reader of b. The strings it returns are copies, so b
// may change or go away after the reads (as a bbolt value does when its
// transaction ends).
func NewReader(b []byte) Reader { return Reader{b: b} }

// NewStringReader returns a reader of s whose strings are substrings of s,
// allocating nothing for them.
func NewStringReader(s string) Reader {
	return Reader{b: unsafe.Slice(unsafe.StringData(s), len(s)), src: s}
}

// Own makes the strings the reader returns from now on substrings of one
// copy of the bytes left, so that reading a record takes one copy, not one
// per string: the copy is in buf's capacity when they fit (a caller that
// decodes into one allocation passes a byte array inside it, which must not
// be written while the strings are in use), else a string of its own.
func (r *Reader) Own(buf []byte) {
	if r.src != "" {
		return
	}
	var s string
	if n := len(r.b); n != 0 && n <= cap(buf) {
		buf = append(buf[:0], r.b...)
		s = unsafe.String(&buf[0], n)
	} else {
		s = string(r.b)
	}
	r.src, r.b = s, unsafe.Slice(unsafe.StringData(s), len(s))
}

// Err returns the first failure, an error matching [errMalformed], or nil.
func (r *Reader) Err() error { return r.err }

// Len returns the number of bytes left.
func (r *Reader) Len() int { return len(r.b) }

// Done reports whether the record was read to its end without a failure:
// [Reader.End] would return nil.
func (r *Reader) Done() bool { return r.err == nil && len(r.b) == 0 }

// Fail records a failure (unless one is recorded already) saying what is
// wrong, and stops the reads: an adapter calls it for a check of its own,
// such as a version byte it does not know.
func (r *Reader) Fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errMalformed, what)
	}
	r.b = nil
}

// End returns Err, or a failure when bytes are left over.
func (r *Reader) End() error {
	if r.err == nil && len(r.b) != 0 {
		r.Fail("trailing bytes")
	}
	return r.err
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.b) != 0 {
		c := r.b[0]
		r.b = r.b[1:]
		return c
	}
	if r.err == nil {
		r.err = errTruncated
	}
	return 0
}

// Bool reads a bool (or the presence byte of an optional field): 0x00 or
// 0x01.
func (r *Reader) Bool() bool {
	if len(r.b) != 0 && r.b[0] <= 1 {
		c := r.b[0]
		r.b = r.b[1:]
		return c == 1
	}
	if r.err == nil {
		r.err = errBadFlag // or truncated: the message says both
	}
	r.b = nil
	return false
}

// Uvarint reads a minimal uvarint.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) { // overflow, truncated or not minimal
		r.Fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Varint reads a minimal zig-zag varint.
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Count reads a uvarint length or count, which must not exceed the bytes
// left (every element takes at least one), so that a corrupt count cannot
// make a huge allocation.
func (r *Reader) Count() int {
	// The common case inline: a value below 128 is one byte (and so
	// minimal).
	if len(r.b) != 0 && r.b[0] < 0x80 && int(r.b[0]) < len(r.b) {
		n := int(r.b[0])
		r.b = r.b[1:]
		return n
	}
	return r.countSlow()
}

func (r *Reader) countSlow() int {
	n := r.Uvarint()
	if n > uint64(len(r.b)) {
		r.Fail("length beyond the record")
		return 0
	}
	return int(n)
}

// Bytes reads a str without copying it: a slice of the record, valid only
// while the record's bytes are.
func (r *Reader) Bytes() []byte {
	n := r.Count()
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// Str reads a str (see [Reader] for where its bytes live).
func (r *Reader) Str() string {
	var n int
	// A length below 128 is one byte (and so minimal): the common case
	// without a call.
	if len(r.b) != 0 && r.b[0] < 0x80 && int(r.b[0]) < len(r.b) {
		n = int(r.b[0])
		r.b = r.b[1:]
	} else {
		n = r.countSlow()
	}
	p := r.b[:n]
	r.b = r.b[n:]
	if r.src != "" {
		off := len(r.src) - len(r.b) - n
		return r.src[off : off+n]
	}
	return string(p)
}

// OptStr reads an optstr.
func (r *Reader) OptStr() *string { return opt(r, (*Reader).Str) }

// Time reads a time, in UTC.
func (r *Reader) Time() time.Time {
	ms := r.Varint()
	if r.err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// OptTime reads an opttime.
func (r *Reader) OptTime() *time.Time { return opt(r, (*Reader).Time) }

// OptVarint reads an optint.
func (r *Reader) OptVarint() *int64 { return opt(r, (*Reader).Varint) }

// opt reads an optional field: nil when its presence byte is 0x00 or the
// read fails.
func opt[T any](r *Reader, read func(*Reader) T) *T {
	if !r.Bool() {
		return nil
	}
	v := read(r)
	if r.err != nil {
		return nil
	}
	return &v
}

// OptList reads an optlist.
func (r *Reader) OptList() []string {
	if !r.Bool() {
		return nil
	}
	l := make([]string, r.Count())
	for i := range l {
		l[i] = r.Str()
	}
	if r.err != nil {
		return nil
	}
	return l
}

// Data reads a data section: names as [Reader.Str] returns them, values
// copies. A count of 0, names out of order or repeated, or a value that is
// not JSON are malformed (the encoding is canonical).
func (r *Reader) Data() map[string]json.RawMessage {
	n := r.Count()
	if r.err != nil {
		return nil
	}
	if n == 0 {
		r.Fail("empty application fields")
		return nil
	}
	out := make(map[string]json.RawMessage, n)
	prev := ""
	for i := range n {
		name := r.Str()
		v := r.Bytes()
		switch {
		case r.err != nil:
			return nil
		case i > 0 && name <= prev:
			r.Fail("application fields out of order")
			return nil
		case !json.Valid(v):
			r.Fail("application field " + name + " is not JSON")
			return nil
		}
		out[name] = bytes.Clone(v)
		prev = name
	}
	return out
}

// Account reads the fields of the account layout into a (see the package
// documentation), with the reader's checks; what AppendAccount wrote reads
// back equal (nil and empty lists told apart).
func (r *Reader) Account(a *core.Account) {
	a.UserID = r.Str()
	a.Provider = r.Str()
	a.Type = core.AccountType(r.Str())
	a.ProviderAccountID = r.Str()
	a.AccessToken = r.OptStr()
	if r.Bool() {
		a.AuthorizationDetails = make([]core.AuthorizationDetail, r.Count())
		for i := range a.AuthorizationDetails {
			d := &a.AuthorizationDetails[i]
			d.Type = r.Str()
			d.Locations = r.OptList()
			d.Actions = r.OptList()
			d.Datatypes = r.OptList()
			d.Identifier = r.Str()
			d.Privileges = r.OptList()
		}
	}
	a.ExpiresAt = r.OptVarint()
	a.ExpiresIn = r.OptVarint()
	a.IDToken = r.OptStr()
	a.RefreshToken = r.OptStr()
	a.Scope = r.OptStr()
	a.TokenType = r.OptStr()
	a.SessionState = r.OptStr()
	if r.Len() > 0 {
		h := r.Str()
		a.PasswordHash = &h
	}
}

// Factor reads the fields of the factor layout into f (see the package
// documentation). A secret of no bytes reads as nil, a lastUsedAt of 0 as
// the zero time.
func (r *Reader) Factor(f *core.Factor) {
	f.UserID = r.Str()
	f.ID = r.Str()
	f.Type = core.FactorType(r.Str())
	f.Name = r.Str()
	if secret := r.Bytes(); len(secret) > 0 {
		f.Secret = bytes.Clone(secret)
	}
	f.Step = r.Varint()
	f.CreatedAt = r.Time()
	if ms := r.Varint(); ms != 0 {
		f.LastUsedAt = time.UnixMilli(ms).UTC()
	}
}
