package core

import (
	"errors"
	"fmt"
	"strings"
)

// Errors an adapter returns, wrapped with context; match them with
// [errors.Is]. A lookup that finds nothing is not an error: it returns nil, nil.
var (
	// ErrMissingAdapterMethod is matched by every error reporting that an
	// adapter lacks a method the library needs (see [MissingMethodsError]).
	ErrMissingAdapterMethod = errors.New("adapter method not implemented")

	// ErrAlreadyExists reports a write that would break a uniqueness rule:
	// a second user with the same e-mail, a second account with the same
	// (provider, providerAccountId), a second session with the same token,
	// a second verification token with the same (identifier, token), or a
	// second authenticator with the same credentialID. Nothing was written.
	ErrAlreadyExists = errors.New("record already exists")

	// ErrNotFound reports a write whose target or referenced record does
	// not exist: UpdateUser or UpdateAuthenticatorCounter of a missing
	// record, or an account, session or authenticator for an unknown user.
	// Lookups never return it.
	ErrNotFound = errors.New("record not found")

	// ErrInvalidInput reports input the contract rejects, such as an empty
	// id, or a value the database cannot store. Nothing was written.
	ErrInvalidInput = errors.New("invalid input")

	// ErrCounterNotIncreased reports a WebAuthn signature counter that is
	// not above the stored one (see [AuthenticatorCounterAdvancer]): the
	// assertion was replayed, raced by another one with the same counter,
	// or comes from a cloned authenticator. The stored counter is left as
	// it was; reject the sign-in.
	ErrCounterNotIncreased = errors.New("WebAuthn signature counter did not increase: replayed assertion or cloned authenticator")

	// ErrPasswordHashChanged reports a swapPasswordHash whose expected hash
	// is no longer the stored one ([PasswordHashSwapper]): the password was
	// changed or re-hashed since it was read. Nothing was written; read the
	// account again.
	ErrPasswordHashChanged = errors.New("password hash changed since it was read")

	// ErrFactorChanged reports a swapFactor whose expected secret and step
	// are no longer the stored ones ([FactorSwapper]): the factor was used
	// or changed since it was read (a code accepted by another request).
	// Nothing was written; read the factor again.
	ErrFactorChanged = errors.New("factor changed since it was read")

	// ErrInvalidConfig is matched by every configuration error of every
	// authport module (auth.New, handler.New, oauth.New, passkey.New, the
	// providers, the rate limiter): the message says what to change.
	// Nothing was built.
	ErrInvalidConfig = errors.New("invalid configuration")
)

// InputError describes input rejected before anything was written. It
// matches [ErrInvalidInput].
type InputError struct {
	Method string // the spec name of the method, e.g. "createUser"
	Field  string // the field at fault, e.g. "email"
	Reason string // what is wrong with it
}

// Error names the method, the field and what is wrong with it.
func (e *InputError) Error() string {
	return fmt.Sprintf("%s: %s %s: %v", e.Method, e.Field, e.Reason, ErrInvalidInput)
}

// Is reports whether target is [ErrInvalidInput].
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

func invalid(method, field, reason string) error {
	return &InputError{Method: method, Field: field, Reason: reason}
}

// MissingMethod is one adapter method that is missing, and what needed it.
type MissingMethod struct {
	Method   Method // the spec name, e.g. "getUserByAccount"
	NeededBy string // e.g. "OAuth sign-in"; may be empty
}

// MissingMethodsError reports adapter methods that are needed but not
// implemented. It matches [ErrMissingAdapterMethod].
type MissingMethodsError struct {
	Adapter string // the adapter's Go type, e.g. "*redis.Adapter"
	Missing []MissingMethod
}

// Error names the adapter type and each missing method with what needed it.
func (e *MissingMethodsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "adapter %s does not implement ", e.Adapter)
	for i, m := range e.Missing {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(m.Method))
		if m.NeededBy != "" {
			fmt.Fprintf(&b, " (needed by %s)", m.NeededBy)
		}
	}
	b.WriteString("; implement them or choose an adapter that has them")
	return b.String()
}

// Is reports whether target is [ErrMissingAdapterMethod].
func (e *MissingMethodsError) Is(target error) bool { return target == ErrMissingAdapterMethod }
