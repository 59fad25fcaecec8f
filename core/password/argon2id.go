package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"

	"github.com/authport/authport/core"
)

// Hasher hashes new passwords and checks stored hashes.
type Hasher interface {
	// Hash returns the hash of password in the hasher's format: a PHC
	// string for [Argon2id], Better Auth's "<salt>:<key>" for
	// [BetterAuthScrypt].
	Hash(ctx context.Context, password string) (string, error)
	// Verify reports whether password matches hash, and, when it does,
	// whether the hash should be replaced by Hash's (older parameters, or a
	// scheme other than the hasher's own). A hash it cannot read gives an
	// error matching ErrUnknownHash. Comparison in constant time.
	Verify(ctx context.Context, hash, password string) (ok, rehash bool, err error)
}

// Argon2idParams are the cost parameters of Argon2id (RFC 9106 §3.1).
type Argon2idParams struct {
	Memory      uint32 // m: memory in KiB, at least 8 × Parallelism
	Iterations  uint32 // t: passes over the memory, at least 1
	Parallelism uint8  // p: lanes, at least 1
	SaltLength  uint32 // bytes of random salt, 16 recommended (8 to 64)
	KeyLength   uint32 // bytes of hash, 32 recommended (16 to 128)
}

// The bounds [NewArgon2id] and [Argon2id.Verify] accept. A hash string whose
// parameters are outside them gives [ErrUnknownHash] without anything being
// allocated: a corrupted or planted hash cannot make Verify take gigabytes
// or minutes.
const (
	// MaxMemory is the most memory a hash may ask for, in KiB: 2 GiB, the
	// memory of RFC 9106's first recommended option.
	MaxMemory = 2 << 20
	// MaxWork bounds Memory × Iterations, in KiB: 8 GiB of passes, four
	// times RFC 9106's first option and 42 times its second.
	MaxWork = 8 << 20
	minSalt = 8
	maxSalt = 64
	minKey  = 16
	maxKey  = 128
)

// RFC9106Params returns RFC 9106 §4's second recommended option, for when
// 2 GiB per hash is too much: t=3, p=4, m=64 MiB, with a 16-byte salt and a
// 32-byte hash. One hash takes 64 MiB for some tens of milliseconds.
func RFC9106Params() Argon2idParams {
	return Argon2idParams{Memory: 64 << 10, Iterations: 3, Parallelism: 4, SaltLength: 16, KeyLength: 32}
}

// check reports what is wrong with p, or "" when it is within bounds.
func (p Argon2idParams) check() string {
	switch {
	case p.Parallelism < 1:
		return "Parallelism must be at least 1"
	case p.Iterations < 1:
		return "Iterations must be at least 1"
	case p.Memory < 8*uint32(p.Parallelism):
		return fmt.Sprintf("Memory must be at least 8 KiB per lane (%d KiB for Parallelism %d)", 8*uint32(p.Parallelism), p.Parallelism)
	case p.Memory > MaxMemory:
		return fmt.Sprintf("Memory must be at most %d KiB (2 GiB)", MaxMemory)
	case uint64(p.Memory)*uint64(p.Iterations) > MaxWork:
		return fmt.Sprintf("Memory × Iterations must be at most %d KiB", MaxWork)
	case p.SaltLength < minSalt || p.SaltLength > maxSalt:
		return fmt.Sprintf("SaltLength must be %d to %d bytes (16 recommended)", minSalt, maxSalt)
	case p.KeyLength < minKey || p.KeyLength > maxKey:
		return fmt.Sprintf("KeyLength must be %d to %d bytes (32 recommended)", minKey, maxKey)
	}
	return ""
}

// Argon2id is the [Hasher] of this package: Argon2id version 19 (0x13) in
// PHC string format. Make one with [NewArgon2id]; it is safe for
// concurrent use.
type Argon2id struct {
	params Argon2idParams
	slots  *slots

	dummyMu sync.Mutex
	dummy   string
}

// Option configures a hasher of this package: [NewArgon2id] or
// [NewBetterAuthScrypt].
type Option func(*hasherConfig)

// Argon2idOption is [Option], under the name [NewArgon2id] has taken since
// before [NewBetterAuthScrypt] took options too.
type Argon2idOption = Option

type hasherConfig struct {
	maxConcurrent int
}

