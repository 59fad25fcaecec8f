package jwt

import (
	"bytes"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	jose "github.com/go-jose/go-jose/v4"
)

// DefaultMaxAge is the lifetime Encode gives a token when maxAge is zero:
// 30 days, Auth.js's default session maxAge.
const DefaultMaxAge = 30 * 24 * time.Hour

// ClockTolerance is how far past its "exp" (or before its "nbf") a token is
// still accepted by Decode: 15 seconds, as in Auth.js.
const ClockTolerance = 15 * time.Second

// The content encryptions Auth.js uses: it encodes with A256CBC-HS512 and
// decodes either.
const (
	encCBC = "A256CBC-HS512"
	encGCM = "A256GCM"
)

var (
	// ErrInvalidToken is returned by Decode for a token that is malformed,
	// was made with another secret or another salt (cookie name), was
	// tampered with, or whose claims are not a JSON object with valid
	// registered claims.
	ErrInvalidToken = errors.New("jwt: invalid token")

	// ErrExpiredToken is returned by Decode for a token whose "exp" is more
	// than ClockTolerance in the past. The token was genuine: the session
	// it carries has ended and the user must sign in again.
	ErrExpiredToken = errors.New("jwt: token expired")

	// ErrInvalidArgument is returned for a call that cannot be served as
	// made: no secret or an empty one, an empty salt, a negative maxAge,
	// claims that do not marshal to JSON, or a Codec not made by NewCodec.
	ErrInvalidArgument = errors.New("jwt: invalid argument")
)

// Codec encodes and decodes Auth.js JWTs. Secrets are newest first: the first
// encodes, all are tried when decoding.
//
// A Codec is immutable and safe for concurrent use. Its String method never
// shows the secrets.
type Codec struct {
	secrets [][]byte
	now     func() time.Time
}

// NewCodec returns a Codec for the given secrets (AUTH_SECRET, or the list
// Auth.js takes for rotation, newest first). It returns an error matching
// ErrInvalidArgument when there is no secret or one of them is empty.
func NewCodec(secrets ...string) (*Codec, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: no secret: pass AUTH_SECRET (newest first when rotating)", ErrInvalidArgument)
	}
	c := &Codec{secrets: make([][]byte, len(secrets)), now: time.Now}
	for i, s := range secrets {
		if s == "" {
			return nil, fmt.Errorf("%w: secret %d of %d is empty", ErrInvalidArgument, i+1, len(secrets))
		}
		c.secrets[i] = []byte(s)
	}
	return c, nil
}

// WithClock returns a copy of c that reads the time from now: the "iat" and
// "exp" Encode writes and the expiry Decode checks. Tests use it to check
// expiry without waiting. A nil now means time.Now.
func (c *Codec) WithClock(now func() time.Time) *Codec {
	if now == nil {
		now = time.Now
	}
	if c == nil {
		return &Codec{now: now}
	}
	return &Codec{secrets: c.secrets, now: now}
}

// String describes c without its secrets.
func (c *Codec) String() string {
	if c == nil {
		return "jwt.Codec(nil)"
	}
	return fmt.Sprintf("jwt.Codec{%d secret(s)}", len(c.secrets))
}

// GoString describes c without its secrets, for %#v.
func (c *Codec) GoString() string { return c.String() }

func (c *Codec) check(salt string) error {
	if c == nil || len(c.secrets) == 0 {
		return fmt.Errorf("%w: Codec has no secret: make it with NewCodec", ErrInvalidArgument)
	}
	if salt == "" {
		return fmt.Errorf("%w: empty salt: pass the cookie name, e.g. %q", ErrInvalidArgument, SessionTokenCookie)
	}
	return nil
}

func (c *Codec) clock() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

// Encode returns an Auth.js JWT carrying claims, encrypted with the first
// secret under the key derived for salt, the name of the cookie the token
// goes in (e.g. "authjs.session-token" or "__Secure-authjs.session-token").
//
// Like Auth.js, it sets "iat" to now, "exp" to now plus maxAge (whole
// seconds; zero means DefaultMaxAge) and "jti" to a random UUID, replacing any
// such claims given; the claims map itself is not modified. Errors match
// ErrInvalidArgument.
func (c *Codec) Encode(salt string, claims map[string]any, maxAge time.Duration) (string, error) {
	if err := c.check(salt); err != nil {
		return "", err
	}
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if maxAge < time.Second {
		return "", fmt.Errorf("%w: maxAge %v: must be zero (the default, 30 days) or at least one second", ErrInvalidArgument, maxAge)
	}
	now := c.clock().Unix()
	payload := make(map[string]any, len(claims)+3)
	for k, v := range claims {
		payload[k] = v
	}
	payload["iat"] = now
	payload["exp"] = now + int64(maxAge/time.Second)
	payload["jti"] = newUUID()

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	if err := enc.Encode(payload); err != nil {
		return "", fmt.Errorf("%w: claims do not marshal to JSON: %v", ErrInvalidArgument, err)
	}
	plaintext := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))

	key, err := deriveKey(c.secrets[0], salt, encCBC)
	if err != nil {
		return "", err
	}
	encrypter, err := jose.NewEncrypter(jose.A256CBC_HS512,
		jose.Recipient{Algorithm: jose.DIRECT, Key: key, KeyID: thumbprint(key)}, nil)
	if err != nil {
		return "", fmt.Errorf("jwt: encode: %w", err)
	}
	obj, err := encrypter.Encrypt(plaintext)
	if err != nil {
		return "", fmt.Errorf("jwt: encode: %w", err)
	}
	token, err := obj.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("jwt: encode: %w", err)
	}
	return token, nil
}

