package jwt

import (
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// The committed seed corpus (testdata/fuzz/FuzzDecode) holds tokens Auth.js
// made with this secret (see testdata/authjs-tokens.json), altered copies and
// junk. Run: go test -fuzz FuzzDecode -run '^$' .
const fuzzSecret = "authport-known-answer-secret"

// fuzzNow is when the known-answer tokens were made, so they decode.
var fuzzNow = time.Unix(1795458324, 0)

func checkDecodeResult(t *testing.T, claims map[string]any, err error) {
	t.Helper()
	switch {
	case err == nil && claims == nil:
		t.Fatal("Decode returned nil claims and no error")
	case err != nil && claims != nil:
		t.Fatalf("Decode returned claims and an error: %v", err)
	case err != nil && !errors.Is(err, ErrInvalidToken) && !errors.Is(err, ErrExpiredToken) && !errors.Is(err, ErrInvalidArgument):
		t.Fatalf("Decode error matches none of ErrInvalidToken, ErrExpiredToken, ErrInvalidArgument: %v", err)
	}
}

// FuzzDecode feeds any salt and token to Decode: it must never panic, and must
// return either claims or an error matching one of the package's errors.
func FuzzDecode(f *testing.F) {
	c := mustCodec(f, "fuzz-newer-secret", fuzzSecret).WithClock(fixed(fuzzNow))
	gcm := seal(f, fuzzSecret, SessionTokenCookie, jose.A256GCM, "derive", nil, `{"sub":"x","exp":1e300,"nbf":-1}`)
	noKID := seal(f, fuzzSecret, SessionTokenCookie, jose.A256CBC_HS512, "", nil, `{"sub":"x","aud":["a"]}`)
	f.Add(SessionTokenCookie, gcm)
	f.Add(SessionTokenCookie, noKID)
	f.Add(SessionTokenCookie, strings.Replace(gcm, ".", "..", 1))
	// Non-canonical base64url spellings of valid tokens (one token must
	// have one spelling, or a revoked or logged token passes again under
	// another): unused bits set in a segment's last character, a skipped
	// newline.
	for _, tok := range []string{gcm, noKID} {
		p := strings.Split(tok, ".")
		for i := range p {
			if bad := nonCanonical(p[i]); bad != "" && bad != p[i] {
				q := append([]string(nil), p...)
				q[i] = bad
				f.Add(SessionTokenCookie, strings.Join(q, "."))
			}
		}
		f.Add(SessionTokenCookie, strings.Replace(tok, ".", ".\n", 2))
	}
	f.Add("", "")
	f.Fuzz(func(t *testing.T, salt, token string) {
		claims, err := c.Decode(salt, token)
		checkDecodeResult(t, claims, err)
	})
}

// FuzzDecodeClaims seals any plaintext and header parameters with the right
// key, so the fuzzer reaches the claim checks behind the decryption that
// FuzzDecode's random tokens rarely pass.
func FuzzDecodeClaims(f *testing.F) {
	c := mustCodec(f, fuzzSecret).WithClock(fixed(fuzzNow))
	f.Add(`{"sub":"x"}`, "", "")
	f.Add(`{"exp":1795458300,"iat":"x"}`, "sub", "x")
	f.Add(`{"aud":["a",{"b":null}]}`, "aud", "a")
	f.Add(`null`, "", "")
	f.Add("{\"a\":\"\xff\"}", "iss", "")
	f.Add(`{"nbf":1e400}`, "kid", "x")
	f.Fuzz(func(t *testing.T, plaintext, param, value string) {
		var extra map[string]any
		switch param {
		case "", "alg", "enc", "zip", "crit", "kid", "p2c", "epk":
			// Parameters go-jose sets itself or that make encryption fail.
		default:
			extra = map[string]any{param: value}
		}
		token := seal(t, fuzzSecret, SessionTokenCookie, jose.A256CBC_HS512, "derive", extra, plaintext)
		claims, err := c.Decode(SessionTokenCookie, token)
		checkDecodeResult(t, claims, err)
	})
}
