package redisadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
	rc "github.com/authport/authport/core/recordcodec"
)

// Records other than users are stored in the binary record encoding of
// package recordcodec (length-prefixed strings, a presence byte before
// every nullable field, minimal varints), so that any byte string
// survives, null and "" stay distinct (JSON would mangle invalid UTF-8, gob
// would lose pointers to zero values) and every record has exactly one
// encoding. Each starts with the version byte codecVersion.

const codecVersion = 1

// codecReader returns a reader of the record s, whose strings are
// substrings of s, after its version byte; false for another version.
func codecReader(s string) (rc.Reader, bool) {
	r := rc.NewStringReader(s)
	return r, r.Byte() == codecVersion
}

// corrupt returns the reader's failure as an error matching
// shared.ErrCorrupt, or nil.
func corrupt(r *rc.Reader) error {
	if err := r.End(); err != nil {
		return fmt.Errorf("%w: %w", shared.ErrCorrupt, err)
	}
	return nil
}

// encodeAccount encodes a (normalized) account: recordcodec's account
// layout after the version byte.
func encodeAccount(a *core.Account) string {
	return string(rc.AppendAccount(append(make([]byte, 0, 128), codecVersion), a))
}

func decodeAccount(s string) (*core.Account, error) {
	r, ok := codecReader(s)
	if !ok {
		return nil, shared.ErrCorrupt
	}
	a := &core.Account{}
	r.Account(a)
	if err := corrupt(&r); err != nil {
		return nil, err
	}
	return a, nil
}

// encodeAuthenticator encodes an authenticator as "<counter> <rest>": the
// counter leads in decimal so that updateAuthenticatorCounter can replace
// it inside a script without decoding the rest.
func encodeAuthenticator(a *core.Authenticator) string {
	b := make([]byte, 0, 128)
	b = strconv.AppendInt(b, a.Counter, 10)
	b = append(b, ' ', codecVersion)
	b = rc.AppendBool(rc.AppendStrs(b, a.CredentialID, a.CredentialPublicKey), a.CredentialBackedUp)
	b = rc.AppendStrs(b, a.CredentialDeviceType, a.ProviderAccountID, a.UserID)
	return string(rc.AppendOptStr(b, a.Transports))
}

func decodeAuthenticator(s string) (*core.Authenticator, error) {
	num, rest, ok := strings.Cut(s, " ")
	if !ok {
		return nil, shared.ErrCorrupt
	}
	counter, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return nil, shared.ErrCorrupt
	}
	r, ok := codecReader(rest)
	if !ok {
		return nil, shared.ErrCorrupt
	}
	a := &core.Authenticator{Counter: counter, CredentialID: r.Str(), CredentialPublicKey: r.Str(),
		CredentialBackedUp: r.Bool(), CredentialDeviceType: r.Str(), ProviderAccountID: r.Str(), UserID: r.Str(),
		Transports: r.OptStr()}
	if err := corrupt(&r); err != nil {
		return nil, err
	}
	return a, nil
}

// User hash fields. A nullable field that is null is absent from the hash.
const (
	fID            = "id"
	fEmail         = "email"         // absent for a user without one
	fUsername      = "username"      // absent for a user without one
	fEmailVerified = "emailVerified" // milliseconds since the Unix epoch
	fName          = "name"
	fImage         = "image"
	// fDataPrefix + name is the field of application field name
	// ([core.User.Data]), holding its JSON value.
	fDataPrefix = "data:"
)

// dataValue returns the stored form of an application field's value (its
// compact JSON), and false for a value that removes the field (none or
// JSON null).
func dataValue(v json.RawMessage) (string, bool) {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil || b.Len() == 0 || b.String() == "null" {
		return "", false
	}
	return b.String(), true
}

// uniqueFields are the user fields each value of which has an index key
// (<p><field>:{<value>}) naming its one user: the e-mail address and the
// username. A user without one ("") has neither the field nor an index
// key for it.
func uniqueFields() [2]string { return [2]string{fEmail, fUsername} }

// uniqueValue returns u's value of the unique field f ("" for none).
func uniqueValue(u *core.User, f string) string {
	if f == fUsername {
		return u.Username
	}
	return u.Email
}

// userFields returns the HSET field/value pairs of a normalized user.
func userFields(u *core.User) []any {
	f := make([]any, 0, 12)
	f = append(f, fID, u.ID)
	for _, uf := range uniqueFields() {
		if v := uniqueValue(u, uf); v != "" {
			f = append(f, uf, v)
		}
	}
	if u.EmailVerified != nil {
		f = append(f, fEmailVerified, strconv.FormatInt(u.EmailVerified.UnixMilli(), 10))
	}
	if u.Name != nil {
		f = append(f, fName, *u.Name)
	}
	if u.Image != nil {
		f = append(f, fImage, *u.Image)
	}
	for _, name := range slices.Sorted(maps.Keys(u.Data)) {
		if v, ok := dataValue(u.Data[name]); ok {
			f = append(f, fDataPrefix+name, v)
		}
	}
	return f
}