// Decode returns the claims of an Auth.js JWT made for salt (the cookie name)
// with any of c's secrets. Numbers come back as float64, as in JavaScript.
//
// The token must be a compact JWE with algorithm "dir" and content encryption
// A256CBC-HS512 or A256GCM. When its header carries a "kid", the secret whose
// derived key has that thumbprint decrypts it; without one every secret is
// tried (Auth.js tries only the first). A token expired by more than
// ClockTolerance returns an error matching ErrExpiredToken; any other
// failure (malformed, wrong secret, wrong salt, tampered, claims not a JSON
// object, "nbf" in the future, "iss"/"sub"/"aud" header parameters that
// differ from the claims) matches ErrInvalidToken. An empty salt or a Codec
// not made by NewCodec matches ErrInvalidArgument.
func (c *Codec) Decode(salt string, token string) (map[string]any, error) {
	if err := c.check(salt); err != nil {
		return nil, err
	}
	if token == "" {
		return nil, fmt.Errorf("%w: empty token", ErrInvalidToken)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 5 {
		return nil, fmt.Errorf("%w: not a compact JWE (want 5 dot-separated parts, got %d)", ErrInvalidToken, len(parts))
	}
	if parts[1] != "" {
		return nil, fmt.Errorf("%w: unexpected encrypted key: algorithm \"dir\" has none", ErrInvalidToken)
	}
	for i, part := range parts {
		if !canonicalBase64URL(part) {
			return nil, fmt.Errorf("%w: part %d is not canonical unpadded base64url", ErrInvalidToken, i+1)
		}
	}
	obj, err := jose.ParseEncryptedCompact(token,
		[]jose.KeyAlgorithm{jose.DIRECT},
		[]jose.ContentEncryption{jose.A256CBC_HS512, jose.A256GCM})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	header, err := parseHeader(parts[0])
	if err != nil {
		return nil, err
	}
	enc, _ := header["enc"].(string)

	var plaintext []byte
	found := false
	kid, hasKID := header["kid"]
	for _, secret := range c.secrets {
		key, err := deriveKey(secret, salt, enc)
		if err != nil {
			return nil, err
		}
		if hasKID {
			s, ok := kid.(string)
			if !ok || subtle.ConstantTimeCompare([]byte(s), []byte(thumbprint(key))) != 1 {
				continue
			}
		}
		plaintext, err = obj.Decrypt(key)
		if err == nil {
			found = true
			break
		}
		if hasKID {
			return nil, fmt.Errorf("%w: cannot decrypt (%v): the token was altered, or is not one Auth.js makes", ErrInvalidToken, err)
		}
	}
	if !found {
		if hasKID {
			return nil, fmt.Errorf("%w: no secret matches the token's key id: it was made with another secret, or for another cookie name (salt %q)", ErrInvalidToken, salt)
		}
		return nil, fmt.Errorf("%w: decryption failed: the token was made with another secret or for another cookie name (salt %q), or altered", ErrInvalidToken, salt)
	}
	claims, err := parseClaims(plaintext)
	if err != nil {
		return nil, err
	}
	if err := checkClaims(header, claims, c.clock()); err != nil {
		return nil, err
	}
	return claims, nil
}

// strictBase64URL is unpadded base64url that refuses non-zero unused bits
// in the last character.
var strictBase64URL = base64.RawURLEncoding.Strict()

// canonicalBase64URL reports whether part is the one spelling of its bytes
// in unpadded base64url (RFC 7515 §2): only the URL alphabet, no padding,
// no line breaks (which the decoder would skip), and zero unused bits in
// the last character. Without this check, changing those bits, or adding a
// newline, gives another token that decodes to the same session.
func canonicalBase64URL(part string) bool {
	if strings.ContainsAny(part, "\r\n") {
		return false
	}
	_, err := strictBase64URL.DecodeString(part)
	return err == nil
}

// parseHeader decodes the protected header (go-jose has already checked
// that it is valid base64url JSON with allowed "alg" and "enc").
func parseHeader(part string) (map[string]any, error) {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return nil, fmt.Errorf("%w: protected header: %v", ErrInvalidToken, err)
	}
	var header map[string]any
	if err := json.Unmarshal(raw, &header); err != nil || header == nil {
		return nil, fmt.Errorf("%w: protected header is not a JSON object", ErrInvalidToken)
	}
	return header, nil
}

