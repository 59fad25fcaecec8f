package core

import (
	"crypto/rand"
	"encoding/hex"
)

// NewUUID returns a random (version 4) UUID in its lowercase hyphenated
// form, such as crypto.randomUUID makes in JavaScript: the default form of
// a new user's id (see auth.Config.GenerateUserID), and the form every
// adapter can store as an id.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])  // crypto/rand.Read never fails (Go 1.24+): it aborts the program instead
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10 (RFC 9562)
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
