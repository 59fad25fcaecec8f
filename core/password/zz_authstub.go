// Package password is a stand-in for the package branch pwpkg writes; it
// is removed when that branch is merged. It has the same API, minimally.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
	"golang.org/x/text/unicode/norm"
)

// Hasher hashes and verifies passwords.
type Hasher interface {
	Hash(ctx context.Context, pw string) (string, error)
	Verify(ctx context.Context, hash, pw string) (ok, rehash bool, err error)
}

// Argon2idParams are Argon2id's parameters.
type Argon2idParams struct {
	Time, Memory uint32
	Threads      uint8
	KeyLen       uint32
	SaltLen      uint32
}

// RFC9106Params are RFC 9106's second recommended parameters.
func RFC9106Params() Argon2idParams {
	return Argon2idParams{Time: 3, Memory: 64 * 1024, Threads: 4, KeyLen: 32, SaltLen: 16}
}

// Option is an option of NewArgon2id.
type Option func(*argon)

// WithMaxConcurrent is accepted and ignored by the stand-in.
func WithMaxConcurrent(n int) Option { return func(*argon) {} }

type argon struct{ p Argon2idParams }

// NewArgon2id returns an Argon2id hasher.
func NewArgon2id(p Argon2idParams, opts ...Option) (Hasher, error) {
	a := &argon{p: p}
	for _, o := range opts {
		o(a)
	}
	return a, nil
}

func (a *argon) Hash(_ context.Context, pw string) (string, error) {
	salt := make([]byte, a.p.SaltLen)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, a.p.Time, a.p.Memory, a.p.Threads, a.p.KeyLen)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", a.p.Memory, a.p.Time, a.p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

func (a *argon) Verify(_ context.Context, hash, pw string) (bool, bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, false, errors.New("password: not an argon2id hash")
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, false, err
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err := errors.Join(err1, err2); err != nil {
		return false, false, err
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(key)))
	ok := subtle.ConstantTimeCompare(got, key) == 1
	return ok, ok && (m != a.p.Memory || t != a.p.Time || p != a.p.Threads), nil
}

// The policy's errors.
var (
	ErrPolicy    = errors.New("password does not meet the policy")
	ErrTooShort  = fmt.Errorf("%w: too short", ErrPolicy)
	ErrTooLong   = fmt.Errorf("%w: too long", ErrPolicy)
	ErrMalformed = fmt.Errorf("%w: malformed", ErrPolicy)
	ErrRejected  = fmt.Errorf("%w: rejected", ErrPolicy)
)

// Policy is the password policy.
type Policy struct {
	MinLength, MaxLength int
	Check                func(ctx context.Context, pw string) error
}

// Validate checks pw.
func (p Policy) Validate(ctx context.Context, pw string) error {
	minL, maxL := p.MinLength, p.MaxLength
	if minL == 0 {
		minL = 8
	}
	if maxL == 0 {
		maxL = 128
	}
	if !utf8.ValidString(pw) || strings.ContainsRune(pw, 0) {
		return ErrMalformed
	}
	n := utf8.RuneCountInString(Normalize(pw))
	switch {
	case n < minL:
		return ErrTooShort
	case n > maxL || len(pw) > 4*maxL:
		return ErrTooLong
	}
	if p.Check != nil {
		if err := p.Check(ctx, pw); err != nil {
			return fmt.Errorf("%w: %w", ErrRejected, err)
		}
	}
	return nil
}

// Normalize returns pw in NFC.
func Normalize(pw string) string { return norm.NFC.String(pw) }

// NewCode returns a random 6-digit code.
func NewCode() (string, error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	n := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) % 1000000
	return fmt.Sprintf("%06d", n), nil
}

// ValidCode reports whether s has a code's shape.
func ValidCode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
