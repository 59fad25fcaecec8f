package jwt

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// t0 is a fixed "now" for tests that use the clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixed(at time.Time) func() time.Time { return func() time.Time { return at } }

func mustCodec(t testing.TB, secrets ...string) *Codec {
	t.Helper()
	c, err := NewCodec(secrets...)
	if err != nil {
		t.Fatalf("NewCodec: %v", err)
	}
	return c
}

// viaJSON returns v as decoded JSON (numbers float64), the shape Decode returns.
func viaJSON(t testing.TB, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	return jsonObject(t, b, err)
}

// header returns the decoded protected header of a compact token.
func header(t testing.TB, token string) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	return jsonObject(t, raw, err)
}

// jsonObject returns the JSON object b decoded, failing t when err (the
// error of making b) is not nil or b is no JSON object.
func jsonObject(t testing.TB, b []byte, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// seal makes a compact JWE of plaintext with go-jose directly, for the tokens
// Encode would never make: another enc, extra or missing header parameters.
func seal(t testing.TB, secret, salt string, enc jose.ContentEncryption, kid string, extra map[string]any, plaintext string) string {
	t.Helper()
	length := map[jose.ContentEncryption]int{jose.A256CBC_HS512: 64, jose.A256GCM: 32, jose.A128GCM: 16, jose.A128CBC_HS256: 32}[enc]
	key, err := hkdf.Key(sha256.New, []byte(secret), []byte(salt), "Auth.js Generated Encryption Key ("+salt+")", length)
	if err != nil {
		t.Fatal(err)
	}
	if kid == "derive" {
		kid = thumbprint(key)
	}
	opts := &jose.EncrypterOptions{}
	for k, v := range extra {
		opts = opts.WithHeader(jose.HeaderKey(k), v)
	}
	e, err := jose.NewEncrypter(enc, jose.Recipient{Algorithm: jose.DIRECT, Key: key, KeyID: kid}, opts)
	return compact(t, e, err, plaintext)
}

// compact returns plaintext encrypted by e as a compact JWE, failing t
// when err (the error of making e) is not nil or the encryption fails.
func compact(t testing.TB, e jose.Encrypter, err error, plaintext string) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	obj, err := e.Encrypt([]byte(plaintext))
	if err != nil {
		t.Fatal(err)
	}
	s, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewCodecRejectsMissingSecrets(t *testing.T) {
	for name, secrets := range map[string][]string{
		"none":         nil,
		"empty":        {""},
		"second empty": {"a", ""},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := NewCodec(secrets...)
			if !errors.Is(err, ErrInvalidArgument) || c != nil {
				t.Fatalf("NewCodec(%q) = %v, %v; want nil, ErrInvalidArgument", secrets, c, err)
			}
		})
	}
}

func TestZeroAndNilCodecReturnErrors(t *testing.T) {
	for name, c := range map[string]*Codec{"nil": nil, "zero": {}, "nil with clock": (*Codec)(nil).WithClock(nil)} {
		t.Run(name, func(t *testing.T) {
			if _, err := c.Encode(SessionTokenCookie, nil, 0); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Encode: %v; want ErrInvalidArgument", err)
			}
			if _, err := c.Decode(SessionTokenCookie, "a.b.c.d.e"); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Decode: %v; want ErrInvalidArgument", err)
			}
			_ = c.String()
		})
	}
}

func TestRoundTrip(t *testing.T) {
	c := mustCodec(t, "a-secret").WithClock(fixed(t0))
	claims := map[string]any{
		"name":    "Ada",
		"email":   "ada@example.com",
		"picture": nil,
		"sub":     "user-1",
		"n":       42,
		"ratio":   0.25,
		"ok":      true,
		"roles":   []string{"admin", "<editor> & co"},
		"nested":  map[string]any{"deep": []any{1, "two", nil}},
		"jti":     "caller's jti is replaced",
	}
	before := viaJSON(t, claims)
	token, err := c.Encode(SessionTokenCookie, claims, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaJSON(t, claims), before) {
		t.Fatal("Encode modified the caller's claims")
	}
	got, err := c.Decode(SessionTokenCookie, token)
	if err != nil {
		t.Fatal(err)
	}
	if got["iat"] != float64(t0.Unix()) || got["exp"] != float64(t0.Add(time.Hour).Unix()) {
		t.Errorf("iat, exp = %v, %v; want %d, %d", got["iat"], got["exp"], t0.Unix(), t0.Add(time.Hour).Unix())
	}
	jti, _ := got["jti"].(string)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(jti) {
		t.Errorf("jti = %q; want a random UUID", jti)
	}
	want := before
	want["iat"], want["exp"], want["jti"] = got["iat"], got["exp"], got["jti"]
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claims:\n got %v\nwant %v", got, want)
	}

	h := header(t, token)
	key, _ := deriveKey([]byte("a-secret"), SessionTokenCookie, encCBC)
	if wantH := map[string]any{"alg": "dir", "enc": "A256CBC-HS512", "kid": thumbprint(key)}; !reflect.DeepEqual(h, wantH) {
		t.Errorf("header = %v; want %v", h, wantH)
	}
	if parts := strings.Split(token, "."); len(parts) != 5 || parts[1] != "" {
		t.Errorf("token %q: want 5 parts with an empty encrypted key", token)
	}

	again, err := c.Encode(SessionTokenCookie, claims, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got2, err := c.Decode(SessionTokenCookie, again)
	if err != nil {
		t.Fatal(err)
	}
	if again == token || got2["jti"] == got["jti"] {
		t.Error("two encodes gave the same token or jti")
	}
}

