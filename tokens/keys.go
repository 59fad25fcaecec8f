package tokens

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	jose "github.com/go-jose/go-jose/v4"
)

// The signature algorithms of access tokens.
const (
	// EdDSA is Ed25519 (RFC 8037): small keys and signatures, fast.
	EdDSA = "EdDSA"
	// ES256 is ECDSA on P-256 with SHA-256 (RFC 7518), for verifiers
	// without Ed25519.
	ES256 = "ES256"
)

// Key is one signing key of a [KeySet].
type Key struct {
	// ID is the key's kid: the access tokens it signs name it in their
	// header, and the JWKS publishes it. Required, unique in the set.
	ID string
	// Signer is the private key: an ed25519.PrivateKey ([EdDSA]) or an
	// *ecdsa.PrivateKey on P-256 ([ES256]). The current key (the first of
	// the set) needs it; a previous key kept only so that the tokens it
	// signed still verify may give Public instead.
	Signer crypto.Signer
	// Public is the public key (ed25519.PublicKey or *ecdsa.PublicKey on
	// P-256) when Signer is nil; with Signer set it is ignored.
	Public crypto.PublicKey
	// NotAfter, when set, ends the key: after it the key is neither
	// published nor accepted, and, as the current key, signs nothing (the
	// issuer refuses to issue). Give a previous key a NotAfter at least
	// the access-token lifetime after it stopped signing.
	NotAfter time.Time
}

// KeySet holds the keys that sign and verify access tokens: the current
// key, which signs, and previous keys, which only verify, so that a key
// rotation does not cut off tokens already issued.
//
// Rotation: make a new key ([GenerateKey]), give the set the new key first
// and the old one after it (with a NotAfter, or until you remove it);
// deploy. Tokens signed by the old key keep verifying, at the JWKS route
// and in [Issuer.Verify]. Once the old key has not signed for longer than
// [Config.AccessTokenTTL] (10 minutes by default), no token it signed is
// still valid: remove it. A token signed by a key no longer in the set (or
// past its NotAfter) is refused. Keep the set's private keys where you keep
// secrets (a secret manager; [ParseKeySet] reads a JWKS of private keys,
// e.g. from an environment variable). Keeping keys through the adapter is
// not offered yet.
type KeySet struct {
	keys []setKey // current first
}

type setKey struct {
	Key
	alg    string
	public crypto.PublicKey
	jwk    jose.JSONWebKey // the public JWK, as published
}

// NewKeySet returns the set of keys, the current (signing) key first and
// then the previous ones, newest first. Its error matches
// [core.ErrInvalidConfig] and says what to fix.
func NewKeySet(current Key, previous ...Key) (*KeySet, error) {
	ks := &KeySet{}
	seen := map[string]bool{}
	for i, k := range append([]Key{current}, previous...) {
		if k.ID == "" {
			return nil, fmt.Errorf("%w: tokens key #%d has no ID: give every key a kid (e.g. the date it was made)", core.ErrInvalidConfig, i)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("%w: tokens key ID %q is used twice: give every key a kid of its own", core.ErrInvalidConfig, k.ID)
		}
		seen[k.ID] = true
		pub := k.Public
		if k.Signer != nil {
			pub = k.Signer.Public()
		} else if i == 0 {
			return nil, fmt.Errorf("%w: the current tokens key %q has no Signer: the first key of the set signs, so it needs its private key", core.ErrInvalidConfig, k.ID)
		}
		alg, err := algorithmOf(pub)
		if err != nil {
			return nil, fmt.Errorf("%w: tokens key %q: %w", core.ErrInvalidConfig, k.ID, err)
		}
		if k.Signer != nil {
			switch k.Signer.(type) {
			case ed25519.PrivateKey, *ecdsa.PrivateKey:
			default:
				return nil, fmt.Errorf("%w: tokens key %q: Signer is a %T; give an ed25519.PrivateKey or an *ecdsa.PrivateKey on P-256", core.ErrInvalidConfig, k.ID, k.Signer)
			}
		}
		ks.keys = append(ks.keys, setKey{Key: k, alg: alg, public: pub,
			jwk: jose.JSONWebKey{Key: pub, KeyID: k.ID, Algorithm: alg, Use: "sig"}})
	}
	return ks, nil
}

// algorithmOf returns the JWS algorithm of a public key, or why it has
// none.
func algorithmOf(pub crypto.PublicKey) (string, error) {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return "", errors.New("an Ed25519 key of the wrong size")
		}
		return EdDSA, nil
	case *ecdsa.PublicKey:
		if p == nil || p.Curve != elliptic.P256() {
			return "", errors.New("an ECDSA key not on P-256: ES256 needs P-256")
		}
		return ES256, nil
	case nil:
		return "", errors.New("no key: set Signer (or Public for a previous key)")
	}
	return "", fmt.Errorf("a %T: give an Ed25519 (EdDSA) or P-256 ECDSA (ES256) key", pub)
}

