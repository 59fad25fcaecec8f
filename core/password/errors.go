package password

import (
	"errors"
	"fmt"
)

// MaxBytes is the longest password, in bytes, that [Hasher]s, [Normalize]
// and [Policy.Validate] accept: anything longer is refused before any work
// is done on it (a password of [MaxLength] code points after NFKC fits in
// far fewer bytes).
const MaxBytes = 4096

// Errors of this package; match them with [errors.Is].
var (
	// ErrUnknownHash is matched by the error of a Verify given a hash it
	// cannot read: another scheme, a malformed PHC string, or parameters
	// out of the bounds it accepts. Nothing was computed.
	ErrUnknownHash = errors.New("password hash in an unknown or unsupported format")

	// ErrPolicy is matched by every error that refuses a password the user
	// chose or typed; each also matches one of ErrTooShort, ErrTooLong,
	// ErrMalformed or ErrRejected.
	ErrPolicy = errors.New("password refused")
	// ErrTooShort: fewer code points than the policy's minimum.
	ErrTooShort = errors.New("password too short")
	// ErrTooLong: more code points than the policy's maximum, or more than
	// [MaxBytes] bytes.
	ErrTooLong = errors.New("password too long")
	// ErrMalformed: not valid UTF-8, or holding a NUL or another control
	// character.
	ErrMalformed = errors.New("password malformed")
	// ErrRejected: refused by the policy's Check hook (a breached or common
	// password, for instance); the hook's error is wrapped too.
	ErrRejected = errors.New("password rejected")
)

// policyError returns an error matching ErrPolicy and kind, saying what to
// do.
func policyError(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrPolicy, kind, fmt.Sprintf(format, args...))
}

// checkSize refuses a password over MaxBytes before any work is done on it.
func checkSize(password string) error {
	if len(password) > MaxBytes {
		return policyError(ErrTooLong, "longer than %d bytes; choose a shorter one", MaxBytes)
	}
	return nil
}
