// Package shared holds what the two Redis layouts of authport (the native
// one of package redisadapter and Auth.js's unstorage layout) have in
// common: key escaping, errors, times, the compare-and-set loop, the
// single-use receipts of verification tokens, replica acknowledgement and
// the options both take.
package shared

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
)

// ErrCorrupt is the error of a stored record that does not decode.
var ErrCorrupt = errors.New("corrupt stored record")

// IsNil reports whether err is Redis's "no such key" (redis.Nil).
func IsNil(err error) bool { return errors.Is(err, redis.Nil) }

// Invalid returns the [*core.InputError] of a value method m cannot store.
func Invalid(m core.Method, field, reason string) error {
	return &core.InputError{Method: string(m), Field: field, Reason: reason}
}

// Config is the part of an adapter's configuration both layouts share.
type Config struct {
	// Now is the clock that decides whether a session or token has
	// expired; nil means time.Now.
	Now func() time.Time
	// AckReplicas and AckTimeout are WithReplicaAck's n and timeout.
	AckReplicas int
	AckTimeout  time.Duration
}

// Check returns an error matching core.ErrInvalidInput, prefixed with pkg,
// for a nil client or a bad replica-ack timeout.
func (c *Config) Check(pkg string, client redis.UniversalClient) error {
	if isNilClient(client) {
		return fmt.Errorf("%s: client is nil: %w", pkg, core.ErrInvalidInput)
	}
	if c.AckReplicas > 0 && c.AckTimeout < 0 {
		return fmt.Errorf("%s: replica-ack timeout %v is negative (0 waits for ever): %w", pkg, c.AckTimeout, core.ErrInvalidInput)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Client returns client, wrapped so that writes wait for replicas when
// WithReplicaAck is on. reads are the scripts that write nothing.
func (c *Config) Client(client redis.UniversalClient, reads ...*redis.Script) redis.UniversalClient {
	if c.AckReplicas <= 0 {
		return client
	}
	return newAckClient(client, c.AckReplicas, c.AckTimeout, reads)
}

func isNilClient(c redis.UniversalClient) bool {
	switch v := c.(type) {
	case nil:
		return true
	case *redis.Client:
		return v == nil
	case *redis.ClusterClient:
		return v == nil
	case *redis.Ring:
		return v == nil
	}
	return false
}

// Load loads scripts into the server (every master of a cluster), so that
// the first call of each already runs with EVALSHA in one round trip.
func Load(ctx context.Context, c redis.UniversalClient, pkg string, scripts []*redis.Script) error {
	for _, s := range scripts {
		if err := s.Load(ctx, c).Err(); err != nil {
			return fmt.Errorf("%s: loading the Lua scripts into Redis (is the server reachable?): %w", pkg, err)
		}
	}
	return nil
}

// ReceiptTTL is how long a useVerificationToken receipt outlives the call:
// far longer than go-redis's retries of one command take.
const ReceiptTTL = time.Minute

// AttemptID returns a random id for one useVerificationToken call (or
// one lock holder).
func AttemptID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// MaxMillis bounds the times the adapters store, in milliseconds either
// side of 1970 (about 285,000 years): session expiries are sorted-set
// scores, float64, exact only up to 2^53; further out still, a time does
// not fit int64 milliseconds and would wrap around (a session expired long
// ago would come back live).
const MaxMillis = 1 << 53

// CheckTime returns an error matching core.ErrInvalidInput for a
// (normalized) time the adapters cannot store exactly.
func CheckTime(method core.Method, field string, t *time.Time) error {
	if t == nil {
		return nil
	}
	if ms := t.UnixMilli(); ms < -MaxMillis || ms > MaxMillis || !MsTime(ms).Equal(*t) {
		return Invalid(method, field, "is more than 285,000 years from 1970, beyond the times this adapter stores exactly")
	}
	return nil
}

// MsTime converts stored milliseconds to a UTC time.
func MsTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// ExpiryMillis returns the PXAT/score value of a normalized expiry. Redis
// rejects a non-positive PXAT, and a time before 1970 has long passed, so it
// is clamped to 1.
func ExpiryMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if ms < 1 {
		return 1
	}
	return ms
}

// Escape percent-encodes every byte of s outside [A-Za-z0-9._@+-]. It is
// injective and its output never contains ':', '{', '}' or whitespace. The
// Lua function enc of the native layout's scripts is its exact twin.
func Escape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safeByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func safeByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '.', c == '_', c == '@', c == '+', c == '-':
		return true
	}
	return false
}

// ErrBadEscape is the error of a key component that is not Escape's output.
var ErrBadEscape = errors.New("malformed escaped key component")

// Unescape reverses [Escape].
func Unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) {
			return "", ErrBadEscape
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", ErrBadEscape
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