// GenerateKey makes a new key for alg ([EdDSA] or [ES256]) with the kid id.
func GenerateKey(alg, id string) (Key, error) {
	switch alg {
	case EdDSA:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return Key{ID: id, Signer: priv}, err
	case ES256:
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		return Key{ID: id, Signer: priv}, err
	}
	return Key{}, fmt.Errorf("%w: tokens: algorithm %q: use EdDSA or ES256", core.ErrInvalidConfig, alg)
}

// maxKeySet bounds the JWKS ParseKeySet reads.
const maxKeySet = 64 << 10

// ParseKeySet reads a key set from a JWK Set (RFC 7517) whose first key is
// the current one, with its private part ("d"); the others, newest first,
// may be public only. Each key needs a "kid"; a key may carry "exp" (a
// NumericDate, seconds since 1970), read as its NotAfter. Only Ed25519
// (kty OKP, crv Ed25519) and P-256 (kty EC, crv P-256) keys are accepted.
// [KeySet.MarshalPrivateJSON] writes this form. Errors match
// [core.ErrInvalidConfig].
func ParseKeySet(data []byte) (*KeySet, error) {
	if len(data) > maxKeySet {
		return nil, fmt.Errorf("%w: tokens key set: more than %d bytes", core.ErrInvalidConfig, maxKeySet)
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: tokens key set: not a JWK Set ({\"keys\":[…]}): %v", core.ErrInvalidConfig, err)
	}
	if len(raw.Keys) == 0 {
		return nil, fmt.Errorf("%w: tokens key set: no keys; the first key signs and needs its private part", core.ErrInvalidConfig)
	}
	keys := make([]Key, 0, len(raw.Keys))
	for i, m := range raw.Keys {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(m); err != nil {
			return nil, fmt.Errorf("%w: tokens key set: key #%d: %v", core.ErrInvalidConfig, i, err)
		}
		var extra struct {
			Exp *int64 `json:"exp"`
		}
		if err := json.Unmarshal(m, &extra); err != nil {
			return nil, fmt.Errorf("%w: tokens key set: key #%d: exp: %v", core.ErrInvalidConfig, i, err)
		}
		k := Key{ID: jwk.KeyID}
		if extra.Exp != nil {
			if *extra.Exp <= 0 || *extra.Exp > 1<<40 {
				return nil, fmt.Errorf("%w: tokens key set: key #%d: exp %d is not a time", core.ErrInvalidConfig, i, *extra.Exp)
			}
			k.NotAfter = time.Unix(*extra.Exp, 0).UTC()
		}
		switch v := jwk.Key.(type) {
		case ed25519.PrivateKey:
			k.Signer = v
		case *ecdsa.PrivateKey:
			k.Signer = v
		default:
			k.Public = v
		}
		keys = append(keys, k)
	}
	return NewKeySet(keys[0], keys[1:]...)
}

// MarshalPrivateJSON writes the set as a JWK Set with private keys, the
// form [ParseKeySet] reads: keep it secret.
func (ks *KeySet) MarshalPrivateJSON() ([]byte, error) {
	out := make([]json.RawMessage, 0, len(ks.keys))
	for _, k := range ks.keys {
		var key any = k.public
		if k.Signer != nil {
			key = k.Signer
		}
		b, err := json.Marshal(jose.JSONWebKey{Key: key, KeyID: k.ID, Algorithm: k.alg, Use: "sig"})
		if err != nil {
			return nil, err
		}
		if !k.NotAfter.IsZero() {
			b = append(b[:len(b)-1], fmt.Sprintf(`,"exp":%d}`, k.NotAfter.Unix())...)
		}
		out = append(out, b)
	}
	return json.Marshal(map[string]any{"keys": out})
}

// PublicJSON returns the JWK Set (RFC 7517) of the set's public keys in
// force at now (past their NotAfter left out): what GET {base}/jwks
// serves, for verifiers such as an API gateway or jose's
// createRemoteJWKSet.
func (ks *KeySet) PublicJSON(now time.Time) ([]byte, error) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range ks.keys {
		if k.live(now) {
			set.Keys = append(set.Keys, k.jwk)
		}
	}
	return json.Marshal(set)
}

// live reports whether the key is in force at now.
func (k *setKey) live(now time.Time) bool { return k.NotAfter.IsZero() || now.Before(k.NotAfter) }

// current returns the signing key.
func (ks *KeySet) current() *setKey { return &ks.keys[0] }

// byID returns the key with the kid, or nil.
func (ks *KeySet) byID(id string) *setKey {
	for i := range ks.keys {
		if ks.keys[i].ID == id {
			return &ks.keys[i]
		}
	}
	return nil
}

// PublicKey returns the public key with the kid, or nil: to keep a
// previous key in a new set without its private part
// (Key{ID: id, Public: old.PublicKey(id)}).
func (ks *KeySet) PublicKey(id string) crypto.PublicKey {
	if k := ks.byID(id); k != nil {
		return k.public
	}
	return nil
}
