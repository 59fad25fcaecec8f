package password

import (
	"context"
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/authport/authport/core"
)

// The lengths of SP 800-63B §3.1.1.2, in code points after NFKC: a
// [Policy]'s defaults, and the bounds it may be set within.
const (
	MinLength = 8   // the least a Policy's MinLength may be, and its default
	MaxLength = 128 // the most a Policy's MaxLength may be, and its default
)

// Policy is NIST SP 800-63B §3.1.1.2: length only, no composition rules,
// a hook for breached passwords. The zero Policy is 8 to 128 characters
// with no hook.
type Policy struct {
	// MinLength is the fewest characters (Unicode code points after
	// normalisation) a password may have; 0 means 8, and less than 8 is a
	// configuration error (SP 800-63B's minimum).
	MinLength int
	// MaxLength is the most characters a password may have; 0 means 128,
	// and more than 128 is a configuration error (refused, not clamped):
	// see [Policy.Config].
	MaxLength int
	// Check, when set, refuses passwords (breached or common ones, the
	// user's own name...): its error is returned wrapped (matching
	// ErrRejected). It is given the normalised password, and only one
	// that passed the length rules; it must not log it.
	Check func(ctx context.Context, password string) error
}

// bounds returns the minimum and maximum lengths, defaults applied.
func (p Policy) bounds() (lo, hi int) {
	lo, hi = p.MinLength, p.MaxLength
	if lo == 0 {
		lo = MinLength
	}
	if hi == 0 {
		hi = MaxLength
	}
	return lo, hi
}

// Config reports whether p is a policy Validate can apply: MinLength 0 or
// 8 to 128, MaxLength 0 or up to 128 and not below MinLength. The error
// matches [core.ErrInvalidConfig]; call it at start-up.
func (p Policy) Config() error {
	lo, hi := p.bounds()
	switch {
	case lo < MinLength || lo > MaxLength:
		return fmt.Errorf("password.Policy: MinLength must be 0 (meaning %d) or %d to %d, not %d: %w", MinLength, MinLength, MaxLength, p.MinLength, core.ErrInvalidConfig)
	case hi < lo || hi > MaxLength:
		return fmt.Errorf("password.Policy: MaxLength must be 0 (meaning %d) or %d to %d, not %d: %w", MaxLength, lo, MaxLength, p.MaxLength, core.ErrInvalidConfig)
	}
	return nil
}

// Validate checks password against p and returns nil when it may be used.
// The error matches [ErrPolicy] and one of [ErrTooShort], [ErrTooLong],
// [ErrMalformed] or [ErrRejected], and says what to do; it never quotes the
// password. When p itself is invalid (see [Policy.Config]) the error
// matches [core.ErrInvalidConfig] instead. Lengths are counted in code
// points of [Normalize]'s result, the string to hash.
func (p Policy) Validate(ctx context.Context, password string) error {
	if err := p.Config(); err != nil {
		return err
	}
	n, err := Normalize(password)
	if err != nil {
		return err
	}
	lo, hi := p.bounds()
	switch c := utf8.RuneCountInString(n); {
	case c < lo:
		return policyError(ErrTooShort, "use at least %d characters", lo)
	case c > hi:
		return policyError(ErrTooLong, "use at most %d characters", hi)
	}
	if p.Check != nil {
		if err := p.Check(ctx, n); err != nil {
			return fmt.Errorf("%w: %w: choose another password: %w", ErrPolicy, ErrRejected, err)
		}
	}
	return nil
}

// Normalize returns the password as it is hashed: NFKC (SP 800-63B says
// SHOULD), after checking valid UTF-8 and no NUL/control characters
// (ErrMalformed). A password over [MaxBytes] bytes is refused before
// anything else (ErrTooLong). Errors match [ErrPolicy] too.
func Normalize(password string) (string, error) {
	if err := checkSize(password); err != nil {
		return "", err
	}
	if !utf8.ValidString(password) {
		return "", policyError(ErrMalformed, "not valid UTF-8 text; type it again")
	}
	n := norm.NFKC.String(password)
	for _, r := range n {
		if unicode.IsControl(r) {
			return "", policyError(ErrMalformed, "holds a NUL or another control character (tab, line break, …); leave those out")
		}
	}
	return n, nil
}
