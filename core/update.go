package core

import (
	"encoding/json"
	"time"
)

// Field is one field of a partial update: it is left alone unless Set is true.
// For a nullable field (a pointer type) Set with a nil Value sets it to null.
//
// The zero Field is "not given". Build given fields with [Set] and [Null].
type Field[T any] struct {
	Value T
	Set   bool
}

// Set returns a Field that sets the value v.
func Set[T any](v T) Field[T] { return Field[T]{Value: v, Set: true} }

// Null returns a Field that sets a nullable field to null.
func Null[T any]() Field[*T] { return Field[*T]{Set: true} }

// Apply stores f's value into *dst when f is set.
func (f Field[T]) Apply(dst *T) {
	if f.Set {
		*dst = f.Value
	}
}

// UserUpdate is the Partial<AdapterUser> that UpdateUser takes: ID names the
// user, and only the fields that are Set change.
type UserUpdate struct {
	ID string
	// Email sets the e-mail address; "" removes it (the user keeps no
	// address, and the old one is free for another user).
	Email         Field[string]
	EmailVerified Field[*time.Time]
	// Username sets the username, normalised ([NormalizeUsername]); ""
	// removes it. Only adapters that keep usernames accept it.
	Username Field[string]
	Name     Field[*string]
	Image    Field[*string]
	// Data changes the application fields named in it and leaves the
	// others as stored: a JSON value sets the field, nil (or JSON null)
	// removes it.
	Data map[string]json.RawMessage
}

// Apply returns u with the update's set fields applied, times normalised as
// adapters store them. It does not change u.
func (up UserUpdate) Apply(u User) User {
	up.Email.Apply(&u.Email)
	up.Username.Apply(&u.Username)
	up.EmailVerified.Apply(&u.EmailVerified)
	up.Name.Apply(&u.Name)
	up.Image.Apply(&u.Image)
	u.EmailVerified = NormalizeTimePtr(u.EmailVerified)
	u = u.Clone()
	u.Data = MergeData(u.Data, up.Data)
	return u
}

// Validate reports bad input: an empty id, or a username that is not
// normalised.
func (up UserUpdate) Validate() error {
	if err := firstBroken(MethodUpdateUser, rule{up.ID == "", "id", notEmpty}); err != nil {
		return err
	}
	if err := checkUsername(MethodUpdateUser, up.Username.Value); err != nil {
		return err
	}
	return validateData(MethodUpdateUser, up.Data, true)
}

// SessionUpdate is the Partial<AdapterSession> that UpdateSession takes:
// SessionToken names the session, and only the fields that are Set change.
type SessionUpdate struct {
	SessionToken string
	UserID       Field[string]
	Expires      Field[time.Time]
	// UpdatedAt is kept by adapters that keep session metadata
	// ([SessionMetadataKeeper]) and ignored by the others.
	UpdatedAt Field[time.Time]
}

// Apply returns s with the update's set fields applied, times normalised as
// adapters store them. It does not change s.
func (up SessionUpdate) Apply(s Session) Session {
	up.UserID.Apply(&s.UserID)
	up.Expires.Apply(&s.Expires)
	up.UpdatedAt.Apply(&s.UpdatedAt)
	return s.Normalize()
}

// Validate reports bad input: an empty token, a user id set to "", or
// expires set to the zero time.
func (up SessionUpdate) Validate() error {
	return firstBroken(MethodUpdateSession,
		rule{up.SessionToken == "", "sessionToken", notEmpty},
		rule{up.UserID.Set && up.UserID.Value == "", "userId", notEmpty},
		rule{up.Expires.Set && up.Expires.Value.IsZero(), "expires", "must not be the zero time"})
}

// AccountUpdate is what UpdateAccount takes: Provider and ProviderAccountID
// name the account, and only the token fields that are Set change. It is
// how the library stores the tokens a refresh returned.
type AccountUpdate struct {
	Provider             string
	ProviderAccountID    string
	AccessToken          Field[*string]
	AuthorizationDetails Field[[]AuthorizationDetail]
	ExpiresAt            Field[*int64]
	ExpiresIn            Field[*int64]
	IDToken              Field[*string]
	RefreshToken         Field[*string]
	Scope                Field[*string]
	TokenType            Field[*string]
	SessionState         Field[*string]
}

// Key returns the (Provider, ProviderAccountID) key of the account updated.
func (up AccountUpdate) Key() AccountKey {
	return AccountKey{Provider: up.Provider, ProviderAccountID: up.ProviderAccountID}
}

// Apply returns a with the update's set fields applied, normalised as
// adapters store it (token type lowercased). It does not change a.
func (up AccountUpdate) Apply(a Account) Account {
	a = a.Clone()
	up.AccessToken.Apply(&a.AccessToken)
	up.AuthorizationDetails.Apply(&a.AuthorizationDetails)
	up.ExpiresAt.Apply(&a.ExpiresAt)
	up.ExpiresIn.Apply(&a.ExpiresIn)
	up.IDToken.Apply(&a.IDToken)
	up.RefreshToken.Apply(&a.RefreshToken)
	up.Scope.Apply(&a.Scope)
	up.TokenType.Apply(&a.TokenType)
	up.SessionState.Apply(&a.SessionState)
	return a.Normalize()
}

// Validate reports bad input: an empty provider or provider account id.
func (up AccountUpdate) Validate() error {
	return firstBroken(MethodUpdateAccount,
		rule{up.Provider == "", "provider", notEmpty},
		rule{up.ProviderAccountID == "", "providerAccountId", notEmpty})
}
