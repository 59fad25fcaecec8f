package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/scrypt"
	"golang.org/x/text/unicode/norm"
)

// Better Auth's password hash, as better-auth 1.7.25 writes it
// (@better-auth/utils/password, which better-auth/crypto's hashPassword
// and verifyPassword call): scrypt with N = 16384, r = 16, p = 1 and a
// 64-byte key, of the password after NFKC normalisation, salted with the 32
// lowercase hexadecimal characters of 16 random bytes (the characters
// themselves are the salt, not the bytes they spell), stored as the salt, a
// colon and the key in lowercase hexadecimal.
const (
	baN       = 1 << 14
	baR       = 16
	baP       = 1
	baKeyLen  = 64
	baSaltHex = 32                         // 16 random bytes, hex-encoded
	baHashLen = baSaltHex + 1 + 2*baKeyLen // 161 characters
)

// BetterAuthScrypt is a [Hasher] that writes and reads Better Auth's
// password hashes: scrypt (N = 16384, r = 16, p = 1, a 64-byte key) of the
// NFKC-normalised password, stored as "<32 hex characters of salt>:<128 hex
// characters of key>", exactly as better-auth 1.7's hashPassword writes
// them and its verifyPassword reads them. Make one with
// [NewBetterAuthScrypt]; it is safe for concurrent use.
//
// Which to use when authport shares its password accounts with a Better
// Auth app:
//
//   - The app stays and both sides set passwords: make BetterAuthScrypt
//     the Hasher, so every hash authport writes (sign-up, reset, change)
//     is one the app verifies, and the app's hashes verify here.
//   - The app is being retired: keep Argon2id as the Hasher and add
//     [BetterAuthScrypt.Verifier] with [WithVerifiers]. The app's hashes
//     verify and are kept by default; wrap the Verifier in [Upgrade] to
//     replace each with an Argon2id hash at the user's next sign-in (the
//     app can no longer verify that user's password after that).
//
// Each hash takes 32 MiB for scrypt's working memory (128 × N × r bytes);
// [WithMaxConcurrent] bounds how many run at once (by default GOMAXPROCS),
// shared with the Verifier it returns.
//
// Hash and Verify normalise the password to NFKC themselves, as Better
// Auth does, so a password typed in another Unicode form still matches;
// normalising it first ([Normalize]) changes nothing. They refuse a
// password that is not valid UTF-8 (the error matches [ErrMalformed]) or
// is over [MaxBytes] bytes ([ErrTooLong]).
type BetterAuthScrypt struct {
	slots *slots

	dummyMu sync.Mutex
	dummy   string
}

// NewBetterAuthScrypt returns a Hasher of Better Auth's scrypt hashes (see
// [BetterAuthScrypt]). The only option is [WithMaxConcurrent]; errors match
// [core.ErrInvalidConfig].
func NewBetterAuthScrypt(opts ...Option) (*BetterAuthScrypt, error) {
	c, err := newHasherConfig("password.NewBetterAuthScrypt", opts)
	if err != nil {
		return nil, err
	}
	return &BetterAuthScrypt{slots: newSlots(c.maxConcurrent)}, nil
}

// Hash returns Better Auth's hash of password with a fresh random salt:
// 161 characters, "<salt>:<key>" in lowercase hexadecimal. It returns ctx's
// error if ctx ends while it waits for a slot.
func (s *BetterAuthScrypt) Hash(ctx context.Context, password string) (string, error) {
	if err := checkBetterAuthPassword(password); err != nil {
		return "", err
	}
	var raw [baSaltHex / 2]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("password: reading random salt: %w", err)
	}
	var out [baHashLen]byte
	hex.Encode(out[:baSaltHex], raw[:])
	key, err := s.derive(ctx, password, out[:baSaltHex])
	if err != nil {
		return "", err
	}
	out[baSaltHex] = ':'
	hex.Encode(out[baSaltHex+1:], key)
	return string(out[:]), nil
}

// Verify reports whether password matches hash, one of Better Auth's
// scrypt hashes, comparing in constant time. rehash is always false: the
// parameters are Better Auth's and never change. A hash of any other form
// gives an error matching [ErrUnknownHash], before anything is computed.
func (s *BetterAuthScrypt) Verify(ctx context.Context, hash, password string) (ok, rehash bool, err error) {
	ok, err = s.verify(ctx, hash, password)
	return ok, false, err
}

