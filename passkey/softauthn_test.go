package passkey_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// softAuthenticator is a software WebAuthn authenticator with a browser
// around it: it answers the options the server sent the way
// navigator.credentials.create/get and the page script would, with an
// ES256 key, "none" attestation, real authenticator data and client data,
// and real signatures. go-webauthn verifies what it makes.
type softAuthenticator struct {
	key        *ecdsa.PrivateKey
	credID     []byte
	userHandle []byte
	counter    uint32
	// backupEligible and backedUp set the BE and BS flags.
	backupEligible, backedUp bool
}

func newSoftAuthenticator(t testing.TB) *softAuthenticator {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	return &softAuthenticator{key: key, credID: id, backupEligible: true, backedUp: true}
}

var b64u = base64.RawURLEncoding

// ceremony is what the browser adds around the authenticator: the origin
// it reports, and overrides to forge bad responses.
type ceremony struct {
	origin    string
	rpID      string // "" means the options' RP id
	challenge string // "" means the options' challenge
	counter   *uint32
	tamper    bool // flip a bit of the signature
}

type optionsBody struct {
	Action  string `json:"action"`
	Options struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		AllowCredentials []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
		ExcludeCredentials []struct {
			ID string `json:"id"`
		} `json:"excludeCredentials"`
	} `json:"options"`
}

func (a *softAuthenticator) flags(attested bool) byte {
	f := byte(0x01 | 0x04) // UP, UV
	if a.backupEligible {
		f |= 0x08
	}
	if a.backedUp {
		f |= 0x10
	}
	if attested {
		f |= 0x40
	}
	return f
}

func clientData(t testing.TB, typ, challenge, origin string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pick(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// create answers registration options with a new credential, as JSON.
func (a *softAuthenticator) create(t testing.TB, opts optionsBody, c ceremony) string {
	t.Helper()
	if opts.Action != "register" {
		t.Fatalf("create: action %q", opts.Action)
	}
	handle, err := b64u.DecodeString(opts.Options.User.ID)
	if err != nil {
		t.Fatalf("user.id %q: %v", opts.Options.User.ID, err)
	}
	a.userHandle = handle
	cd := clientData(t, "webauthn.create", pick(c.challenge, opts.Options.Challenge), c.origin)
	pub, err := a.key.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	raw := pub.Bytes() // 0x04 || X || Y
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1,
		XCoord:        raw[1:33],
		YCoord:        raw[33:],
	})
	if err != nil {
		t.Fatal(err)
	}
	rpHash := sha256.Sum256([]byte(pick(c.rpID, opts.Options.RP.ID)))
	count := a.counter
	if c.counter != nil {
		count = *c.counter
	}
	ad := append([]byte{}, rpHash[:]...)
	ad = append(ad, a.flags(true))
	ad = binary.BigEndian.AppendUint32(ad, count)
	ad = append(ad, make([]byte, 16)...) // AAGUID: none
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(a.credID)))
	ad = append(ad, a.credID...)
	ad = append(ad, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		t.Fatal(err)
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
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// get answers authentication options with an assertion, as JSON. The
// authenticator's counter goes up by one first, unless c sets it.
func (a *softAuthenticator) get(t testing.TB, opts optionsBody, c ceremony) string {
	t.Helper()
	if opts.Action != "authenticate" {
		t.Fatalf("get: action %q", opts.Action)
	}
	a.counter++
	count := a.counter
	if c.counter != nil {
		count = *c.counter
	}
	cd := clientData(t, "webauthn.get", pick(c.challenge, opts.Options.Challenge), c.origin)
	rpHash := sha256.Sum256([]byte(pick(c.rpID, opts.Options.RPID)))
	ad := append([]byte{}, rpHash[:]...)
	ad = append(ad, a.flags(false))
	ad = binary.BigEndian.AppendUint32(ad, count)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if c.tamper {
		sig[len(sig)-1] ^= 0x01
	}
	resp := map[string]any{
		"clientDataJSON":    b64u.EncodeToString(cd),
		"authenticatorData": b64u.EncodeToString(ad),
		"signature":         b64u.EncodeToString(sig),
	}
	if a.userHandle != nil {
		resp["userHandle"] = b64u.EncodeToString(a.userHandle)
	}
	out, err := json.Marshal(map[string]any{
		"id":                     b64u.EncodeToString(a.credID),
		"rawId":                  b64u.EncodeToString(a.credID),
		"type":                   "public-key",
		"response":               resp,
		"clientExtensionResults": map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
