package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// Sealing is how second factors keep what must stay secret in places a
// user or a store can read: the pending sign-in and TOTP enrolment tokens
// (given to the browser), and TOTP keys at rest (in the factor record).
// Each is AES-256-GCM with a key derived by HKDF-SHA-256 from a configured
// secret and an info naming the purpose, so that a value sealed for one
// purpose never opens as another. Secrets[0] seals; every secret opens,
// newest first, so that a secret can be rotated without breaking what is
// in flight (and a TOTP key sealed with an older secret is sealed again
// with the newest on its next use).

// The purposes of sealed values: the HKDF info of their keys.
const (
	sealPending    = "authport second factor: pending sign-in"
	sealEnrollment = "authport second factor: totp enrolment"
	sealTOTPKey    = "authport second factor: totp key at rest"
	sealDevice     = "authport second factor: trusted device"
)

// sealNonce is the size of an AES-GCM nonce, and sealOverhead what sealing
// adds to a plaintext (the nonce and the tag).
const (
	sealNonce    = 12
	sealOverhead = sealNonce + 16
)

// errUnsealable is the refusal of a value that no secret opens: forged,
// altered, truncated, or sealed with a secret no longer configured.
var errUnsealable = errors.New("sealed value does not open")

// sealer seals and opens values of one purpose with the configured
// secrets.
type sealer struct {
	aeads []cipher.AEAD // one per secret, newest first
}

// newSealer derives the purpose's key from each secret.
func newSealer(secrets []string, purpose string) (*sealer, error) {
	s := &sealer{aeads: make([]cipher.AEAD, 0, len(secrets))}
	for i, secret := range secrets {
		key, err := hkdf.Key(sha256.New, []byte(secret), nil, purpose, 32)
		if err != nil {
			return nil, fmt.Errorf("deriving the key of Secrets[%d] for %s: %w", i, purpose, err)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// seal returns nonce ‖ ciphertext of plain with aad, under the newest
// secret's key.
func (s *sealer) seal(plain, aad []byte) ([]byte, error) {
	out := make([]byte, sealNonce, sealOverhead+len(plain))
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("reading a random nonce: %w", err)
	}
	return s.aeads[0].Seal(out, out, plain, aad), nil
}

// open opens what seal made with the same aad, trying each secret's key;
// current reports that the newest secret opened it.
func (s *sealer) open(sealed, aad []byte) (plain []byte, current bool, err error) {
	if len(sealed) < sealOverhead {
		return nil, false, errUnsealable
	}
	for i, aead := range s.aeads {
		if p, err := aead.Open(nil, sealed[:sealNonce], sealed[sealNonce:], aad); err == nil {
			return p, i == 0, nil
		}
	}
	return nil, false, errUnsealable
}

// sealString is seal, base64url-encoded without padding: a cookie-safe
// token.
func (s *sealer) sealString(plain, aad []byte) (string, error) {
	b, err := s.seal(plain, aad)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// maxSealedToken bounds the tokens openString decodes: more than any
// token core/auth makes, less than a cookie can hold.
const maxSealedToken = 4096

// openString opens what sealString made.
func (s *sealer) openString(token string, aad []byte) ([]byte, error) {
	if token == "" || len(token) > maxSealedToken {
		return nil, errUnsealable
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, errUnsealable
	}
	p, _, err := s.open(b, aad)
	return p, err
}

// sealers are the sealers of second factors, one per purpose.
type sealers struct {
	pending, enrollment, totpKey, device *sealer
}

// newSealers derives every purpose's keys from the secrets.
func newSealers(secrets []string) (*sealers, error) {
	var s sealers
	var err error
	for _, p := range []struct {
		to      **sealer
		purpose string
	}{{&s.pending, sealPending}, {&s.enrollment, sealEnrollment}, {&s.totpKey, sealTOTPKey}, {&s.device, sealDevice}} {
		if *p.to, err = newSealer(secrets, p.purpose); err != nil {
			return nil, fmt.Errorf("%w: %w", errSealSetup, err)
		}
	}
	return &s, nil
}

var errSealSetup = errors.New("second factors: setting up sealing")
