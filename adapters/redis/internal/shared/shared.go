// Package shared holds what the two Redis layouts of authport (the native
// one of package redisadapter and Auth.js's unstorage layout) have in
// common: key escaping, errors, times, the compare-and-set loop, the
// single-use receipts of verification tokens, replica acknowledgement and
// the options both take.
package shared

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
)

// Layout is what both layouts' adapters implement: the adapter contract
// and the extensions both offer.
type Layout interface {
	core.Adapter
	core.AuthenticatorCounterAdvancer
	core.AccountsByUserLister
	core.AccountUpdater
	core.SessionExtender
	core.SessionsByUserLister
	core.SessionsByUserDeleter
	core.SessionMetadataKeeper
	core.UserByUsernameGetter
	core.PasswordHashSwapper
}

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

// isNilClient reports whether c is nil or a nil pointer in an interface.
func isNilClient(c redis.UniversalClient) bool {
	v := reflect.ValueOf(c)
	return c == nil || v.Kind() == reflect.Pointer && v.IsNil()
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
	// Sub-millisecond digits are cut off when stored (core.Store has done
	// it already); a time whose milliseconds overflow int64 wraps around
	// and does not compare equal.
	if ms := t.UnixMilli(); ms < -MaxMillis || ms > MaxMillis || !MsTime(ms).Equal(t.Truncate(time.Millisecond)) {
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

// ErrReplicaAck is matched (with errors.Is) by the error of a write that
// the server applied but fewer replicas than WithReplicaAck asks for
// acknowledged within its timeout.
var ErrReplicaAck = errors.New("the write was not acknowledged by enough replicas in time")

// ReplicaAckErr moves an ErrReplicaAck out of *err (the write was applied
// on the master, so the caller goes on with its next steps) and returns
// it, or nil.
func ReplicaAckErr(err *error) error {
	if errors.Is(*err, ErrReplicaAck) {
		e := *err
		*err = nil
		return e
	}
	return nil
}

// ackClient wraps the adapter's client when [WithReplicaAck] is on: it is
// the one place where writes get their WAIT. Every method it does not
// override goes to the wrapped client unchanged.
type ackClient struct {
	redis.UniversalClient
	n       int
	timeout time.Duration
	reads   map[string]bool // SHA1s of the read-only scripts, which get no WAIT
}

func newAckClient(c redis.UniversalClient, n int, timeout time.Duration, readScripts []*redis.Script) *ackClient {
	reads := map[string]bool{}
	for _, r := range readScripts {
		reads[r.Hash()] = true
	}
	return &ackClient{UniversalClient: c, n: n, timeout: timeout, reads: reads}
}

// acked runs write, and then WAIT, in one pipeline on one connection of
// the server that holds key, and reports the write's outcome, or
// ErrReplicaAck when fewer than c.n replicas acknowledged it.
func (c *ackClient) acked(ctx context.Context, key string, write func(p redis.Pipeliner) redis.Cmder) {
	var wait *redis.Cmd
	var cmd redis.Cmder
	pipe := func(p redis.Pipeliner) error {
		cmd = write(p)
		wait = p.Do(ctx, "wait", c.n, c.timeout.Milliseconds())
		return nil
	}
	if cc, ok := c.UniversalClient.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, key)
		if err == nil {
			_, err = node.Pipelined(ctx, pipe)
		}
		if err != nil && !IsNil(err) && !strings.HasPrefix(err.Error(), "NOSCRIPT") {
			// A stale slot map (MOVED after a failover) or a dead node:
			// let the cluster client read the topology again.
			cc.ReloadState(ctx)
		}
	} else {
		_, _ = c.UniversalClient.Pipelined(ctx, pipe)
	}
	switch {
	case cmd == nil:
		// The pipeline never ran (no node for the key).
		return
	case cmd.Err() != nil:
		return
	case wait.Err() != nil:
		cmd.SetErr(fmt.Errorf("%w: WAIT %d: %w", ErrReplicaAck, c.n, wait.Err()))
	default:
		if got, err := wait.Int64(); err != nil || got < int64(c.n) {
			cmd.SetErr(fmt.Errorf("%w: %d of %d replica(s) within %v", ErrReplicaAck, got, c.n, c.timeout))
		}
	}
}

// failed is a command that never reached a server.
func failed(ctx context.Context, err error, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	cmd.SetErr(err)
	return cmd
}

// EvalSha runs a script; a write script gets its WAIT.
func (c *ackClient) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	if c.reads[sha1] || len(keys) == 0 {
		return c.UniversalClient.EvalSha(ctx, sha1, keys, args...)
	}
	var out *redis.Cmd
	c.acked(ctx, keys[0], func(p redis.Pipeliner) redis.Cmder { out = p.EvalSha(ctx, sha1, keys, args...); return out })
	if out == nil {
		return failed(ctx, errors.New("no server for key "+keys[0]), "evalsha", sha1)
	}
	return out
}

// Eval runs a script sent whole (after NOSCRIPT); a write script gets its
// WAIT.
func (c *ackClient) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	sum := sha1.Sum([]byte(script))
	if c.reads[hex.EncodeToString(sum[:])] || len(keys) == 0 {
		return c.UniversalClient.Eval(ctx, script, keys, args...)
	}
	var out *redis.Cmd
	c.acked(ctx, keys[0], func(p redis.Pipeliner) redis.Cmder { out = p.Eval(ctx, script, keys, args...); return out })
	if out == nil {
		return failed(ctx, errors.New("no server for key "+keys[0]), "eval")
	}
	return out
}

// GetDel is useVerificationToken's single-use read: it gets its WAIT, so
// that a token reported used stays used after a failover.
func (c *ackClient) GetDel(ctx context.Context, key string) *redis.StringCmd {
	var out *redis.StringCmd
	c.acked(ctx, key, func(p redis.Pipeliner) redis.Cmder { out = p.GetDel(ctx, key); return out })
	if out == nil {
		out = redis.NewStringCmd(ctx, "getdel", key)
		out.SetErr(errors.New("no server for key " + key))
	}
	return out
}

// Do is the adapter's SET NX (verification tokens, cluster claims): a SET
// gets its WAIT, anything else goes through unchanged.
func (c *ackClient) Do(ctx context.Context, args ...any) *redis.Cmd {
	if len(args) < 2 {
		return c.UniversalClient.Do(ctx, args...)
	}
	name, _ := args[0].(string)
	key, _ := args[1].(string)
	if !strings.EqualFold(name, "set") || key == "" {
		return c.UniversalClient.Do(ctx, args...)
	}
	var out *redis.Cmd
	c.acked(ctx, key, func(p redis.Pipeliner) redis.Cmder { out = p.Do(ctx, args...); return out })
	if out == nil {
		return failed(ctx, errors.New("no server for key "+key), args...)
	}
	return out
}
