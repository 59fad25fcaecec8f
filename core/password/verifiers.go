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

// RehashVerifier is a [Verifier] that decides whether a hash it has
// matched should be replaced by the main Hasher's hash of the password.
// [WithVerifiers] asks it after every match; a Verifier that is not a
// RehashVerifier has every match re-hashed.
type RehashVerifier interface {
	Verifier
	// Rehash reports whether hash, which Verify has just matched, should
	// be replaced by the main Hasher's. It must be cheap and must not fail.
	Rehash(hash string) bool
}

// Upgrade returns v with every match asking to be re-hashed: through
// [WithVerifiers], a user whose hash v matched gets the main Hasher's hash
// at that sign-in. Use it to move users off another scheme for good, once
// no other system needs to read their hashes. Upgrade(nil) is nil.
func Upgrade(v Verifier) Verifier {
	if v == nil {
		return nil
	}
	return rehashing{Verifier: v, rehash: true}
}

// Keep returns v with every match keeping its hash: through
// [WithVerifiers], a user whose hash v matched signs in and the hash stays
// as it is, for a system that shares the table and reads only its own
// scheme. Keep(nil) is nil.
func Keep(v Verifier) Verifier {
	if v == nil {
		return nil
	}
	return rehashing{Verifier: v, rehash: false}
}

// rehashing is a Verifier whose matches are re-hashed or kept, as set.
type rehashing struct {
	Verifier
	rehash bool
}

// Rehash reports the choice [Upgrade] or [Keep] made.
func (r rehashing) Rehash(string) bool { return r.rehash }

// WithVerifiers returns a Hasher that hashes with h and verifies with h or
// the first Verifier that recognises the hash. Whether a match by a
// Verifier reports rehash = true (so that the caller stores h's hash in
// its place) is the Verifier's choice when it is a [RehashVerifier] (Better
// Auth's keeps its hashes, [BetterAuthScrypt.Verifier]), and true for any
// other; [Upgrade] and [Keep] override it. A hash that neither h nor any
// Verifier reads gives h's error (matching [ErrUnknownHash]). Nil
// Verifiers are skipped.
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
		if !ok {
			return false, false, nil
		}
		if r, isR := v.(RehashVerifier); isR {
			return true, r.Rehash(hash), nil
		}
		return true, true, nil
	}
	return false, false, err
}

// DummyHash returns the dummy hash of the main Hasher (see [DummyHash]),
// made once.
func (c *chain) DummyHash(ctx context.Context) (string, error) {
	return DummyHash(ctx, c.h)
}