func TestEncodeMaxAge(t *testing.T) {
	c := mustCodec(t, "s").WithClock(fixed(t0))
	for _, tc := range []struct {
		maxAge time.Duration
		exp    int64 // seconds after t0; -1: error
	}{
		{0, int64(DefaultMaxAge / time.Second)},
		{15 * time.Minute, 900},
		{1500 * time.Millisecond, 1},
		{time.Second, 1},
		{500 * time.Millisecond, -1},
		{-time.Hour, -1},
	} {
		token, err := c.Encode(SessionTokenCookie, nil, tc.maxAge)
		if tc.exp < 0 {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("maxAge %v: err %v; want ErrInvalidArgument", tc.maxAge, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("maxAge %v: %v", tc.maxAge, err)
		}
		got, err := c.Decode(SessionTokenCookie, token)
		if err != nil {
			t.Fatal(err)
		}
		if got["exp"] != float64(t0.Unix()+tc.exp) {
			t.Errorf("maxAge %v: exp %v; want t0+%d", tc.maxAge, got["exp"], tc.exp)
		}
	}
	if DefaultMaxAge != 30*24*time.Hour {
		t.Errorf("DefaultMaxAge = %v; Auth.js's is 30 days", DefaultMaxAge)
	}
}

func TestEncodeRejectsBadClaimsAndSalt(t *testing.T) {
	c := mustCodec(t, "s")
	for name, claims := range map[string]map[string]any{
		"channel": {"c": make(chan int)},
		"NaN":     {"n": math.NaN()},
		"func":    {"f": func() {}},
	} {
		if _, err := c.Encode(SessionTokenCookie, claims, 0); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v; want ErrInvalidArgument", name, err)
		}
	}
	if _, err := c.Encode("", nil, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("empty salt: %v; want ErrInvalidArgument", err)
	}
	if _, err := c.Decode("", "a.b.c.d.e"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Decode empty salt: %v; want ErrInvalidArgument", err)
	}
}