// parseClaims reads the plaintext as jose's jwtDecrypt does: strict UTF-8,
// a top-level JSON object.
func parseClaims(plaintext []byte) (map[string]any, error) {
	if !utf8.Valid(plaintext) {
		return nil, fmt.Errorf("%w: claims are not valid UTF-8", ErrInvalidToken)
	}
	var claims map[string]any
	if err := json.Unmarshal(plaintext, &claims); err != nil || claims == nil {
		return nil, fmt.Errorf("%w: claims are not a top-level JSON object", ErrInvalidToken)
	}
	return claims, nil
}

// checkClaims applies the checks jose's jwtDecrypt makes with Auth.js's
// options: numeric iat/nbf/exp, nbf and exp against the clock with
// ClockTolerance, and header copies of iss/sub/aud equal to the claims.
func checkClaims(header, claims map[string]any, now time.Time) error {
	nowSec := float64(now.Unix())
	tolerance := ClockTolerance.Seconds()
	numeric := func(name string) (float64, bool, error) {
		v, ok := claims[name]
		if !ok {
			return 0, false, nil
		}
		f, isNum := v.(float64)
		if !isNum {
			return 0, false, fmt.Errorf("%w: %q claim must be a number", ErrInvalidToken, name)
		}
		return f, true, nil
	}
	if _, _, err := numeric("iat"); err != nil {
		return err
	}
	if nbf, ok, err := numeric("nbf"); err != nil {
		return err
	} else if ok && nbf > nowSec+tolerance {
		return fmt.Errorf("%w: not valid before %s", ErrInvalidToken, time.Unix(int64(nbf), 0).UTC().Format(time.RFC3339))
	}
	if exp, ok, err := numeric("exp"); err != nil {
		return err
	} else if ok && exp <= nowSec-tolerance {
		return fmt.Errorf("%w at %s: sign in again", ErrExpiredToken, time.Unix(int64(exp), 0).UTC().Format(time.RFC3339))
	}
	for _, name := range []string{"iss", "sub", "aud"} {
		hv, inHeader := header[name]
		if !inHeader {
			continue
		}
		cv, inClaims := claims[name]
		same := inClaims
		if same {
			if name == "aud" {
				same = reflect.DeepEqual(hv, cv) // JSON.stringify equality
			} else {
				same = primitiveEqual(hv, cv) // ===
			}
		}
		if !same {
			return fmt.Errorf("%w: %q header parameter differs from the %q claim", ErrInvalidToken, name, name)
		}
	}
	return nil
}

// primitiveEqual is JavaScript's === on decoded JSON: objects and arrays are
// never equal to another value.
func primitiveEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string, float64, bool:
		return a == b
	}
	return false
}

// deriveKey derives the content encryption key for enc from secret and salt
// as Auth.js's getDerivedEncryptionKey does.
func deriveKey(secret []byte, salt, enc string) ([]byte, error) {
	var length int
	switch enc {
	case encCBC:
		length = 64
	case encGCM:
		length = 32
	default:
		return nil, fmt.Errorf("%w: unsupported content encryption %q", ErrInvalidToken, enc)
	}
	key, err := hkdf.Key(sha256.New, secret, []byte(salt), "Auth.js Generated Encryption Key ("+salt+")", length)
	if err != nil {
		return nil, fmt.Errorf("jwt: derive key: %w", err)
	}
	return key, nil
}

// thumbprint is the RFC 7638 thumbprint of key as a JWK of type "oct",
// hashed with SHA-256 for a 32-byte key and SHA-512 for a 64-byte one (Auth.js
// picks the hash by the key's bit length), base64url-encoded.
func thumbprint(key []byte) string {
	members := `{"k":"` + base64.RawURLEncoding.EncodeToString(key) + `","kty":"oct"}`
	var sum []byte
	if len(key) == 64 {
		s := sha512.Sum512([]byte(members))
		sum = s[:]
	} else {
		s := sha256.Sum256([]byte(members))
		sum = s[:]
	}
	return base64.RawURLEncoding.EncodeToString(sum)
}

// newUUID returns a random (version 4) UUID, as crypto.randomUUID does.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand aborts the program instead
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
