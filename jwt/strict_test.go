package jwt

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// nonCanonical returns s with its last character replaced by one that
// decodes to the same bytes but sets the unused low bits (a second spelling
// of the same token, which the codec refuses), or "" when s has no unused
// bits (its length is a multiple of 4).
func nonCanonical(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 == 0 {
		return ""
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i|1])
}

// TestNonCanonicalBase64 changes the unused padding bits of each segment of
// a valid token: the segment still decodes to the same bytes with lax
// base64, and Decode must refuse it (strict base64url, RFC 7515 §2, as jose
// does), so that a token has one spelling only.
func TestNonCanonicalBase64(t *testing.T) {
	c := mustCodec(t, "a-secret-of-at-least-thirty-two-bytes!")
	token, err := c.Encode(SessionTokenCookie, map[string]any{"sub": "x"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	tried := 0
	for i, name := range []string{"header", "encrypted key", "iv", "ciphertext", "tag"} {
		bad := nonCanonical(parts[i])
		if bad == "" || bad == parts[i] {
			continue
		}
		lax, _ := base64.RawURLEncoding.DecodeString(bad)
		good, _ := base64.RawURLEncoding.DecodeString(parts[i])
		if string(lax) != string(good) {
			t.Fatalf("%s: the altered segment decodes differently; the test is wrong", name)
		}
		tried++
		p := append([]string(nil), parts...)
		p[i] = bad
		if claims, err := c.Decode(SessionTokenCookie, strings.Join(p, ".")); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s with non-zero padding bits: %v, %v; want ErrInvalidToken", name, claims, err)
		}
	}
	if tried < 3 {
		t.Fatalf("only %d segments had padding bits to change", tried)
	}
	for _, bad := range []string{
		strings.Replace(token, ".", "\n.", 2),                              // a newline base64 skips
		strings.Replace(token, ".", "=.", 3),                               // padding
		parts[0] + "." + "." + parts[2] + "+." + parts[3] + "." + parts[4], // standard alphabet
	} {
		if _, err := c.Decode(SessionTokenCookie, bad); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%q: %v; want ErrInvalidToken", bad, err)
		}
	}
	if _, err := c.Decode(SessionTokenCookie, token); err != nil {
		t.Fatalf("the untouched token: %v", err)
	}
}
