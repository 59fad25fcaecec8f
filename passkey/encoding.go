package passkey

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authport/authport/core"
)

// Auth.js's credentialDeviceType values (SimpleWebAuthn's): a credential
// that may be backed up (BE flag) is "multiDevice".
const (
	DeviceTypeSingle = "singleDevice"
	DeviceTypeMulti  = "multiDevice"
)

// decodeBase64 reads a stored base64 value as Auth.js's Buffer.from(s,
// "base64") does: standard or URL alphabet, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// transports parses Auth.js's comma-joined transports.
func transports(s *string) []protocol.AuthenticatorTransport {
	if s == nil || *s == "" {
		return nil
	}
	parts := strings.Split(*s, ",")
	out := make([]protocol.AuthenticatorTransport, 0, len(parts))
	for _, t := range parts {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, protocol.AuthenticatorTransport(t))
		}
	}
	return out
}

// descriptor is the stored authenticator as an allowed or excluded
// credential of the options.
func descriptor(a core.Authenticator) (protocol.CredentialDescriptor, error) {
	id, err := decodeBase64(a.CredentialID)
	if err != nil {
		return protocol.CredentialDescriptor{}, fmt.Errorf("passkey: stored authenticator %q: credentialID is not base64: %w", a.CredentialID, err)
	}
	return protocol.CredentialDescriptor{Type: protocol.PublicKeyCredentialType, CredentialID: id, Transport: transports(a.Transports)}, nil
}

// toCredential is the stored authenticator as go-webauthn's credential
// record.
func toCredential(a core.Authenticator) (webauthn.Credential, error) {
	id, err := decodeBase64(a.CredentialID)
	if err != nil {
		return webauthn.Credential{}, fmt.Errorf("passkey: stored authenticator %q: credentialID is not base64: %w", a.CredentialID, err)
	}
	key, err := decodeBase64(a.CredentialPublicKey)
	if err != nil {
		return webauthn.Credential{}, fmt.Errorf("passkey: stored authenticator %q: credentialPublicKey is not base64: %w", a.CredentialID, err)
	}
	count := a.Counter
	if count < 0 {
		count = 0
	}
	return webauthn.Credential{
		ID:        id,
		PublicKey: key,
		Transport: transports(a.Transports),
		Flags: webauthn.CredentialFlags{
			UserPresent:    true,
			BackupEligible: a.CredentialDeviceType == DeviceTypeMulti,
			BackupState:    a.CredentialBackedUp,
		},
		Authenticator: webauthn.Authenticator{SignCount: uint32(min(count, math.MaxUint32))},
	}, nil
}

// toAuthenticator is a verified new credential as Auth.js stores it:
// credential id and COSE public key in standard base64, the credential id
// also as providerAccountId, the transports the browser reported joined
// with commas (nil when none).
func toAuthenticator(c *webauthn.Credential, reported []protocol.AuthenticatorTransport) core.Authenticator {
	id := base64.StdEncoding.EncodeToString(c.ID)
	device := DeviceTypeSingle
	if c.Flags.BackupEligible {
		device = DeviceTypeMulti
	}
	var ts *string
	if len(reported) > 0 {
		parts := make([]string, len(reported))
		for i, t := range reported {
			parts[i] = string(t)
		}
		s := strings.Join(parts, ",")
		ts = &s
	}
	return core.Authenticator{
		CredentialID:         id,
		CredentialPublicKey:  base64.StdEncoding.EncodeToString(c.PublicKey),
		Counter:              int64(c.Authenticator.SignCount),
		CredentialBackedUp:   c.Flags.BackupState,
		CredentialDeviceType: device,
		ProviderAccountID:    id,
		Transports:           ts,
	}
}
