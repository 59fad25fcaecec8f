//go:build authport_consumer

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/authport/authport/totp"
)

// check makes a TOTP key (with its QR code) and finds the step of a code
// made from it; it needs no network.
func check(context.Context) (string, error) {
	noSkew := 0
	codes, err := totp.New(totp.Options{Digits: 8, Skew: &noSkew})
	if err != nil {
		return "", err
	}
	key, err := codes.NewKey("Example", "ada@example.com")
	if err != nil {
		return "", err
	}
	if len(key.Secret) != totp.KeySize || len(key.QRCode) == 0 || key.URI == "" {
		return "", fmt.Errorf("key of %d bytes, QR code of %d bytes, URI %q", len(key.Secret), len(key.QRCode), key.URI)
	}
	// RFC 6238 Appendix B: at 59 s the SHA-1 key gives 94287082, step 1.
	if step, ok := codes.Match([]byte("12345678901234567890"), "94287082", time.Unix(59, 0)); !ok || step != 1 {
		return "", fmt.Errorf("the RFC 6238 vector matched %v at step %d", ok, step)
	}
	return fmt.Sprintf("made a TOTP key with a %d-byte QR code and matched RFC 6238's first vector", len(key.QRCode)), nil
}
