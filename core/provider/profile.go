package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/authport/authport/core"
)

// User is what a profile callback returns (SPEC §2.4 profile, §2.7
// ProfileCallback): the subset of the provider's profile used to create the
// user and link the account.
type User struct {
	// ID is the provider's id for the user. It becomes the account's
	// ProviderAccountID; it is not the user's id in the database, which the
	// library assigns. It must not be empty.
	ID string
	// Email is the user's e-mail address, or "" when the provider gave none.
	Email string
	// Name is the user's display name, or nil.
	Name *string
	// Image is the URL of the user's picture, or nil.
	Image *string
	// EmailVerified is what the provider says of Email: true when it has
	// verified the address, false when it says it has not, nil when it says
	// nothing. When a Profile callback leaves it nil, it is taken from the
	// profile's "email_verified" claim (true, false, "true" or "false"),
	// provided the profile's "email" is Email. core/auth does not let an
	// address the provider calls unverified claim a user (see
	// auth.Config.AllowDangerousUnverifiedEmail).
	EmailVerified *bool
}

// CoreUser returns the [core.User] to create for u, under the id the
// library assigned. EmailVerified is nil: only an e-mail sign-in sets it.
func (u User) CoreUser(id string) core.User {
	return core.User{ID: id, Email: u.Email, Name: cloneStr(u.Name), Image: cloneStr(u.Image)}
}

func cloneStr(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	return &v
}

// str returns a pointer to s, or nil when s is "".
func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ProfileCallback maps the provider's profile P, and the tokens, to the
// [User] that is created and linked (SPEC §2.7). It may do I/O, bounded by
// ctx.
type ProfileCallback[P any] func(ctx context.Context, profile P, tokens TokenSet) (User, error)

// errProfileID is returned, wrapped, when a profile maps to a [User]
// without an id: an account cannot be linked to it.
var errProfileID = fmt.Errorf("profile has no id: %w", core.ErrInvalidInput)

// DefaultProfile is the default profile mapping, for a profile held as a
// JSON object (SPEC §2.4 profile: id, email, name, image). It takes
//
//   - id from sub, else id (a number is written in decimal);
//   - name from name, else nickname, else preferred_username;
//   - email from email;
//   - image from picture, else image.
//
// It returns an error matching [core.ErrInvalidInput] when neither sub nor id is
// there.
func DefaultProfile(_ context.Context, profile map[string]any, _ TokenSet) (User, error) {
	u := User{
		ID:    firstString(profile, "sub", "id"),
		Email: firstString(profile, "email"),
		Name:  str(firstString(profile, "name", "nickname", "preferred_username")),
		Image: str(firstString(profile, "picture", "image")),
	}
	if u.ID == "" {
		return User{}, fmt.Errorf("default profile: %w (no sub or id)", errProfileID)
	}
	return u, nil
}

// firstString returns the first of the keys present in m as a non-empty
// string or number.
func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case json.Number:
			return v.String()
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		case int:
			return strconv.Itoa(v)
		case int64:
			return strconv.FormatInt(v, 10)
		}
	}
	return ""
}

// profileUser maps a typed profile with cb, or with [DefaultProfile] (via
// the profile's JSON form) when cb is nil, and checks the result has an id.
func profileUser[P any](ctx context.Context, cb ProfileCallback[P], profile P, tokens TokenSet) (User, error) {
	var u User
	var err error
	if cb != nil {
		u, err = cb(ctx, profile, tokens)
	} else {
		var m map[string]any
		m, err = toMap(profile)
		if err == nil {
			u, err = DefaultProfile(ctx, m, tokens)
		}
	}
	if err != nil {
		return User{}, err
	}
	if strings.TrimSpace(u.ID) == "" {
		return User{}, fmt.Errorf("profile callback: %w", errProfileID)
	}
	if m, ok := any(profile).(map[string]any); ok {
		withEmailVerified(&u, m)
	}
	return u, nil
}

// withEmailVerified sets u.EmailVerified, when the Profile callback left it
// nil, from the "email_verified" claim of the profile as the provider sent
// it (m: its JSON object), provided the profile's "email" is u.Email. A
// typed profile cannot tell a missing claim from false, so the claim is
// read from the provider's JSON, not from the typed value.
func withEmailVerified(u *User, m map[string]any) {
	if u.EmailVerified == nil && u.Email != "" {
		u.EmailVerified = emailVerifiedClaim(m, u.Email)
	}
}

// emailVerifiedClaim returns the profile's "email_verified" claim when the
// profile's "email" is email (a JSON boolean, or a string "true"/"false" as
// Apple sends it), else nil.
func emailVerifiedClaim(m map[string]any, email string) *bool {
	if firstString(m, "email") != email {
		return nil
	}
	var v bool
	switch c := m["email_verified"].(type) {
	case bool:
		v = c
	case string:
		switch strings.ToLower(strings.TrimSpace(c)) {
		case "true":
			v = true
		case "false":
			v = false
		default:
			return nil
		}
	default:
		return nil
	}
	return &v
}

func toMap(v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return decodeObject(raw)
}

func decodeObject(raw []byte) (map[string]any, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if m == nil {
		return nil, errors.New("profile: not a JSON object")
	}
	return m, nil
}

// decodeProfile decodes a profile JSON object into P. For map[string]any,
// numbers are kept as [json.Number] so large ids keep every digit.
func decodeProfile[P any](raw []byte) (P, error) {
	var p P
	if m, ok := any(&p).(*map[string]any); ok {
		obj, err := decodeObject(raw)
		if err != nil {
			return p, err
		}
		*m = obj
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("profile: %w", err)
	}
	return p, nil
}
