package core

import "time"

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
	ID            string
	Email         Field[string]
	EmailVerified Field[*time.Time]
	Name          Field[*string]
	Image         Field[*string]
}

// Apply returns u with the update's set fields applied, times normalised as
// adapters store them. It does not change u.
func (up UserUpdate) Apply(u User) User {
	up.Email.Apply(&u.Email)
	up.EmailVerified.Apply(&u.EmailVerified)
	up.Name.Apply(&u.Name)
	up.Image.Apply(&u.Image)
	u.EmailVerified = NormalizeTimePtr(u.EmailVerified)
	return u.Clone()
}

// Validate reports bad input: an empty id, or an e-mail set to "".
func (up UserUpdate) Validate() error {
	if up.ID == "" {
		return invalid("updateUser", "id", "must not be empty")
	}
	if up.Email.Set && up.Email.Value == "" {
		return invalid("updateUser", "email", "must not be empty")
	}
	return nil
}

// SessionUpdate is the Partial<AdapterSession> that UpdateSession takes:
// SessionToken names the session, and only the fields that are Set change.
type SessionUpdate struct {
	SessionToken string
	UserID       Field[string]
	Expires      Field[time.Time]
}

// Apply returns s with the update's set fields applied, times normalised as
// adapters store them. It does not change s.
func (up SessionUpdate) Apply(s Session) Session {
	up.UserID.Apply(&s.UserID)
	up.Expires.Apply(&s.Expires)
	s.Expires = NormalizeTime(s.Expires)
	return s
}

// Validate reports bad input: an empty token, a user id set to "", or
// expires set to the zero time.
func (up SessionUpdate) Validate() error {
	if up.SessionToken == "" {
		return invalid("updateSession", "sessionToken", "must not be empty")
	}
	if up.UserID.Set && up.UserID.Value == "" {
		return invalid("updateSession", "userId", "must not be empty")
	}
	if up.Expires.Set && up.Expires.Value.IsZero() {
		return invalid("updateSession", "expires", "must not be the zero time")
	}
	return nil
}
