package shared

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

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