// decodeUserPairs decodes the flat field/value list HGETALL returns inside a
// script. It returns nil, nil for an empty list (no such user).
func decodeUserPairs(v any) (*core.User, error) {
	u := &core.User{}
	ok, err := decodeUserPairsInto(u, v)
	if err != nil || !ok {
		return nil, err
	}
	return u, nil
}

// decodeUserPairsInto is decodeUserPairs into *u; it reports false for an
// empty list.
func decodeUserPairsInto(u *core.User, v any) (bool, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return false, shared.ErrCorrupt
	}
	if len(list) == 0 {
		return false, nil
	}
	var hasID bool
	for i := 0; i < len(list); i += 2 {
		k, ok1 := list[i].(string)
		val, ok2 := list[i+1].(string)
		if !ok1 || !ok2 {
			return false, shared.ErrCorrupt
		}
		if err := setUserField(u, k, val, &hasID); err != nil {
			return false, err
		}
	}
	if !hasID {
		return false, shared.ErrCorrupt
	}
	return true, nil
}

// setUserField sets the field k of a user hash on u; hasID records that
// the id was set (every user hash has it; the other fields are optional).
func setUserField(u *core.User, k, v string, hasID *bool) error {
	switch k {
	case fID:
		u.ID, *hasID = v, true
	case fEmail:
		u.Email = v
	case fUsername:
		u.Username = v
	case fEmailVerified:
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return shared.ErrCorrupt
		}
		t := shared.MsTime(ms)
		u.EmailVerified = &t
	case fName:
		u.Name = &v
	case fImage:
		u.Image = &v
	default:
		if name, ok := strings.CutPrefix(k, fDataPrefix); ok && core.ValidDataName(name) == nil && json.Valid([]byte(v)) {
			if u.Data == nil {
				u.Data = map[string]json.RawMessage{}
			}
			u.Data[name] = json.RawMessage(v)
		}
	}
	return nil
}

// decodeUserMap decodes a user hash. It returns nil, nil for an empty map.
func decodeUserMap(m map[string]string) (*core.User, error) {
	if len(m) == 0 {
		return nil, nil
	}
	u := &core.User{}
	var hasID bool
	for k, v := range m {
		if err := setUserField(u, k, v, &hasID); err != nil {
			return nil, err
		}
	}
	if !hasID {
		return nil, shared.ErrCorrupt
	}
	return u, nil
}

// encodeSessionMeta encodes a (normalized) session's metadata as
// "<updatedAt> <rest>": UpdatedAt leads in decimal milliseconds ("" when
// unknown) so that an extension's script replaces it without decoding the
// rest; the rest is the version byte, CreatedAt (optional) and the IP
// address and user agent.
func encodeSessionMeta(s *core.Session) string {
	b := make([]byte, 0, 32+len(s.IPAddress)+len(s.UserAgent))
	b = append(metaTime(b, s.UpdatedAt), ' ', codecVersion)
	var created *time.Time
	if !s.CreatedAt.IsZero() {
		created = &s.CreatedAt
	}
	return string(rc.AppendStrs(rc.AppendOptTime(b, created), s.IPAddress, s.UserAgent))
}

// metaTime appends a metadata time in decimal milliseconds, nothing for
// the zero time (unknown).
func metaTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return strconv.AppendInt(b, t.UnixMilli(), 10)
}

// decodeSessionMeta decodes what encodeSessionMeta wrote into s's
// metadata fields.
func decodeSessionMeta(v string, s *core.Session) error {
	head, rest, ok := strings.Cut(v, " ")
	if !ok {
		return shared.ErrCorrupt
	}
	s.UpdatedAt = time.Time{}
	if head != "" {
		ms, err := strconv.ParseInt(head, 10, 64)
		if err != nil || ms < -shared.MaxMillis || ms > shared.MaxMillis || strconv.FormatInt(ms, 10) != head {
			return shared.ErrCorrupt
		}
		s.UpdatedAt = shared.MsTime(ms)
	}
	r, ok := codecReader(rest)
	if !ok {
		return shared.ErrCorrupt
	}
	s.CreatedAt = time.Time{}
	if c := r.OptTime(); c != nil {
		s.CreatedAt = *c
	}
	s.IPAddress, s.UserAgent = r.Str(), r.Str()
	return corrupt(&r)
}