// DummyHash returns Better Auth's hash of a random password nobody knows,
// made on the first call and the same afterwards, for verifying against
// when a user does not exist (see [Argon2id.DummyHash]).
func (s *BetterAuthScrypt) DummyHash(ctx context.Context) (string, error) {
	s.dummyMu.Lock()
	defer s.dummyMu.Unlock()
	if s.dummy != "" {
		return s.dummy, nil
	}
	h, err := hashRandom(ctx, s)
	if err != nil {
		return "", err
	}
	s.dummy = h
	return h, nil
}

// Verifier returns a [Verifier] of Better Auth's hashes for [WithVerifiers],
// sharing s's concurrency cap: it recognises exactly the form Better Auth
// writes (32 lowercase hex characters, a colon, 128 lowercase hex
// characters) and verifies as [BetterAuthScrypt.Verify] does.
//
// A hash it matched is kept (it is a [RehashVerifier] whose Rehash is
// false), so a Better Auth app reading the same table still verifies it;
// pass Upgrade(s.Verifier()) to [WithVerifiers] to replace it with the main
// Hasher's hash at the user's next sign-in instead.
func (s *BetterAuthScrypt) Verifier() Verifier { return baVerifier{s} }

// baVerifier is [BetterAuthScrypt.Verifier].
type baVerifier struct{ s *BetterAuthScrypt }

// Recognizes reports whether hash has the form of Better Auth's scrypt
// hashes; it allocates nothing.
func (v baVerifier) Recognizes(hash string) bool {
	_, ok := parseBetterAuth(hash)
	return ok
}

// Verify reports whether password matches hash (see
// [BetterAuthScrypt.Verify]).
func (v baVerifier) Verify(ctx context.Context, hash, password string) (bool, error) {
	return v.s.verify(ctx, hash, password)
}

// Rehash is false: a Better Auth hash is kept unless [Upgrade] says
// otherwise.
func (v baVerifier) Rehash(string) bool { return false }

// verify is Verify without its rehash.
func (s *BetterAuthScrypt) verify(ctx context.Context, hash, password string) (bool, error) {
	if err := checkBetterAuthPassword(password); err != nil {
		return false, err
	}
	want, ok := parseBetterAuth(hash)
	if !ok {
		return false, fmt.Errorf("%w: not Better Auth's scrypt hash (32 lowercase hex characters of salt, a colon, 128 of key)", ErrUnknownHash)
	}
	got, err := s.derive(ctx, password, []byte(hash[:baSaltHex]))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want[:]) == 1, nil
}

// derive computes Better Auth's scrypt key of password under salt (the
// salt's hex characters), holding a slot while it does.
func (s *BetterAuthScrypt) derive(ctx context.Context, password string, salt []byte) ([]byte, error) {
	release, err := s.slots.acquire(ctx, 1)
	if err != nil {
		return nil, err
	}
	defer release()
	key, err := scrypt.Key([]byte(norm.NFKC.String(password)), salt, baN, baR, baP, baKeyLen)
	if err != nil {
		// Only invalid parameters fail, and these are constants.
		return nil, fmt.Errorf("password: scrypt: %w", err)
	}
	return key, nil
}

// checkBetterAuthPassword refuses, before any work, a password over
// MaxBytes or one that is not UTF-8 (Better Auth hashes JavaScript
// strings, which have no such thing, and NFKC needs text).
func checkBetterAuthPassword(password string) error {
	if err := checkSize(password); err != nil {
		return err
	}
	if !utf8.ValidString(password) {
		return policyError(ErrMalformed, "not valid UTF-8 text; type it again")
	}
	return nil
}

// parseBetterAuth reads Better Auth's hash: exactly 32 lowercase hex
// characters, a colon and 128 lowercase hex characters, nothing before or
// after. It returns the key, or false for anything else; it allocates
// nothing and reads at most 161 bytes of hash.
func parseBetterAuth(hash string) (key [baKeyLen]byte, ok bool) {
	if len(hash) != baHashLen || hash[baSaltHex] != ':' {
		return key, false
	}
	for i := 0; i < len(hash); i++ {
		if i == baSaltHex {
			continue
		}
		if c := hash[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return key, false
		}
	}
	for i := range key {
		j := baSaltHex + 1 + 2*i
		key[i] = unhex(hash[j])<<4 | unhex(hash[j+1])
	}
	return key, true
}

// unhex is the value of a lowercase hex digit already checked.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}
