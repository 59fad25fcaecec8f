// Package passkeytest runs real WebAuthn ceremonies without a browser, for
// tests: [Authenticator] is a software authenticator (an ES256 key, "none"
// attestation, real authenticator data, client data and signatures) that
// answers the options of a [passkey.Passkeys] as navigator.credentials and
// the page script would; [Client] calls the two routes as the browser does,
// carrying the challenge cookie; [Run] runs the ceremony scenarios (sign-up,
// sign-in, counters, replays, refusals) against any adapter, to show that
// it stores authenticators so that passkeys work.
//
// go-webauthn verifies what the authenticator makes: nothing in the server
// is bypassed.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

var b64u = base64.RawURLEncoding

// Authenticator is a software WebAuthn authenticator holding one
// credential. It is safe for concurrent use.
type Authenticator struct {
	mu         sync.Mutex
	key        *ecdsa.PrivateKey
	credID     []byte
	userHandle []byte
	counter    uint32
	// BackupEligible and BackedUp set the BE and BS flags it reports
	// (both true: a synced passkey). Set them before [Authenticator.Create].
	BackupEligible, BackedUp bool
}

// NewAuthenticator returns an authenticator with a new P-256 key and a
// random 32-byte credential id.
func NewAuthenticator() (*Authenticator, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	return &Authenticator{key: key, credID: id, BackupEligible: true, BackedUp: true}, nil
}

// CredentialID returns the credential id as Auth.js stores it (standard
// base64).
func (a *Authenticator) CredentialID() string { return base64.StdEncoding.EncodeToString(a.credID) }

// RawCredentialID returns the credential id as the browser sends it
// (base64url, no padding).
func (a *Authenticator) RawCredentialID() string { return b64u.EncodeToString(a.credID) }

// Counter returns the signature counter the last assertion reported.
func (a *Authenticator) Counter() uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counter
}

// Ceremony is what the browser adds around the authenticator: the origin
// it reports, and overrides that forge bad responses.
type Ceremony struct {
	// Origin is the origin the client data reports. Required.
	Origin string
	// RPID, when set, replaces the options' RP id in the authenticator
	// data's rpIdHash.
	RPID string
	// Challenge, when set, replaces the options' challenge (base64url) in
	// the client data.
	Challenge string
	// Counter, when set, is the signature counter reported instead of one
	// more than the last; the authenticator's own counter is unchanged.
	Counter *uint32
	// TamperSignature flips a bit of the assertion's signature.
	TamperSignature bool
	// NoUserVerification clears the user verified flag (UV) of an
	// assertion, as an authenticator that only tested presence reports
	// it (a security key without a PIN).
	NoUserVerification bool
}

// Options is the body of the options route, decoded as the page script
// reads it.
type Options struct {
	Action  string `json:"action"`
	Options struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
		// UserVerification is the options' requirement ("required",
		// "preferred" or "discouraged"); the authenticator verifies its
		// user whatever it says, unless the [Ceremony] says not to.
		UserVerification string `json:"userVerification"`
		RP               struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"rp"`
		User struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"user"`
		AllowCredentials []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
		ExcludeCredentials []struct {
			ID string `json:"id"`
		} `json:"excludeCredentials"`
	} `json:"options"`
}

func (a *Authenticator) flags(attested bool) byte {
	f := byte(0x01 | 0x04) // UP, UV
	if a.BackupEligible {
		f |= 0x08
	}
	if a.BackedUp {
		f |= 0x10
	}
	if attested {
		f |= 0x40
	}
	return f
}

func clientData(typ, challenge, origin string) ([]byte, error) {
	return json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
}

func pick(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// Create answers registration options with the credential, as the JSON
// the page script posts in the "data" field. It remembers the user handle
// of the options, which later assertions return.
func (a *Authenticator) Create(opts Options, c Ceremony) (string, error) {
	if opts.Action != "register" {
		return "", fmt.Errorf("passkeytest: Create for the action %q", opts.Action)
	}
	handle, err := b64u.DecodeString(opts.Options.User.ID)
	if err != nil {
		return "", fmt.Errorf("passkeytest: user.id %q: %w", opts.Options.User.ID, err)
	}
	cd, err := clientData("webauthn.create", pick(c.Challenge, opts.Options.Challenge), c.Origin)
	if err != nil {
		return "", err
	}
	pub, err := a.key.PublicKey.ECDH()
	if err != nil {
		return "", err
	}
	raw := pub.Bytes() // 0x04 || X || Y
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1, // P-256
		XCoord:        raw[1:33],
		YCoord:        raw[33:],
	})
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	a.userHandle = handle
	count := a.counter
	a.mu.Unlock()
	if c.Counter != nil {
		count = *c.Counter
	}
	rpHash := sha256.Sum256([]byte(pick(c.RPID, opts.Options.RP.ID)))
	ad := append([]byte{}, rpHash[:]...)
	ad = append(ad, a.flags(true))
	ad = binary.BigEndian.AppendUint32(ad, count)
	ad = append(ad, make([]byte, 16)...) // AAGUID: none
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(a.credID)))
	ad = append(ad, a.credID...)
	ad = append(ad, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(map[string]any{
		"id":    b64u.EncodeToString(a.credID),
		"rawId": b64u.EncodeToString(a.credID),
		"type":  "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64u.EncodeToString(cd),
			"attestationObject": b64u.EncodeToString(att),
			"transports":        []string{"internal", "hybrid"},
		},
		"clientExtensionResults":  map[string]any{},
		"authenticatorAttachment": "platform",
	})
	return string(out), err
}

// Get answers authentication options with an assertion, as the JSON the
// page script posts. The counter goes up by one first, unless c sets it.
func (a *Authenticator) Get(opts Options, c Ceremony) (string, error) {
	if opts.Action != "authenticate" {
		return "", fmt.Errorf("passkeytest: Get for the action %q", opts.Action)
	}
	a.mu.Lock()
	var count uint32
	if c.Counter != nil {
		count = *c.Counter
	} else {
		a.counter++
		count = a.counter
	}
	handle := a.userHandle
	a.mu.Unlock()
	cd, err := clientData("webauthn.get", pick(c.Challenge, opts.Options.Challenge), c.Origin)
	if err != nil {
		return "", err
	}
	rpHash := sha256.Sum256([]byte(pick(c.RPID, opts.Options.RPID)))
	ad := append([]byte{}, rpHash[:]...)
	flags := a.flags(false)
	if c.NoUserVerification {
		flags &^= 0x04
	}
	ad = append(ad, flags)
	ad = binary.BigEndian.AppendUint32(ad, count)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		return "", err
	}
	if c.TamperSignature {
		sig[len(sig)-1] ^= 0x01
	}
	resp := map[string]any{
		"clientDataJSON":    b64u.EncodeToString(cd),
		"authenticatorData": b64u.EncodeToString(ad),
		"signature":         b64u.EncodeToString(sig),
	}
	if handle != nil {
		resp["userHandle"] = b64u.EncodeToString(handle)
	}
	out, err := json.Marshal(map[string]any{
		"id":                     b64u.EncodeToString(a.credID),
		"rawId":                  b64u.EncodeToString(a.credID),
		"type":                   "public-key",
		"response":               resp,
		"clientExtensionResults": map[string]any{},
	})
	return string(out), err
}