// newHasherConfig applies opts to the defaults and checks the result;
// errors match [core.ErrInvalidConfig] and name the caller.
func newHasherConfig(caller string, opts []Option) (hasherConfig, error) {
	c := hasherConfig{maxConcurrent: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxConcurrent < 1 {
		return c, fmt.Errorf("%s: WithMaxConcurrent must be at least 1, not %d: %w", caller, c.maxConcurrent, core.ErrInvalidConfig)
	}
	return c, nil
}

// WithMaxConcurrent lets at most n hashes (Hash or Verify) of one hasher
// run at once; the others wait, honouring their context. The default is
// GOMAXPROCS. Each Argon2id hash takes Memory KiB, so n × Memory bounds the
// memory hashing takes however many sign-ins arrive; a stored hash with
// more memory than the configured Memory counts as several hashes (at most
// n). Each of Better Auth's scrypt hashes ([NewBetterAuthScrypt]) takes
// 32 MiB, so n × 32 MiB bounds it. n must be at least 1.
func WithMaxConcurrent(n int) Option {
	return func(c *hasherConfig) { c.maxConcurrent = n }
}

// NewArgon2id returns an Argon2id hasher that hashes with p. Errors match
// [core.ErrInvalidConfig] and name the field to change.
func NewArgon2id(p Argon2idParams, opts ...Option) (*Argon2id, error) {
	if msg := p.check(); msg != "" {
		return nil, fmt.Errorf("password.NewArgon2id: %s: %w", msg, core.ErrInvalidConfig)
	}
	c, err := newHasherConfig("password.NewArgon2id", opts)
	if err != nil {
		return nil, err
	}
	return &Argon2id{params: p, slots: newSlots(c.maxConcurrent)}, nil
}

// Params returns the parameters a calls Hash with.
func (a *Argon2id) Params() Argon2idParams { return a.params }

// Hash returns the Argon2id hash of password, with a fresh random salt, in
// PHC string format. It refuses a password over [MaxBytes] bytes (the error
// matches [ErrTooLong]) and returns ctx's error if ctx ends while it waits
// for a slot (see [WithMaxConcurrent]).
func (a *Argon2id) Hash(ctx context.Context, password string) (string, error) {
	if err := checkSize(password); err != nil {
		return "", err
	}
	salt := make([]byte, a.params.SaltLength)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: reading random salt: %w", err)
	}
	key, err := a.derive(ctx, password, salt, a.params)
	if err != nil {
		return "", err
	}
	return encodePHC(a.params, salt, key), nil
}

// Verify reports whether password matches hash, an argon2id PHC string of
// version 19 with any parameters within [MaxMemory], [MaxWork], 8 to 64
// bytes of salt and 16 to 128 bytes of hash. When it matches, rehash
// reports whether the hash's parameters differ from a's, so the caller
// should store Hash's. A hash it cannot read gives an error matching
// [ErrUnknownHash]; a password over [MaxBytes] bytes, one matching
// [ErrTooLong]; ctx's error if ctx ends while it waits for a slot.
func (a *Argon2id) Verify(ctx context.Context, hash, password string) (ok, rehash bool, err error) {
	if err := checkSize(password); err != nil {
		return false, false, err
	}
	p, salt, want, err := parsePHC(hash)
	if err != nil {
		return false, false, err
	}
	got, err := a.derive(ctx, password, salt, p)
	if err != nil {
		return false, false, err
	}
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return false, false, nil
	}
	return true, p != a.params, nil
}

// DummyHash returns a hash of a random password nobody knows, made with a's
// parameters on the first call and the same afterwards. Verify a password
// against it when the user asked for does not exist: the answer is false
// and takes as long as a wrong password for a user whose hash is current,
// so the two cannot be told apart.
func (a *Argon2id) DummyHash(ctx context.Context) (string, error) {
	a.dummyMu.Lock()
	defer a.dummyMu.Unlock()
	if a.dummy != "" {
		return a.dummy, nil
	}
	h, err := hashRandom(ctx, a)
	if err != nil {
		return "", err
	}
	a.dummy = h
	return h, nil
}

// Verifier returns a [Verifier] of argon2id hashes for [WithVerifiers]
// behind another Hasher, sharing a's concurrency cap: for instance behind
// [BetterAuthScrypt] when a Better Auth app comes to share a table that
// already holds authport's Argon2id hashes. It recognises what
// [Argon2id.Verify] reads; a match is re-hashed by the main Hasher unless
// wrapped in [Keep].
func (a *Argon2id) Verifier() Verifier { return argon2idVerifier{a} }

// argon2idVerifier is [Argon2id.Verifier].
type argon2idVerifier struct{ a *Argon2id }

// Recognizes reports whether hash is an argon2id PHC string within the
// bounds Verify reads; it reads at most 512 bytes of it.
func (v argon2idVerifier) Recognizes(hash string) bool {
	_, _, _, err := parsePHC(hash)
	return err == nil
}

// Verify reports whether password matches hash (see [Argon2id.Verify]).
func (v argon2idVerifier) Verify(ctx context.Context, hash, password string) (bool, error) {
	ok, _, err := v.a.Verify(ctx, hash, password)
	return ok, err
}