// TestKnownAnswer decodes tokens Auth.js made and checks the derived keys and
// key ids against the values Auth.js's own libraries computed, so the format
// is checked even where Node is not installed.
func TestKnownAnswer(t *testing.T) {
	raw, err := os.ReadFile("testdata/authjs-tokens.json")
	if err != nil {
		t.Fatal(err)
	}
	var kat struct {
		Secret string
		Tokens []struct {
			Salt, Token, JTI string
			Claims           map[string]any
			IAT, Exp         int64
		}
		Keys []struct{ Salt, Enc, Key, KID string }
	}
	if err := json.Unmarshal(raw, &kat); err != nil {
		t.Fatal(err)
	}
	for _, k := range kat.Keys {
		key, err := deriveKey([]byte(kat.Secret), k.Salt, k.Enc)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(key) != k.Key {
			t.Errorf("%s %s: key %x; Auth.js derives %s", k.Salt, k.Enc, key, k.Key)
		}
		if got := thumbprint(key); got != k.KID {
			t.Errorf("%s %s: kid %s; Auth.js computes %s", k.Salt, k.Enc, got, k.KID)
		}
	}
	for _, tok := range kat.Tokens {
		t.Run(tok.Salt, func(t *testing.T) {
			c := mustCodec(t, kat.Secret).WithClock(fixed(time.Unix(tok.IAT, 0)))
			got, err := c.Decode(tok.Salt, tok.Token)
			if err != nil {
				t.Fatal(err)
			}
			want := tok.Claims
			want["iat"], want["exp"], want["jti"] = float64(tok.IAT), float64(tok.Exp), tok.JTI
			if !reflect.DeepEqual(got, want) {
				t.Errorf("claims:\n got %v\nwant %v", got, want)
			}
			late := c.WithClock(fixed(time.Unix(tok.Exp, 0).Add(ClockTolerance)))
			if _, err := late.Decode(tok.Salt, tok.Token); !errors.Is(err, ErrExpiredToken) {
				t.Errorf("at exp+15s: %v; want ErrExpiredToken", err)
			}
			if _, err := c.Decode(tok.Salt+"x", tok.Token); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("other salt: %v; want ErrInvalidToken", err)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	oldC := mustCodec(t, "secret-A")
	newC := mustCodec(t, "secret-B")
	both := mustCodec(t, "secret-B", "secret-A")

	fromA, err := oldC.Encode(SessionTokenCookie, map[string]any{"sub": "a"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := both.Decode(SessionTokenCookie, fromA); err != nil || got["sub"] != "a" {
		t.Errorf("codec(B, A) decoding a token of A: %v, %v", got, err)
	}
	if _, err := newC.Decode(SessionTokenCookie, fromA); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("codec(B) decoding a token of A: %v; want ErrInvalidToken", err)
	}

	fromBoth, err := both.Encode(SessionTokenCookie, map[string]any{"sub": "b"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newC.Decode(SessionTokenCookie, fromBoth); err != nil {
		t.Errorf("codec(B, A) must encode with B: codec(B) says %v", err)
	}
	if _, err := oldC.Decode(SessionTokenCookie, fromBoth); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("codec(A) decoding a token of B: %v; want ErrInvalidToken", err)
	}
}

func TestWrongSalt(t *testing.T) {
	c := mustCodec(t, "s")
	token, err := c.Encode(SessionTokenCookie, map[string]any{"sub": "x"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, salt := range []string{SecureSessionTokenCookie, "authjs.state", SessionTokenCookie + " "} {
		if _, err := c.Decode(salt, token); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("salt %q: %v; want ErrInvalidToken", salt, err)
		}
	}
}

// flip changes one character in the middle of s (not the last, whose low
// bits base64 may ignore).
func flip(s string) string {
	if s == "" {
		return "AAAA"
	}
	i := len(s) / 2
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestTamperEachPart(t *testing.T) {
	c := mustCodec(t, "s")
	token, err := c.Encode(SessionTokenCookie, map[string]any{"sub": "x", "role": "user"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	headerJSON, _ := base64.RawURLEncoding.DecodeString(parts[0])
	for i, name := range []string{"header", "encrypted key", "iv", "ciphertext", "tag"} {
		t.Run(name, func(t *testing.T) {
			p := append([]string(nil), parts...)
			p[i] = flip(p[i])
			if i == 0 { // a header that still parses, so the tag check is what fails
				p[0] = base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(headerJSON), `"dir"`, `"dir","x":1`, 1)))
			}
			if _, err := c.Decode(SessionTokenCookie, strings.Join(p, ".")); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("%v; want ErrInvalidToken", err)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		for _, bad := range []string{token[:len(token)-1], token + "A", token + ".", strings.Join(parts[:4], ".")} {
			if _, err := c.Decode(SessionTokenCookie, bad); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("%q: %v; want ErrInvalidToken", bad, err)
			}
		}
	})
	if _, err := c.Decode(SessionTokenCookie, token); err != nil {
		t.Fatalf("the untouched token: %v", err)
	}
}

func TestExpiryUsesClockWithTolerance(t *testing.T) {
	c := mustCodec(t, "s").WithClock(fixed(t0))
	token, err := c.Encode(SessionTokenCookie, map[string]any{"sub": "x"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	exp := t0.Add(time.Hour)
	for _, tc := range []struct {
		at      time.Time
		expired bool
	}{
		{t0, false},
		{exp, false},
		{exp.Add(ClockTolerance - time.Second), false},
		{exp.Add(ClockTolerance - time.Nanosecond), false}, // seconds, truncated
		{exp.Add(ClockTolerance), true},
		{exp.Add(24 * time.Hour), true},
	} {
		_, err := c.WithClock(fixed(tc.at)).Decode(SessionTokenCookie, token)
		if tc.expired != errors.Is(err, ErrExpiredToken) || (!tc.expired && err != nil) {
			t.Errorf("at exp%+v: %v; expired = %v", tc.at.Sub(exp), err, tc.expired)
		}
		if tc.expired && errors.Is(err, ErrInvalidToken) {
			t.Errorf("an expired token must not also match ErrInvalidToken: %v", err)
		}
	}
	if ClockTolerance != 15*time.Second {
		t.Errorf("ClockTolerance = %v; Auth.js's is 15s", ClockTolerance)
	}
}

func TestNotBefore(t *testing.T) {
	c := mustCodec(t, "s").WithClock(fixed(t0))
	token, err := c.Encode(SessionTokenCookie, map[string]any{"nbf": t0.Add(time.Minute).Unix()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(SessionTokenCookie, token); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("nbf a minute ahead: %v; want ErrInvalidToken", err)
	}
	if _, err := c.WithClock(fixed(t0.Add(time.Minute-ClockTolerance))).Decode(SessionTokenCookie, token); err != nil {
		t.Errorf("nbf within the tolerance: %v", err)
	}
}

func TestHeaderChecks(t *testing.T) {
	const salt = SessionTokenCookie
	c := mustCodec(t, "new", "old")
	valid := `{"sub":"x"}`
	key, _ := deriveKey([]byte("old"), salt, encCBC)
	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"A256GCM with kid", seal(t, "old", salt, jose.A256GCM, "derive", nil, valid), true},
		{"A256GCM without kid", seal(t, "old", salt, jose.A256GCM, "", nil, valid), true},
		{"no kid: every secret is tried", seal(t, "old", salt, jose.A256CBC_HS512, "", nil, valid), true},
		{"no kid, unknown secret", seal(t, "other", salt, jose.A256CBC_HS512, "", nil, valid), false},
		{"kid of another key", seal(t, "old", salt, jose.A256CBC_HS512, thumbprint(key[:32]), nil, valid), false},
		{"kid not a string", seal(t, "old", salt, jose.A256CBC_HS512, "", map[string]any{"kid": 7}, valid), false},
		{"enc A128GCM", seal(t, "old", salt, jose.A128GCM, "", nil, valid), false},
		{"enc A128CBC-HS256", seal(t, "old", salt, jose.A128CBC_HS256, "", nil, valid), false},
		{"crit", seal(t, "old", salt, jose.A256CBC_HS512, "derive", map[string]any{"crit": []string{"exp"}, "exp": 1}, valid), false},
		{"sub copied in the header, same", seal(t, "old", salt, jose.A256CBC_HS512, "derive", map[string]any{"sub": "x"}, valid), true},
		{"sub copied in the header, different", seal(t, "old", salt, jose.A256CBC_HS512, "derive", map[string]any{"sub": "y"}, valid), false},
		{"iss in the header only", seal(t, "old", salt, jose.A256CBC_HS512, "derive", map[string]any{"iss": "y"}, valid), false},
		{"aud copied in the header", seal(t, "old", salt, jose.A256CBC_HS512, "derive", map[string]any{"aud": []string{"a"}}, `{"aud":["a"]}`), true},
		{"claims null", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, `null`), false},
		{"claims an array", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, `[1]`), false},
		{"claims a string", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, `"x"`), false},
		{"claims empty", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, ``), false},
		{"claims not UTF-8", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, "{\"a\":\"\xff\"}"), false},
		{"iat a string", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, `{"iat":"1"}`), false},
		{"exp a string", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, `{"exp":"1"}`), false},
		{"no exp (Auth.js accepts it too)", seal(t, "old", salt, jose.A256CBC_HS512, "derive", nil, `{}`), true},
	}
	// alg other than dir: a key-wrapped JWE (A256KW) under the same derived key.
	kw, err := jose.NewEncrypter(jose.A256CBC_HS512, jose.Recipient{Algorithm: jose.A256KW, Key: key[:32]}, nil)
	kwToken := compact(t, kw, err, valid)
	cases = append(cases, struct {
		name  string
		token string
		ok    bool
	}{"alg A256KW", kwToken, false})
	// A JWS (signed, not encrypted) token.
	cases = append(cases, struct {
		name  string
		token string
		ok    bool
	}{"a JWS", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", false})
	// The header says alg none.
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","enc":"A256CBC-HS512"}`))
	parts := strings.Split(seal(t, "old", salt, jose.A256CBC_HS512, "", nil, valid), ".")
	parts[0] = none
	cases = append(cases, struct {
		name  string
		token string
		ok    bool
	}{"alg none", strings.Join(parts, "."), false})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Decode(salt, tc.token)
			if tc.ok && err != nil {
				t.Errorf("want accepted, got %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidToken) {
				t.Errorf("want ErrInvalidToken, got %v", err)
			}
		})
	}
}

func TestStringHidesSecrets(t *testing.T) {
	c := mustCodec(t, "very-secret-value", "older-secret")
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(s, "very") || strings.Contains(s, "older") || strings.Contains(s, "118") { // 118 = 'v'
			t.Errorf("formatted codec shows its secrets: %s", s)
		}
	}
}

// TestConcurrentUse runs encoders and decoders on one Codec at once (for -race).
func TestConcurrentUse(t *testing.T) {
	c := mustCodec(t, "b", "a")
	older := mustCodec(t, "a")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Go(func() {
			for j := range 8 {
				enc := c
				if j%2 == 1 {
					enc = older
				}
				tok, err := enc.Encode(SessionTokenCookie, map[string]any{"i": i, "j": j}, 0)
				if err != nil {
					errs <- err
					return
				}
				got, err := c.Decode(SessionTokenCookie, tok)
				if err != nil {
					errs <- err
					return
				}
				if got["i"] != float64(i) || got["j"] != float64(j) {
					errs <- fmt.Errorf("goroutine %d/%d got %v", i, j, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
