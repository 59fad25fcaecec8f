package password

import (
	"context"
	"errors"
	"fmt"
)

// Verifier checks hashes of another scheme: those a system the users were
// migrated from wrote (Better Auth's scrypt, bcrypt, …).
type Verifier interface {
	// Recognizes reports whether hash is of this Verifier's scheme. It is
	// called for every hash the main Hasher cannot read, so it must be
	// cheap and must not fail on any input.
	Recognizes(hash string) bool
	// Verify reports whether password matches hash, comparing in constant
	// time.
	Verify(ctx context.Context, hash, password string) (bool, error)
}

// WithVerifiers returns a Hasher that hashes with h and verifies with h or
// the first Verifier that recognises the hash; a match by a Verifier
// reports rehash = true, so the caller stores h's hash in its place. A hash
// that neither h nor any Verifier reads gives h's error (matching
// [ErrUnknownHash]). Nil Verifiers are skipped.
func WithVerifiers(h Hasher, vs ...Verifier) Hasher {
	kept := make([]Verifier, 0, len(vs))
	for _, v := range vs {
		if v != nil {
			kept = append(kept, v)
		}
	}
	return &chain{h: h, vs: kept}
}

type chain struct {
	h  Hasher
	vs []Verifier
}

func (c *chain) Hash(ctx context.Context, password string) (string, error) {
	return c.h.Hash(ctx, password)
}

func (c *chain) Verify(ctx context.Context, hash, password string) (ok, rehash bool, err error) {
	if err := checkSize(password); err != nil {
		return false, false, err
	}
	ok, rehash, err = c.h.Verify(ctx, hash, password)
	if err == nil || !errors.Is(err, ErrUnknownHash) {
		return ok, rehash, err
	}
	for i, v := range c.vs {
		if !v.Recognizes(hash) {
			continue
		}
		ok, verr := v.Verify(ctx, hash, password)
		if verr != nil {
			return false, false, fmt.Errorf("password: verifier %d (%T): %w", i, v, verr)
		}
		return ok, ok, nil
	}
	return false, false, err
}

// DummyHash returns the dummy hash of the main Hasher (see [DummyHash]),
// made once.
func (c *chain) DummyHash(ctx context.Context) (string, error) {
	return DummyHash(ctx, c.h)
}