// derive computes the Argon2id key of password under p, holding slots
// while it does.
func (a *Argon2id) derive(ctx context.Context, password string, salt []byte, p Argon2idParams) ([]byte, error) {
	// A hash with more memory than configured counts as several.
	n := int((uint64(p.Memory) + uint64(a.params.Memory) - 1) / uint64(a.params.Memory))
	release, err := a.slots.acquire(ctx, n)
	if err != nil {
		return nil, err
	}
	defer release()
	return argon2.IDKey([]byte(password), salt, p.Iterations, p.Memory, p.Parallelism, p.KeyLength), nil
}

// hashRandom hashes 32 random bytes (hex-encoded) with h.
func hashRandom(ctx context.Context, h Hasher) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("password: reading random password: %w", err)
	}
	return h.Hash(ctx, hex.EncodeToString(b[:]))
}

// DummyHash returns a hash of a random password made by h, for verifying
// against when a user does not exist (see [Argon2id.DummyHash]). When h has
// a DummyHash method of its own (an [Argon2id], or [WithVerifiers] around
// one) it returns that, made once; otherwise it hashes a new random
// password on every call, so make one at start-up and keep it.
func DummyHash(ctx context.Context, h Hasher) (string, error) {
	if d, ok := h.(interface {
		DummyHash(context.Context) (string, error)
	}); ok {
		return d.DummyHash(ctx)
	}
	return hashRandom(ctx, h)
}

var b64 = base64.RawStdEncoding.Strict()

// encodePHC writes $argon2id$v=19$m=…,t=…,p=…$salt$key.
func encodePHC(p Argon2idParams, salt, key []byte) string {
	var b strings.Builder
	b.Grow(64 + b64.EncodedLen(len(salt)) + b64.EncodedLen(len(key)))
	fmt.Fprintf(&b, "$argon2id$v=%d$m=%d,t=%d,p=%d$", argon2.Version, p.Memory, p.Iterations, p.Parallelism)
	b.WriteString(b64.EncodeToString(salt))
	b.WriteByte('$')
	b.WriteString(b64.EncodeToString(key))
	return b.String()
}

// parsePHC reads an argon2id PHC string strictly: version 19, the
// parameters m, t and p in that order as decimal numbers without leading
// zeros, salt and hash in unpadded standard base64, every value within the
// bounds of [Argon2idParams.check]. Errors match ErrUnknownHash and never
// quote the hash.
func parsePHC(s string) (p Argon2idParams, salt, key []byte, err error) {
	bad := func(what string) (Argon2idParams, []byte, []byte, error) {
		return Argon2idParams{}, nil, nil, fmt.Errorf("%w: %s", ErrUnknownHash, what)
	}
	// The longest valid string is well under 512 bytes; refuse anything
	// longer before splitting it.
	if len(s) > 512 {
		return bad("longer than any argon2id hash")
	}
	f := strings.Split(s, "$")
	if len(f) != 6 || f[0] != "" || f[1] != "argon2id" {
		return bad("not an argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$hash)")
	}
	if f[2] != "v=19" {
		return bad("argon2id version other than 19 (0x13)")
	}
	kv := strings.Split(f[3], ",")
	if len(kv) != 3 {
		return bad("parameters other than m, t and p")
	}
	var vals [3]uint64
	for i, name := range []string{"m=", "t=", "p="} {
		v, ok := strings.CutPrefix(kv[i], name)
		if !ok {
			return bad("parameters other than m, t and p in that order")
		}
		n, ok := decimal(v)
		if !ok {
			return bad("parameter " + name[:1] + " is not a decimal number")
		}
		vals[i] = n
	}
	if vals[0] > MaxMemory || vals[1] > MaxWork || vals[2] > 255 {
		return bad("parameters out of bounds")
	}
	p = Argon2idParams{Memory: uint32(vals[0]), Iterations: uint32(vals[1]), Parallelism: uint8(vals[2])}
	if len(f[4]) > b64.EncodedLen(maxSalt) || len(f[5]) > b64.EncodedLen(maxKey) {
		return bad("salt or hash too long")
	}
	// The decoder skips line breaks; a hash holds none.
	if !isB64(f[4]) || !isB64(f[5]) {
		return bad("salt or hash holds characters other than base64's")
	}
	if salt, err = b64.DecodeString(f[4]); err != nil {
		return bad("salt is not unpadded base64")
	}
	if key, err = b64.DecodeString(f[5]); err != nil {
		return bad("hash is not unpadded base64")
	}
	p.SaltLength, p.KeyLength = uint32(len(salt)), uint32(len(key))
	if msg := p.check(); msg != "" {
		return bad("parameters out of bounds: " + msg)
	}
	return p, salt, key, nil
}

// isB64 reports whether s holds only the characters of standard base64
// without padding.
func isB64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// decimal parses a decimal number of at most 10 digits without a sign or
// leading zeros.
func decimal(s string) (uint64, bool) {
	if s == "" || len(s) > 10 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
