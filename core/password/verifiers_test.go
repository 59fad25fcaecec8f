package password

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// prefixVerifier reads "$sha256$<hex of sha256(password)>", a stand-in for
// the unsalted hashes of a legacy system; it counts its calls.
type prefixVerifier struct {
	calls *int
	err   error
}

func sha256Hash(pw string) string {
	s := sha256.Sum256([]byte(pw))
	return "$sha256$" + hex.EncodeToString(s[:])
}

func (v prefixVerifier) Recognizes(hash string) bool { return strings.HasPrefix(hash, "$sha256$") }

func (v prefixVerifier) Verify(_ context.Context, hash, password string) (bool, error) {
	if v.calls != nil {
		*v.calls++
	}
	if v.err != nil {
		return false, v.err
	}
	return subtle.ConstantTimeCompare([]byte(hash), []byte(sha256Hash(password))) == 1, nil
}

// refuseAll recognises every hash and matches none.
type refuseAll struct{ calls *int }

func (r refuseAll) Recognizes(string) bool { return true }
func (r refuseAll) Verify(context.Context, string, string) (bool, error) {
	*r.calls++
	return false, nil
}

func TestWithVerifiers(t *testing.T) {
	ctx := context.Background()
	a := newTestHasher(t, testParams)
	var calls int
	h := WithVerifiers(a, nil, prefixVerifier{calls: &calls})
	own, err := h.Hash(ctx, "hunter22")
	if err != nil || !phcShape.MatchString(own) {
		t.Fatalf("Hash = %q, %v; want the Argon2id hasher's", own, err)
	}
	legacy := sha256Hash("hunter22")
	cases := []struct {
		name, hash, password string
		ok, rehash           bool
		err                  error
		verifierCalls        int
	}{
		{"own hash", own, "hunter22", true, false, nil, 0},
		{"own hash, wrong password", own, "hunter23", false, false, nil, 0},
		{"legacy hash", legacy, "hunter22", true, true, nil, 1},
		{"legacy hash, wrong password", legacy, "hunter23", false, false, nil, 1},
		{"nobody's hash", "$md5$abc", "hunter22", false, false, ErrUnknownHash, 0},
		{"oversized password", legacy, strings.Repeat("x", MaxBytes+1), false, false, ErrTooLong, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls = 0
			ok, rehash, err := h.Verify(ctx, c.hash, c.password)
			if ok != c.ok || rehash != c.rehash || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("Verify = %v, %v, %v; want %v, %v, %v", ok, rehash, err, c.ok, c.rehash, c.err)
			}
			if calls != c.verifierCalls {
				t.Errorf("the verifier was called %d times, want %d", calls, c.verifierCalls)
			}
		})
	}

	// The first Verifier that recognises the hash decides, even when a
	// later one would have matched; the main hasher's own hashes never
	// reach a Verifier.
	var first int
	h2 := WithVerifiers(a, refuseAll{&first}, prefixVerifier{calls: &calls})
	calls = 0
	if ok, rehash, err := h2.Verify(ctx, legacy, "hunter22"); ok || rehash || err != nil {
		t.Errorf("Verify with a refusing first verifier = %v, %v, %v; want false, false, nil", ok, rehash, err)
	}
	if first != 1 || calls != 0 {
		t.Errorf("verifier calls: first %d, second %d; want 1 and 0", first, calls)
	}
	if ok, _, err := h2.Verify(ctx, own, "hunter22"); !ok || err != nil || first != 1 {
		t.Errorf("Verify(own hash) through a catch-all verifier = %v, %v (catch-all called %d times, want 1)", ok, err, first)
	}

	// A Verifier's error is returned wrapped, and is not a match.
	boom := errors.New("legacy store unreachable")
	h3 := WithVerifiers(a, prefixVerifier{err: boom})
	if ok, rehash, err := h3.Verify(ctx, legacy, "hunter22"); ok || rehash || !errors.Is(err, boom) {
		t.Errorf("Verify with a failing verifier = %v, %v, %v; want the verifier's error", ok, rehash, err)
	}

	// No Verifiers: the hasher alone.
	if _, _, err := WithVerifiers(a).Verify(ctx, legacy, "hunter22"); !errors.Is(err, ErrUnknownHash) {
		t.Errorf("WithVerifiers(a) on a legacy hash: %v, want ErrUnknownHash", err)
	}
}
