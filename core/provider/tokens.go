package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
)

// TokenSet is what a token endpoint returns (the spec's TokenSet). A field
// the response did not carry is "" (strings) or nil (numbers and
// AuthorizationDetails). Members without a field of their own are kept in
// Extra.
//
// TokenSet decodes from and encodes to the token endpoint's JSON: expires_in
// and expires_at are accepted as numbers or numeric strings, and a scope
// given as a list of strings is joined with spaces.
type TokenSet struct {
	// AccessToken is the access token (access_token).
	AccessToken string
	// IDToken is the OpenID Connect ID token, a JWT (id_token).
	IDToken string
	// RefreshToken is the refresh token (refresh_token).
	RefreshToken string
	// ExpiresAt is the absolute time, in seconds since the Unix epoch, at
	// which AccessToken expires.
	ExpiresAt *int64
	// ExpiresIn is AccessToken's lifetime in seconds, as returned.
	ExpiresIn *int64
	// Scope is the granted scope, space-separated.
	Scope string
	// TokenType is the token type as returned (e.g. "Bearer"); accounts
	// keep it lowercased.
	TokenType string
	// SessionState is the OpenID Connect session state (session_state).
	SessionState string
	// AuthorizationDetails is the RFC 9396 authorization_details, or nil.
	AuthorizationDetails []core.AuthorizationDetail
	// Extra holds every other member of the response, by its JSON name.
	Extra map[string]any
}

// UnmarshalJSON decodes a token endpoint response.
func (t *TokenSet) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("token set: %w", err)
	}
	if m == nil {
		return errors.New("token set: not a JSON object")
	}
	var out TokenSet
	var errs []error
	str := func(name string, dst *string) {
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			return
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			errs = append(errs, fmt.Errorf("%s: want a string", name))
		}
	}
	num := func(name string) *int64 {
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			return nil
		}
		n, err := parseSeconds(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return nil
		}
		return &n
	}
	str("access_token", &out.AccessToken)
	str("id_token", &out.IDToken)
	str("refresh_token", &out.RefreshToken)
	str("token_type", &out.TokenType)
	str("session_state", &out.SessionState)
	out.ExpiresAt = num("expires_at")
	out.ExpiresIn = num("expires_in")
	if raw, ok := m["scope"]; ok && string(raw) != "null" {
		var s string
		var list []string
		if json.Unmarshal(raw, &s) == nil {
			out.Scope = s
		} else if json.Unmarshal(raw, &list) == nil {
			out.Scope = strings.Join(list, " ")
		} else {
			errs = append(errs, errors.New("scope: want a string or a list of strings"))
		}
	}
	if raw, ok := m["authorization_details"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out.AuthorizationDetails); err != nil {
			errs = append(errs, errors.New("authorization_details: want a list of objects"))
		}
	}
	for k, raw := range m {
		if isTokenField(k) {
			continue
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			continue
		}
		if out.Extra == nil {
			out.Extra = make(map[string]any)
		}
		out.Extra[k] = v
	}
	if len(errs) > 0 {
		return fmt.Errorf("token set: %w", errors.Join(errs...))
	}
	*t = out
	return nil
}

// MarshalJSON encodes t as a token endpoint response would carry it,
// leaving out absent fields. Extra members never replace a field of t.
func (t TokenSet) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(t.Extra)+9)
	for k, v := range t.Extra {
		if !isTokenField(k) {
			m[k] = v
		}
	}
	set := func(name, v string) {
		if v != "" {
			m[name] = v
		}
	}
	set("access_token", t.AccessToken)
	set("id_token", t.IDToken)
	set("refresh_token", t.RefreshToken)
	set("scope", t.Scope)
	set("token_type", t.TokenType)
	set("session_state", t.SessionState)
	if t.ExpiresAt != nil {
		m["expires_at"] = *t.ExpiresAt
	}
	if t.ExpiresIn != nil {
		m["expires_in"] = *t.ExpiresIn
	}
	if t.AuthorizationDetails != nil {
		m["authorization_details"] = t.AuthorizationDetails
	}
	return json.Marshal(m)
}

// isTokenField reports whether name is a member TokenSet has a field for.
func isTokenField(name string) bool {
	switch name {
	case "access_token", "id_token", "refresh_token", "expires_at", "expires_in",
		"scope", "token_type", "session_state", "authorization_details":
		return true
	}
	return false
}

