package bboltadapter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// pairKey returns uvarint(len(a)) || a || b. Because the length prefix is
// self-delimiting, distinct (a, b) pairs never give the same key, whatever
// bytes a and b hold, and all keys of one a share the prefix pairKey(a, "").
func pairKey(a, b string) []byte {
	k := make([]byte, 0, binary.MaxVarintLen64+len(a)+len(b))
	k = binary.AppendUvarint(k, uint64(len(a)))
	k = append(k, a...)
	return append(k, b...)
}

// splitPairKey is the inverse of pairKey.
func splitPairKey(k []byte) (a, b []byte, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || n > uint64(len(k)-w) {
		return nil, nil, fmt.Errorf("%w: malformed composite key %q", ErrCorrupt, k)
	}
	rest := k[w:]
	return rest[:n], rest[n:], nil
}

// accountKey is the key of an account: pairKey(provider, providerAccountID).
func accountKey(provider, providerAccountID string) []byte {
	return pairKey(provider, providerAccountID)
}

// tokenKey is the key of a verification token: pairKey(identifier, token).
func tokenKey(identifier, token string) []byte { return pairKey(identifier, token) }

// ownerKey is the key of a user → record index entry: pairKey(userID, key).
func ownerKey(userID string, key []byte) []byte { return pairKey(userID, string(key)) }

// ownerPrefix is the common prefix of all ownerKeys of userID.
func ownerPrefix(userID string) []byte { return pairKey(userID, "") }

// expiryKey is the key of an expiry index entry: the expiry in Unix
// milliseconds as 8 big-endian bytes with the sign bit flipped (so that
// byte order is time order, before 1970 too), then the record key.
func expiryKey(ms int64, key []byte) []byte {
	k := make([]byte, 8, 8+len(key))
	binary.BigEndian.PutUint64(k, uint64(ms)^(1<<63))
	return append(k, key...)
}

// splitExpiryKey is the inverse of expiryKey.
func splitExpiryKey(k []byte) (ms int64, key []byte, err error) {
	if len(k) < 9 {
		return 0, nil, fmt.Errorf("%w: malformed expiry key %q", ErrCorrupt, k)
	}
	return int64(binary.BigEndian.Uint64(k) ^ (1 << 63)), k[8:], nil
}

// expiryUpTo is the smallest expiry key after every entry expiring at or
// before ms.
func expiryUpTo(ms int64) []byte {
	if ms == math.MaxInt64 {
		return bytes.Repeat([]byte{0xff}, 9)
	}
	return expiryKey(ms+1, nil)
}
