package tokens

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// sealVersion is the first byte of every sealed value, so that a later
// layout can be told apart.
const sealVersion = 1

// maxSealed bounds a sealed value's text: anything longer is refused
// before it is decoded.
const maxSealed = 4096

// errUnsealed is every failure to open a sealed value: malformed, sealed
// with a secret no longer configured, tampered with, or of another purpose.
// The callers never say which (an oracle helps nobody but an attacker).
var errUnsealed = errors.New("tokens: not a sealed value of this issuer")

// sealer seals and opens values with AES-256-GCM under keys derived from
// the Auth's secrets (auth.Config.Secrets, newest first) by HKDF-SHA256,
// one key per secret and purpose, as the jwt module derives its keys from
// the same secrets: the newest secret seals, every secret opens, so a
// secret is rotated the way the session cookies' is. The purpose ("refresh
// token", "authorization code") is in the key derivation and in the
// additional data: a value sealed for one purpose never opens as another.
type sealer struct {
	purpose string
	aeads   []cipher.AEAD // newest first
}

func newSealer(secrets []string, purpose string) (*sealer, error) {
	s := &sealer{purpose: purpose}
	for _, secret := range secrets {
		key, err := hkdf.Key(sha256.New, []byte(secret), []byte("authport tokens"), "authport tokens: "+purpose, 32)
		if err != nil {
			return nil, fmt.Errorf("tokens: deriving the %s key: %w", purpose, err)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, gcm)
	}
	if len(s.aeads) == 0 {
		return nil, errors.New("tokens: no secret to seal with")
	}
	return s, nil
}

// seal returns base64url(version ‖ nonce ‖ AES-GCM(plaintext)).
func (s *sealer) seal(plaintext []byte) string {
	a := s.aeads[0]
	out := make([]byte, 1+a.NonceSize(), 1+a.NonceSize()+len(plaintext)+a.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		panic("tokens: crypto/rand failed: " + err.Error()) // never, as of Go 1.24
	}
	out = a.Seal(out, out[1:1+a.NonceSize()], plaintext, []byte(s.purpose))
	return base64.RawURLEncoding.EncodeToString(out)
}

// open returns the plaintext of a value seal made with any configured
// secret, or errUnsealed.
func (s *sealer) open(text string) ([]byte, error) {
	if len(text) == 0 || len(text) > maxSealed {
		return nil, errUnsealed
	}
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || len(raw) < 1 || raw[0] != sealVersion {
		return nil, errUnsealed
	}
	for _, a := range s.aeads {
		if len(raw) < 1+a.NonceSize()+a.Overhead() {
			return nil, errUnsealed
		}
		nonce, ct := raw[1:1+a.NonceSize()], raw[1+a.NonceSize():]
		if pt, err := a.Open(nil, nonce, ct, []byte(s.purpose)); err == nil {
			return pt, nil
		}
	}
	return nil, errUnsealed
}

// maxField bounds each string of a sealed payload.
const maxField = 2048

// writer builds a sealed payload: unsigned and signed varints and
// length-prefixed strings.
type writer struct{ b []byte }

func (w *writer) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}
func (w *writer) time(t time.Time) { w.int(t.UnixMilli()) }

// reader reads what writer wrote; the first failure sticks, and done
// reports it (or bytes left over).
type reader struct {
	b   []byte
	err error
}

func (r *reader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errUnsealed
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errUnsealed
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.uint()
	if r.err != nil {
		return ""
	}
	if n > maxField || n > uint64(len(r.b)) {
		r.err = errUnsealed
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) time() time.Time { return time.UnixMilli(r.int()).UTC() }

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = errUnsealed
	}
	return r.err
}
