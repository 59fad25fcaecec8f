package unstorage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// The JSON documents of @auth/unstorage-adapter: the records as Auth.js
// hands them over, through JSON.stringify (dates as ISO 8601 strings).

// uUserDoc is a user document. A user without an e-mail address has
// "email": null, as Auth.js writes a profile that gave none (it may also
// have no email field, or ""; all three read as none). The username, which
// Auth.js does not know, is present only when set (Better Auth's field
// name).
type uUserDoc struct {
	ID            string  `json:"id"`
	Email         *string `json:"email"`
	Username      string  `json:"username,omitempty"`
	EmailVerified *string `json:"emailVerified"`
	Name          *string `json:"name"`
	Image         *string `json:"image"`
}

type uAccountDoc struct {
	UserID               string                      `json:"userId"`
	Type                 core.AccountType            `json:"type"`
	Provider             string                      `json:"provider"`
	ProviderAccountID    string                      `json:"providerAccountId"`
	AccessToken          *string                     `json:"access_token,omitempty"`
	AuthorizationDetails *[]core.AuthorizationDetail `json:"authorization_details,omitempty"`
	ExpiresAt            *float64                    `json:"expires_at,omitempty"`
	ExpiresIn            *float64                    `json:"expires_in,omitempty"`
	IDToken              *string                     `json:"id_token,omitempty"`
	RefreshToken         *string                     `json:"refresh_token,omitempty"`
	Scope                *string                     `json:"scope,omitempty"`
	TokenType            *string                     `json:"token_type,omitempty"`
	SessionState         *string                     `json:"session_state,omitempty"`
	ID                   string                      `json:"id"`
	// Password is a password account's hash ([core.Account.PasswordHash]),
	// under Better Auth's name for it; absent on every other account.
	Password *string `json:"password,omitempty"`
}

// uSessionDoc is a session document: @auth/unstorage-adapter's three
// fields, then the session's metadata, each absent when unknown (Auth.js
// keeps fields it does not know through its updateSession, and hands them
// to the application with the session).
type uSessionDoc struct {
	SessionToken string `json:"sessionToken"`
	UserID       string `json:"userId"`
	Expires      string `json:"expires"`
	CreatedAt    string `json:"createdAt,omitempty"`
	UpdatedAt    string `json:"updatedAt,omitempty"`
	IPAddress    string `json:"ipAddress,omitempty"`
	UserAgent    string `json:"userAgent,omitempty"`
}

// sessionMetaFields are the session document's metadata fields, which an
// update rewrites whole (an unknown one is absent).
var sessionMetaFields = []string{"createdAt", "updatedAt", "ipAddress", "userAgent"}

type uTokenDoc struct {
	Identifier string `json:"identifier"`
	Token      string `json:"token"`
	Expires    string `json:"expires"`
}

type uAuthDoc struct {
	CredentialID         string  `json:"credentialID"`
	UserID               string  `json:"userId"`
	ProviderAccountID    string  `json:"providerAccountId"`
	CredentialPublicKey  string  `json:"credentialPublicKey"`
	Counter              float64 `json:"counter"`
	CredentialDeviceType string  `json:"credentialDeviceType"`
	CredentialBackedUp   bool    `json:"credentialBackedUp"`
	Transports           *string `json:"transports"`
}

