package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// CodeLength is the number of decimal digits in a one-time code.
const CodeLength = 6

// NewCode returns a one-time code of 6 decimal digits, uniform, from
// crypto/rand.
func NewCode() (string, error) {
	// 4294000000 is the largest multiple of 10^6 below 2^32: drawing
	// again above it keeps every code equally likely.
	const limit = 4294000000
	var b [4]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("password: reading random code: %w", err)
		}
		if v := binary.BigEndian.Uint32(b[:]); v < limit {
			return fmt.Sprintf("%06d", v%1000000), nil
		}
	}
}

// ValidCode reports whether s has the shape of a code (6 ASCII digits) —
// for refusing bad input early.
func ValidCode(s string) bool {
	if len(s) != CodeLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// CodesEqual reports whether the code a user typed equals the one issued,
// in time that does not depend on where they differ.
func CodesEqual(issued, typed string) bool {
	return subtle.ConstantTimeCompare([]byte(issued), []byte(typed)) == 1
}
