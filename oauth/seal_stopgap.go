package oauth

// STOPGAP until the jwt module lands on main: an AEAD sealer from the
// standard library with the Codec's method set. Replaced by jwt.NewCodec.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

type stopgapSealer struct {
	secrets []string
	now     func() time.Time
}

func newSealer(now func() time.Time, secrets ...string) (sealer, error) {
	if len(secrets) == 0 || secrets[0] == "" {
		return nil, errors.New("at least one non-empty secret is required")
	}
	return &stopgapSealer{secrets: secrets, now: now}, nil
}

func (s *stopgapSealer) aead(secret, salt string) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, []byte(secret), []byte(salt), "authport check cookie", 32)
	if err != nil {
		return nil, err
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

func (s *stopgapSealer) Encode(salt string, claims map[string]any, maxAge time.Duration) (string, error) {
	body, err := json.Marshal(map[string]any{"c": claims, "exp": s.now().Add(maxAge).Unix()})
	if err != nil {
		return "", err
	}
	a, err := s.aead(s.secrets[0], salt)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(a.Seal(nonce, nonce, body, []byte(salt))), nil
}

var errStopgapInvalid = errors.New("invalid token")

func (s *stopgapSealer) Decode(salt, token string) (map[string]any, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, errStopgapInvalid
	}
	for _, secret := range s.secrets {
		a, err := s.aead(secret, salt)
		if err != nil || len(raw) < a.NonceSize() {
			continue
		}
		body, err := a.Open(nil, raw[:a.NonceSize()], raw[a.NonceSize():], []byte(salt))
		if err != nil {
			continue
		}
		var v struct {
			C   map[string]any `json:"c"`
			Exp int64          `json:"exp"`
		}
		if json.Unmarshal(body, &v) != nil {
			return nil, errStopgapInvalid
		}
		if s.now().Unix() >= v.Exp {
			return nil, errors.New("expired token")
		}
		return v.C, nil
	}
	return nil, errStopgapInvalid
}
