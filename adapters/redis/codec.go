package redisadapter

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// Records other than users are stored in a small binary-safe encoding:
// length-prefixed strings, with a presence byte before every nullable
// field, so that any byte string survives and null and "" stay distinct
// (JSON would mangle invalid UTF-8, gob would lose pointers to zero values).
// Varints must be minimal, so that every record has exactly one encoding.

const codecVersion = 1

type writer struct{ b []byte }

func (w *writer) str(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) optStr(s *string) {
	if s == nil {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.str(*s)
}

func (w *writer) optInt(v *int64) {
	if v == nil {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.b = binary.AppendVarint(w.b, *v)
}

func (w *writer) boolean(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *writer) strs(ss []string) {
	if ss == nil {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.b = binary.AppendUvarint(w.b, uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() { r.err = shared.ErrCorrupt; r.b = nil }

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) { // overflow, truncated or not minimal
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) present() bool {
	switch r.byte1() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail()
	return false
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) optStr() *string {
	if !r.present() {
		return nil
	}
	s := r.str()
	if r.err != nil {
		return nil
	}
	return &s
}

func (r *reader) optInt() *int64 {
	if !r.present() {
		return nil
	}
	if r.err != nil {
		return nil
	}
	v, n := binary.Varint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) { // overflow, truncated or not minimal
		r.fail()
		return nil
	}
	r.b = r.b[n:]
	return &v
}

func (r *reader) strs() []string {
	if !r.present() {
		return nil
	}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) { // every string takes at least one byte
		r.fail()
		return nil
	}
	ss := make([]string, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		ss = append(ss, r.str())
	}
	return ss
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = shared.ErrCorrupt
	}
	return r.err
}

// encodeAccount encodes a (normalized) account.
func encodeAccount(a *core.Account) string {
	w := writer{b: make([]byte, 0, 128)}
	w.b = append(w.b, codecVersion)
	w.str(a.UserID)
	w.str(a.Provider)
	w.str(string(a.Type))
	w.str(a.ProviderAccountID)
	w.optStr(a.AccessToken)
	if a.AuthorizationDetails == nil {
		w.b = append(w.b, 0)
	} else {
		w.b = append(w.b, 1)
		w.b = binary.AppendUvarint(w.b, uint64(len(a.AuthorizationDetails)))
		for _, d := range a.AuthorizationDetails {
			w.str(d.Type)
			w.strs(d.Locations)
			w.strs(d.Actions)
			w.strs(d.Datatypes)
			w.str(d.Identifier)
			w.strs(d.Privileges)
		}
	}
	w.optInt(a.ExpiresAt)
	w.optInt(a.ExpiresIn)
	w.optStr(a.IDToken)
	w.optStr(a.RefreshToken)
	w.optStr(a.Scope)
	w.optStr(a.TokenType)
	w.optStr(a.SessionState)
	return string(w.b)
}

func decodeAccount(s string) (*core.Account, error) {
	r := reader{b: []byte(s)}
	if r.byte1() != codecVersion {
		return nil, shared.ErrCorrupt
	}
	a := &core.Account{}
	a.UserID = r.str()
	a.Provider = r.str()
	a.Type = core.AccountType(r.str())
	a.ProviderAccountID = r.str()
	a.AccessToken = r.optStr()
	if r.present() {
		n := r.uvarint()
		if n > uint64(len(r.b)) {
			r.fail()
		} else {
			a.AuthorizationDetails = make([]core.AuthorizationDetail, 0, n)
			for i := uint64(0); i < n && r.err == nil; i++ {
				var d core.AuthorizationDetail
				d.Type = r.str()
				d.Locations = r.strs()
				d.Actions = r.strs()
				d.Datatypes = r.strs()
				d.Identifier = r.str()
				d.Privileges = r.strs()
				a.AuthorizationDetails = append(a.AuthorizationDetails, d)
			}
		}
	}
	a.ExpiresAt = r.optInt()
	a.ExpiresIn = r.optInt()
	a.IDToken = r.optStr()
	a.RefreshToken = r.optStr()
	a.Scope = r.optStr()
	a.TokenType = r.optStr()
	a.SessionState = r.optStr()
	if err := r.done(); err != nil {
		return nil, err
	}
	return a, nil
}

// encodeAuthenticator encodes an authenticator as "<counter> <rest>": the
// counter leads in decimal so that updateAuthenticatorCounter can replace
// it inside a script without decoding the rest.
func encodeAuthenticator(a *core.Authenticator) string {
	w := writer{b: make([]byte, 0, 128)}
	w.b = strconv.AppendInt(w.b, a.Counter, 10)
	w.b = append(w.b, ' ', codecVersion)
	w.str(a.CredentialID)
	w.str(a.CredentialPublicKey)
	w.boolean(a.CredentialBackedUp)
	w.str(a.CredentialDeviceType)
	w.str(a.ProviderAccountID)
	w.str(a.UserID)
	w.optStr(a.Transports)
	return string(w.b)
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
	r := reader{b: []byte(rest)}
	if r.byte1() != codecVersion {
		return nil, shared.ErrCorrupt
	}
	a := &core.Authenticator{Counter: counter}
	a.CredentialID = r.str()
	a.CredentialPublicKey = r.str()
	a.CredentialBackedUp = r.present()
	a.CredentialDeviceType = r.str()
	a.ProviderAccountID = r.str()
	a.UserID = r.str()
	a.Transports = r.optStr()
	if err := r.done(); err != nil {
		return nil, err
	}
	return a, nil
}

// User hash fields. A nullable field that is null is absent from the hash.
const (
	fID            = "id"
	fEmail         = "email"
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

// userFields returns the HSET field/value pairs of a normalized user.
func userFields(u *core.User) []any {
	f := make([]any, 0, 10)
	f = append(f, fID, u.ID, fEmail, u.Email)
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
	var hasID, hasEmail bool
	for i := 0; i < len(list); i += 2 {
		k, ok1 := list[i].(string)
		val, ok2 := list[i+1].(string)
		if !ok1 || !ok2 {
			return false, shared.ErrCorrupt
		}
		if err := setUserField(u, k, val, &hasID, &hasEmail); err != nil {
			return false, err
		}
	}
	if !hasID || !hasEmail {
		return false, shared.ErrCorrupt
	}
	return true, nil
}

func setUserField(u *core.User, k, v string, hasID, hasEmail *bool) error {
	switch k {
	case fID:
		u.ID, *hasID = v, true
	case fEmail:
		u.Email, *hasEmail = v, true
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
	var hasID, hasEmail bool
	for k, v := range m {
		if err := setUserField(u, k, v, &hasID, &hasEmail); err != nil {
			return nil, err
		}
	}
	if !hasID || !hasEmail {
		return nil, shared.ErrCorrupt
	}
	return u, nil
}
