// Package recordcodec holds the binary record primitives used by the bbolt
// and Redis adapters, usable by other key-value adapters: writers that
// append a field to a byte slice and a [Reader] that reads them back with
// strict checks. It depends only on the standard library and package core.
//
// # Format
//
// A record is a sequence of fields with no framing of its own (an adapter
// usually starts it with a version byte); each field is one of:
//
//	uvarint  unsigned LEB128 (encoding/binary's Uvarint), minimal: the last
//	         byte of a varint longer than one byte is not 0x00
//	varint   a signed integer as a zig-zag uvarint (encoding/binary's
//	         Varint), minimal
//	str      uvarint byte length, then the bytes (any bytes)
//	optstr   0x00 (null) | 0x01 str
//	time     varint of Unix milliseconds
//	opttime  0x00 (null) | 0x01 time
//	optint   0x00 (null) | 0x01 varint
//	bool     0x00 (false) | 0x01 (true); any other byte is malformed
//	optlist  0x00 (null) | 0x01 uvarint count, then count × str
//	data     uvarint count ≥ 1, then count × (str name, str JSON value),
//	         names in ascending byte order, each once (a record without
//	         application fields omits the section)
//
// Because varints must be minimal and flags are 0 or 1, every value has
// exactly one encoding. A [Reader] fails, with an error matching
// errMalformed, on a truncated field, a non-minimal or overflowing
// varint, a length or count beyond the bytes left, a flag byte other than
// 0 or 1, and (at [Reader.End]) trailing bytes. It never panics.
//
// The account layout both adapters store ([AppendAccount],
// [Reader.Account]) is, after the adapter's version byte: userId str,
// provider str, type str, providerAccountId str, access_token optstr,
// authorization_details (0x00 | 0x01 uvarint count, then count × (type
// str, locations optlist, actions optlist, datatypes optlist, identifier
// str, privileges optlist)), expires_at optint, expires_in optint,
// id_token optstr, refresh_token optstr, scope optstr, token_type optstr,
// session_state optstr, then password_hash str only when the account has
// one (the last field, so that accounts written before it read back
// without one, and an account without one is encoded as before).
package recordcodec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/authport/authport/core"
)

// The factor layout ([AppendFactor], [Reader.Factor]) is: userId str, id
// str, type str, name str, secret str (its bytes), step varint, createdAt
// time, lastUsedAt time (0 for never).
//
// errMalformed is matched (with errors.Is) by every error of a [Reader].
var errMalformed = errors.New("malformed record")

// The failures of the reads that run inline, made once.
var (
	errTruncated = fmt.Errorf("%w: truncated", errMalformed)
	errBadFlag   = fmt.Errorf("%w: truncated or bad flag byte", errMalformed)
)

// AppendUvarint appends v as a uvarint (a length or a count).
func AppendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendVarint appends v as a zig-zag varint.
func AppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendStr appends s as a str: its length, then its bytes.
func AppendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendStrs appends each of ss as a str, in order (not a list: no
// count).
func AppendStrs(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = AppendStr(b, s)
	}
	return b
}

// AppendBool appends v as one byte, 0x01 for true.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendOptStr appends s as an optstr: 0x00 for nil.
func AppendOptStr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return AppendStr(append(b, 1), *s)
}

// AppendTime appends t's Unix milliseconds as a varint.
func AppendTime(b []byte, t time.Time) []byte { return binary.AppendVarint(b, t.UnixMilli()) }

// AppendOptTime appends t as an opttime: 0x00 for nil.
func AppendOptTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, 0)
	}
	return AppendTime(append(b, 1), *t)
}

// AppendOptVarint appends v as an optint: 0x00 for nil.
func AppendOptVarint(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), *v)
}

// AppendOptList appends l as an optlist: 0x00 for nil, an empty list is
// 0x01 0x00.
func AppendOptList(b []byte, l []string) []byte {
	if l == nil {
		return append(b, 0)
	}
	return AppendStrs(binary.AppendUvarint(append(b, 1), uint64(len(l))), l...)
}

// AppendData appends the application fields as a data section, sorted by
// name; nothing when there are none.
func AppendData(b []byte, data map[string]json.RawMessage) []byte {
	if len(data) == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(len(data)))
	for _, name := range slices.Sorted(maps.Keys(data)) {
		b = AppendStr(b, name)
		b = AppendStr(b, string(data[name]))
	}
	return b
}

// AppendAccount appends the fields of the account layout (see the package
// documentation), without a version byte.
func AppendAccount(b []byte, a *core.Account) []byte {
	// The user id first, so that a reader can stop after it.
	b = AppendStrs(b, a.UserID, a.Provider, string(a.Type), a.ProviderAccountID)
	b = AppendOptStr(b, a.AccessToken)
	if a.AuthorizationDetails == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(append(b, 1), uint64(len(a.AuthorizationDetails)))
		for _, d := range a.AuthorizationDetails {
			b = AppendStr(b, d.Type)
			for _, l := range [...][]string{d.Locations, d.Actions, d.Datatypes} {
				b = AppendOptList(b, l)
			}
			b = AppendStr(b, d.Identifier)
			b = AppendOptList(b, d.Privileges)
		}
	}
	b = AppendOptVarint(b, a.ExpiresAt)
	b = AppendOptVarint(b, a.ExpiresIn)
	for _, p := range [...]*string{a.IDToken, a.RefreshToken, a.Scope, a.TokenType, a.SessionState} {
		b = AppendOptStr(b, p)
	}
	if a.PasswordHash != nil {
		b = AppendStr(b, *a.PasswordHash)
	}
	return b
}

// AppendFactor appends the fields of the factor layout (see the package
// documentation), without a version byte.
func AppendFactor(b []byte, f *core.Factor) []byte {
	b = AppendStrs(b, f.UserID, f.ID, string(f.Type), f.Name)
	b = binary.AppendUvarint(b, uint64(len(f.Secret)))
	b = append(b, f.Secret...)
	b = binary.AppendVarint(b, f.Step)
	b = AppendTime(b, f.CreatedAt)
	if f.LastUsedAt.IsZero() {
		return binary.AppendVarint(b, 0)
	}
	return AppendTime(b, f.LastUsedAt)
}