// parseSeconds reads a whole number of seconds given as a JSON number or a
// numeric string.
func parseSeconds(raw json.RawMessage) (int64, error) {
	s := strings.TrimSpace(string(raw))
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, errors.New("want a number")
		}
		s = strings.TrimSpace(s)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, errors.New("want a number of seconds")
	}
	return int64(f), nil
}

// Clone returns a deep copy of t.
func (t TokenSet) Clone() TokenSet {
	if t.ExpiresAt != nil {
		v := *t.ExpiresAt
		t.ExpiresAt = &v
	}
	if t.ExpiresIn != nil {
		v := *t.ExpiresIn
		t.ExpiresIn = &v
	}
	if t.AuthorizationDetails != nil {
		ds := make([]core.AuthorizationDetail, len(t.AuthorizationDetails))
		for i, d := range t.AuthorizationDetails {
			d.Locations = cloneStrings(d.Locations)
			d.Actions = cloneStrings(d.Actions)
			d.Datatypes = cloneStrings(d.Datatypes)
			d.Privileges = cloneStrings(d.Privileges)
			ds[i] = d
		}
		t.AuthorizationDetails = ds
	}
	t.Extra = maps.Clone(t.Extra)
	return t
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}

// WithExpiresAt returns a copy of t whose ExpiresAt is now plus ExpiresIn
// when t has ExpiresIn but no ExpiresAt; otherwise an unchanged copy.
func (t TokenSet) WithExpiresAt(now time.Time) TokenSet {
	t = t.Clone()
	if t.ExpiresAt == nil && t.ExpiresIn != nil {
		at := now.Unix() + *t.ExpiresIn
		t.ExpiresAt = &at
	}
	return t
}

// AccountCallback receives the full [TokenSet] from the provider and
// returns the subset kept on the account (SPEC §2.4 account, §2.7). The
// fields it returns must be ones [core.Account] stores.
type AccountCallback func(tokens TokenSet) TokenSet

// DefaultAccount is the default [AccountCallback]. It keeps access_token,
// id_token, refresh_token, expires_at, scope, token_type and session_state,
// and lowercases token_type. Together with [TokenSet.WithExpiresAt], which
// [OAuthProvider.AccountTokens] applies first, it gives expires_at computed
// from expires_in.
func DefaultAccount(tokens TokenSet) TokenSet {
	t := tokens.Clone()
	return TokenSet{
		AccessToken:  t.AccessToken,
		IDToken:      t.IDToken,
		RefreshToken: t.RefreshToken,
		ExpiresAt:    t.ExpiresAt,
		Scope:        t.Scope,
		TokenType:    strings.ToLower(t.TokenType),
		SessionState: t.SessionState,
	}
}

// accountTokens is the account pipeline shared by every OAuth provider:
// expires_at from expires_in, then the callback (or DefaultAccount), then
// token_type lowercased.
func accountTokens(cb AccountCallback, tokens TokenSet, now time.Time) TokenSet {
	t := tokens.WithExpiresAt(now)
	if cb == nil {
		cb = DefaultAccount
	}
	out := cb(t).Clone()
	out.TokenType = strings.ToLower(out.TokenType)
	return out
}

// Account returns the [core.Account] that links the user userID to the
// provider providerID, of account type typ, under providerAccountID (the
// profile id), carrying the tokens of t. Empty strings of t become nil
// (absent); TokenType is lowercased. Extra is not kept: [core.Account] has
// no place for it.
func (t TokenSet) Account(userID, providerID string, typ core.AccountType, providerAccountID string) core.Account {
	t = t.Clone()
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return core.Account{
		UserID:               userID,
		Provider:             providerID,
		Type:                 typ,
		ProviderAccountID:    providerAccountID,
		AccessToken:          opt(t.AccessToken),
		AuthorizationDetails: t.AuthorizationDetails,
		ExpiresAt:            t.ExpiresAt,
		ExpiresIn:            t.ExpiresIn,
		IDToken:              opt(t.IDToken),
		RefreshToken:         opt(t.RefreshToken),
		Scope:                opt(t.Scope),
		TokenType:            opt(strings.ToLower(t.TokenType)),
		SessionState:         opt(t.SessionState),
	}
}