// marshalJSON encodes v without Go's HTML escaping, as JSON.stringify would.
func marshalJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// object decodes a stored value as a JSON object. ok is false for a value
// that is not one (another kind's key, in this layout).
func object(s string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// stringField returns the string value of field f of m.
func stringField(m map[string]json.RawMessage, f string) (string, bool) {
	var s string
	if raw, ok := m[f]; !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// isUserField reports whether k is a standard field of a user document;
// every other top-level field is application data ([core.User.Data]).
func isUserField(k string) bool {
	switch k {
	case "id", "email", "username", "emailVerified", "name", "image":
		return true
	}
	return false
}

// encodeUUser encodes a user as Auth.js writes one, then its application
// fields as further top-level fields, in name order.
func encodeUUser(u *core.User) (string, error) {
	d := uUserDoc{ID: u.ID, Username: u.Username, Name: u.Name, Image: u.Image}
	if u.Email != "" {
		d.Email = &u.Email
	}
	if u.EmailVerified != nil {
		s := isoTime(*u.EmailVerified)
		d.EmailVerified = &s
	}
	doc, err := marshalJSON(d)
	if err != nil || len(u.Data) == 0 {
		return doc, err
	}
	var b bytes.Buffer
	b.WriteString(strings.TrimSuffix(doc, "}"))
	names := slices.Sorted(maps.Keys(u.Data))
	for _, name := range names {
		v := bytes.TrimSpace(u.Data[name])
		if len(v) == 0 || bytes.Equal(v, []byte("null")) {
			continue
		}
		k, _ := marshalJSON(name)
		b.WriteByte(',')
		b.WriteString(k)
		b.WriteByte(':')
		if err := json.Compact(&b, v); err != nil {
			return "", fmt.Errorf("application field %q: %w", name, err)
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}

// userData returns the application fields of a user document: the
// top-level fields other than the standard ones whose names
// [core.ValidDataName] accepts and whose values are not null.
func userData(m map[string]json.RawMessage) map[string]json.RawMessage {
	var data map[string]json.RawMessage
	for k, v := range m {
		if isUserField(k) || core.ValidDataName(k) != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			continue
		}
		if data == nil {
			data = map[string]json.RawMessage{}
		}
		data[k] = v
	}
	return data
}

// checkedDoc encodes v with encode if every check passed (nil); it
// returns the first failed check otherwise.
func checkedDoc[T any](v *T, encode func(*T) (string, error), checks ...error) (string, error) {
	for _, err := range checks {
		if err != nil {
			return "", err
		}
	}
	return encode(v)
}

// decodeDoc decodes the document s into a D if it is a JSON object whose
// string fields named in want (name, value pairs) hold those values, and
// returns its fields too; nil, nil, nil when it is not. what names the
// record in the error of a document that does not decode.
func decodeDoc[D any](s, what string, want ...string) (*D, map[string]json.RawMessage, error) {
	m, ok := object(s)
	if !ok {
		return nil, nil, nil
	}
	for i := 0; i+1 < len(want); i += 2 {
		if got, ok := stringField(m, want[i]); !ok || got != want[i+1] {
			return nil, nil, nil
		}
	}
	d := new(D)
	if err := json.Unmarshal([]byte(s), d); err != nil {
		return nil, nil, fmt.Errorf("%w: %s %q: %v", shared.ErrCorrupt, what, want, err)
	}
	return d, m, nil
}

// decodeUUser decodes a user document; nil, nil when s is not the user id.
func decodeUUser(s, id string) (*core.User, error) {
	d, m, err := decodeDoc[uUserDoc](s, "user", "id", id)
	if d == nil {
		return nil, err
	}
	u := &core.User{ID: d.ID, Username: d.Username, Name: d.Name, Image: d.Image, Data: userData(m)}
	if d.Email != nil {
		u.Email = *d.Email
	}
	if d.EmailVerified != nil {
		t, err := parseISOTime(*d.EmailVerified)
		if err != nil {
			return nil, err
		}
		u.EmailVerified = &t
	}
	return u, nil
}

func encodeUAccount(a *core.Account) (string, error) {
	d := uAccountDoc{
		UserID: a.UserID, Type: a.Type, Provider: a.Provider, ProviderAccountID: a.ProviderAccountID,
		AccessToken: a.AccessToken, IDToken: a.IDToken, RefreshToken: a.RefreshToken, Scope: a.Scope,
		TokenType: a.TokenType, SessionState: a.SessionState,
		ID: a.Provider + ":" + a.ProviderAccountID, Password: a.PasswordHash,
	}
	if a.AuthorizationDetails != nil {
		d.AuthorizationDetails = &a.AuthorizationDetails
	}
	if a.ExpiresAt != nil {
		f := float64(*a.ExpiresAt)
		d.ExpiresAt = &f
	}
	if a.ExpiresIn != nil {
		f := float64(*a.ExpiresIn)
		d.ExpiresIn = &f
	}
	return marshalJSON(d)
}

// decodeUAccount decodes an account document as stored (token_type as
// written); nil, nil when s is not the account (provider,
// providerAccountId).
func decodeUAccount(s, provider, paid string) (*core.Account, error) {
	d, _, err := decodeDoc[uAccountDoc](s, "account", "provider", provider, "providerAccountId", paid)
	if d == nil {
		return nil, err
	}
	a := &core.Account{
		UserID: d.UserID, Type: d.Type, Provider: d.Provider, ProviderAccountID: d.ProviderAccountID,
		AccessToken: d.AccessToken, IDToken: d.IDToken, RefreshToken: d.RefreshToken, Scope: d.Scope,
		TokenType: d.TokenType, SessionState: d.SessionState, PasswordHash: d.Password,
	}
	if d.AuthorizationDetails != nil {
		a.AuthorizationDetails = *d.AuthorizationDetails
	}
	if a.ExpiresAt, err = wholeSeconds(d.ExpiresAt); err != nil {
		return nil, err
	}
	if a.ExpiresIn, err = wholeSeconds(d.ExpiresIn); err != nil {
		return nil, err
	}
	return a, nil
}

// wholeSeconds converts a JSON number of seconds to an int64.
func wholeSeconds(f *float64) (*int64, error) {
	if f == nil {
		return nil, nil
	}
	if *f != math.Trunc(*f) || math.Abs(*f) > 1<<53 {
		return nil, fmt.Errorf("%w: %v is not a whole number of seconds", shared.ErrCorrupt, *f)
	}
	n := int64(*f)
	return &n, nil
}

func encodeUSession(s *core.Session) (string, error) {
	return marshalJSON(uSessionDoc{SessionToken: s.SessionToken, UserID: s.UserID, Expires: isoTime(s.Expires),
		CreatedAt: optISOTime(s.CreatedAt), UpdatedAt: optISOTime(s.UpdatedAt), IPAddress: s.IPAddress, UserAgent: s.UserAgent})
}

// optISOTime is isoTime of a metadata time, "" for the zero time (unknown).
func optISOTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return isoTime(t)
}

// parseOptISOTime is parseISOTime of a metadata time: "" is the zero time.
func parseOptISOTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseISOTime(s)
}

// decodeUSession decodes a session document; nil, nil when s is not the
// session token's.
func decodeUSession(s, token string) (*core.Session, error) {
	return sessionOfDoc(decodeDoc[uSessionDoc](s, "session", "sessionToken", token))
}

// sessionOfDoc returns the session of a decoded session document (see
// decodeDoc); nil, nil for none.
func sessionOfDoc(d *uSessionDoc, _ map[string]json.RawMessage, err error) (*core.Session, error) {
	if d == nil {
		return nil, err
	}
	exp, err := parseISOTime(d.Expires)
	if err != nil {
		return nil, err
	}
	s := &core.Session{SessionToken: d.SessionToken, UserID: d.UserID, Expires: exp, IPAddress: d.IPAddress, UserAgent: d.UserAgent}
	if s.CreatedAt, err = parseOptISOTime(d.CreatedAt); err != nil {
		return nil, err
	}
	if s.UpdatedAt, err = parseOptISOTime(d.UpdatedAt); err != nil {
		return nil, err
	}
	return s, nil
}

func encodeUToken(t *core.VerificationToken) (string, error) {
	return marshalJSON(uTokenDoc{Identifier: t.Identifier, Token: t.Token, Expires: isoTime(t.Expires)})
}

func decodeUToken(s string) (*core.VerificationToken, error) {
	var d uTokenDoc
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return nil, fmt.Errorf("%w: verification token: %v", shared.ErrCorrupt, err)
	}
	exp, err := parseISOTime(d.Expires)
	if err != nil {
		return nil, err
	}
	return &core.VerificationToken{Identifier: d.Identifier, Token: d.Token, Expires: exp}, nil
}

