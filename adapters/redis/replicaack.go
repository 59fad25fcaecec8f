package redisadapter

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
// the server applied but fewer replicas than [WithReplicaAck] asks for
// acknowledged within its timeout. The write may survive or be lost in a
// failover: treat the call as failed, as for any write whose outcome is
// unknown.
var ErrReplicaAck = errors.New("redisadapter: the write was not acknowledged by enough replicas in time")

// WithReplicaAck makes every write script, token create and token use
// wait, before the call returns, until n replicas of the master that ran
// it have acknowledged it (Redis's WAIT n timeout), for at most timeout.
// Redis replicates asynchronously: without it, a write the master
// acknowledged and a replica had not yet received is undone when that
// replica takes over in a failover (a used verification token comes back,
// a deleted session comes back, a created session is gone). With it, an
// acknowledged write is on n+1 servers. A write that gets fewer than n
// acknowledgements in time returns an error matching [ErrReplicaAck].
//
// n <= 0 turns it off (the default). A timeout of 0 waits until the
// call's context ends (Redis's WAIT 0 blocks for ever; give the client
// ContextTimeoutEnabled so that the context bounds it); a negative one is
// refused by [New]. It costs one replication round trip
// on each of those writes; reads are unchanged. Every server must have at
// least n replicas, or every write fails after timeout. The WAIT is sent
// on the connection that sent the write, in one pipeline with it (on a
// cluster, to the master of the write's first key), so it covers exactly
// that write. Multi-command pipelines the adapter sends (Redis Cluster's
// release of a deleted user's index keys) are not covered: a lost release
// leaves a pointer to a deleted user, which reads verify and ignore. See
// README.md, "Failover and replica acknowledgement".
func WithReplicaAck(n int, timeout time.Duration) Option {
	return func(o *options) { o.ackReplicas, o.ackTimeout = n, timeout }
}

// replicaAckErr moves an ErrReplicaAck out of *err (the write was applied
// on the master, so the caller goes on with its next steps) and returns
// it, or nil.
func replicaAckErr(err *error) error {
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

func newAckClient(c redis.UniversalClient, n int, timeout time.Duration, s *scripts) *ackClient {
	reads := map[string]bool{}
	for _, r := range []*redis.Script{s.userByEmail, s.userByAccount, s.getAccount, s.sessionAndUser, s.sessionAndUserC, s.getAuthenticator} {
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
		if err != nil && !isNil(err) && !strings.HasPrefix(err.Error(), "NOSCRIPT") {
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
		return failed(ctx, errors.New("redisadapter: no server for key "+keys[0]), "evalsha", sha1)
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
		return failed(ctx, errors.New("redisadapter: no server for key "+keys[0]), "eval")
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
		out.SetErr(errors.New("redisadapter: no server for key " + key))
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
		return failed(ctx, errors.New("redisadapter: no server for key "+key), args...)
	}
	return out
}