func encodeUAuth(a *core.Authenticator) (string, error) {
	return marshalJSON(uAuthDoc{
		CredentialID: a.CredentialID, UserID: a.UserID, ProviderAccountID: a.ProviderAccountID,
		CredentialPublicKey: a.CredentialPublicKey, Counter: float64(a.Counter),
		CredentialDeviceType: a.CredentialDeviceType, CredentialBackedUp: a.CredentialBackedUp,
		Transports: a.Transports,
	})
}

// decodeUAuth decodes an authenticator document; nil, nil when s is not
// the credential's.
func decodeUAuth(s, cred string) (*core.Authenticator, error) {
	d, _, err := decodeDoc[uAuthDoc](s, "authenticator", "credentialID", cred)
	if d == nil {
		return nil, err
	}
	n, err := wholeSeconds(&d.Counter)
	if err != nil || *n < 0 {
		return nil, fmt.Errorf("%w: authenticator %q: counter %v", shared.ErrCorrupt, cred, d.Counter)
	}
	return &core.Authenticator{
		CredentialID: d.CredentialID, UserID: d.UserID, ProviderAccountID: d.ProviderAccountID,
		CredentialPublicKey: d.CredentialPublicKey, Counter: *n,
		CredentialDeviceType: d.CredentialDeviceType, CredentialBackedUp: d.CredentialBackedUp,
		Transports: d.Transports,
	}, nil
}

// maxSafeCounter is the largest counter a JSON number (a JavaScript
// double) holds exactly.
const maxSafeCounter = 1<<53 - 1
