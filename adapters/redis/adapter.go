package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// Adapter stores authport records in Redis. It implements every method of
// [core.Adapter] and is safe for concurrent use. Build it with [New].
type Adapter struct {
	c        redis.UniversalClient
	k        keys
	pArg     any // k.p, boxed once for the hot path's script arguments
	cluster  bool
	claimTTL time.Duration
	now      func() time.Time
	s        *scripts
	slots    slotTags
}

var _ shared.Layout = (*Adapter)(nil)

// Option configures an [Adapter].
type Option func(*config)

type config struct {
	shared.Config
	prefix   string
	cluster  *bool
	claimTTL time.Duration
}

// WithPrefix sets the prefix of every key the adapter reads and writes
// (default [DefaultPrefix]). It must not contain '{' or '}', which would
// change the hash slots of the keys on Redis Cluster.
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithClusterMode forces the cluster protocol on (true) or off (false).
// By default it is on exactly when the client is a *redis.ClusterClient.
// Turn it on for any client that routes keys to several servers by slot.
func WithClusterMode(on bool) Option { return func(c *config) { c.cluster = &on } }

// WithClaimTTL sets how long, in cluster mode, a freshly claimed unique
// index key (e-mail, username, account, authenticator) stays provisional
// before the write that claimed it confirms it, and how long a user's
// e-mail-change lock lasts (default 30s). Each claim adds a random extra
// of up to a tenth of it (at most a second), which makes its expiry a
// token of its own. A writer that stops between claiming and confirming
// (a crash: a call that fails gives its claims and lock back) blocks the
// value for at most this long.
func WithClaimTTL(d time.Duration) Option { return func(c *config) { c.claimTTL = d } }

// WithClock sets the clock that decides whether a session or verification
// token has expired (default time.Now). Redis itself evicts the keys at
// their expiry by the server's clock.
func WithClock(now func() time.Time) Option { return func(c *config) { c.Now = now } }

// New returns an adapter that stores records through client, which may be
// a *redis.Client, a failover (sentinel) client or a *redis.ClusterClient,
// after loading its Lua scripts into the server (every master of a
// cluster; see [Adapter.Preload]). It returns an error matching
// [core.ErrInvalidInput] for a nil client, a prefix containing a brace or
// a non-positive claim TTL, and the server's error when the scripts cannot
// be loaded.
func New(ctx context.Context, client redis.UniversalClient, opts ...Option) (*Adapter, error) {
	o := config{prefix: DefaultPrefix, claimTTL: 30 * time.Second}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := o.Check("redisadapter", client); err != nil {
		return nil, err
	}
	if strings.ContainsAny(o.prefix, "{}") {
		return nil, fmt.Errorf("redisadapter: prefix %q contains a brace, which would move keys to other hash slots; choose a prefix without '{' and '}': %w", o.prefix, core.ErrInvalidInput)
	}
	if o.claimTTL <= 0 {
		return nil, fmt.Errorf("redisadapter: claim TTL %v is not positive: %w", o.claimTTL, core.ErrInvalidInput)
	}
	_, isCluster := client.(*redis.ClusterClient)
	if o.cluster != nil {
		isCluster = *o.cluster
	}
	s := newScripts()
	a := &Adapter{k: keys{p: o.prefix}, pArg: o.prefix, cluster: isCluster, claimTTL: o.claimTTL, now: o.Now, s: s}
	a.c = o.Client(client, s.userByEmail, s.userByAccount, s.getAccount, s.sessionAndUser, s.sessionAndUserC, s.getAuthenticator, s.listSessions)
	if err := a.Preload(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// ErrReplicaAck is matched (with errors.Is) by the error of a write that
// the server applied but fewer replicas than [WithReplicaAck] asks for
// acknowledged within its timeout. The write may survive or be lost in a
// failover: treat the call as failed, as for any write whose outcome is
// unknown.
var ErrReplicaAck = shared.ErrReplicaAck

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
	return func(c *config) { c.AckReplicas, c.AckTimeout = n, timeout }
}

// Prefix returns the key prefix.
func (a *Adapter) Prefix() string { return a.k.p }

// ClusterMode reports whether the adapter uses the cluster protocol.
func (a *Adapter) ClusterMode() bool { return a.cluster }

// Preload loads the adapter's Lua scripts into the server (every master of
// a cluster), so that the first call of each operation already runs with
// EVALSHA in one round trip. Without it, the first call of a script on a
// server sends the script once more.
func (a *Adapter) Preload(ctx context.Context) error {
	return shared.Load(ctx, a.c, "redisadapter", a.s.all())
}

func (a *Adapter) mode() string {
	if a.cluster {
		return "C"
	}
	return "S"
}

// userKeys returns the five keys of a user's slot, in the order the
// scripts expect them.
func (a *Adapter) userKeys(uid string) []string {
	return []string{a.k.user(uid), a.k.accounts(uid), a.k.sessions(uid), a.k.authenticators(uid), a.k.sessionMeta(uid)}
}

// follow runs a pointer-following script: in single-node mode one script
// that reads the pointer itself; in cluster mode a GET of the pointer, then
// the script in the user's slot. A missing pointer gives redis.Nil.
func (a *Adapter) follow(ctx context.Context, s *redis.Script, ptr string, args ...any) (any, string, error) {
	if !a.cluster {
		v, err := s.Run(ctx, a.c, []string{ptr}, append([]any{a.k.p, "S"}, args...)...).Result()
		return v, "", err
	}
	uid, err := a.pointer(ctx, ptr)
	if err != nil {
		return nil, "", err
	}
	v, err := s.Run(ctx, a.c, a.userKeys(uid), append([]any{a.k.p, "C"}, args...)...).Result()
	return v, uid, err
}

// pointer reads an index key and returns the user id it holds (index keys
// hold the escaped id, so that single-node scripts build the user's key
// names without escaping). A missing key gives redis.Nil.
func (a *Adapter) pointer(ctx context.Context, ptr string) (string, error) {
	v, err := a.c.Get(ctx, ptr).Result()
	if err != nil {
		return "", err
	}
	uid, err := shared.Unescape(v)
	if err != nil {
		return "", shared.ErrCorrupt
	}
	return uid, nil
}

// claim sets ptr to uid unless it exists, expiring at atMs (ms since the
// epoch). It reports whether it set it.
//
// With mine, atMs is the claim's token (see claimProvisional): a ptr that
// holds uid and expires exactly at atMs is this attempt's own claim, set
// by a run whose reply was lost and then retried (by go-redis or by
// again), and claim reports it set.
//
// An operation cut short on a cluster (by its deadline, or a reply lost
// after the server acted) can leave a confirmed pointer (one without a
// TTL) whose record is gone: deleteUser and unlinkAccount remove the
// record first and release the pointer after. With holds non-nil, claim
// repairs such a pointer: when ptr is taken by a confirmed pointer and
// holds(holder) reports that the holder's record no longer has it, the
// pointer is released (only if it is still that confirmed pointer) and
// claimed again. A provisional claim (one with a TTL) is never touched:
// it is confirmed or expires.
func (a *Adapter) claim(ctx context.Context, ptr, uid string, atMs int64, mine bool, holds func(ctx context.Context, holder string) (bool, error)) (bool, error) {
	for attempt := 0; ; attempt++ {
		err := a.c.Do(ctx, "set", ptr, shared.Escape(uid), "nx", "pxat", atMs).Err()
		if !shared.IsNil(err) {
			return err == nil, err
		}
		if (!mine && holds == nil) || attempt >= 2 {
			return false, nil
		}
		holder, exp, err := a.pointerState(ctx, ptr)
		switch {
		case err != nil:
			return false, err
		case exp == -2:
			continue // gone meanwhile: claim again
		case mine && holder == uid && exp == atMs:
			return true, nil
		case holds == nil || exp != -1:
			return false, nil
		}
		if live, err := holds(ctx, holder); err != nil || live {
			return false, err
		}
		if err := a.s.releaseStale.Run(ctx, a.c, []string{ptr}, shared.Escape(holder)).Err(); err != nil {
			return false, err
		}
	}
}

// claimProvisional claims ptr for uid provisionally (see claim): until
// the claim TTL has passed, plus a random extra of up to a tenth of it (at
// most a second), so that
// the claim's expiry in ms is its token, telling it from another
// attempt's claim of the same user id. The claim is retried once when its
// reply is lost (again); if its outcome is still unknown, it is released
// by its token before claimProvisional returns the error (releaseClaim),
// so that a claim whose reply was lost never blocks the value after the
// call returns. It returns the token.
func (a *Adapter) claimProvisional(ctx context.Context, ptr, uid string, holds func(ctx context.Context, holder string) (bool, error)) (int64, bool, error) {
	at := time.Now().Add(a.claimTTL).UnixMilli() + rand.Int64N(min(1000, a.claimTTL.Milliseconds()/10+1))
	ok, err := again(ctx, func(ctx context.Context) (bool, error) { return a.claim(ctx, ptr, uid, at, true, holds) })
	if err != nil {
		_ = a.releaseClaim(ctx, ptr, uid, at)
		return 0, false, err
	}
	return at, ok, nil
}

// releaseClaim deletes ptr if it is still the provisional claim of uid
// with token at (claimProvisional): never a confirmed pointer, nor another
// attempt's claim. Like release it runs to its end and returns by ctx's
// end.
func (a *Adapter) releaseClaim(ctx context.Context, ptr, uid string, at int64) error {
	return finish(ctx, func(ctx context.Context) error {
		_, err := again(ctx, func(ctx context.Context) (any, error) {
			return a.s.release.Run(ctx, a.c, []string{ptr}, shared.Escape(uid), at).Result()
		})
		return err
	})
}

// pointerState reads an index key: the user id it holds and its expiry
// (PEXPIRETIME: ms since the epoch, -1 for a confirmed pointer, -2 when
// there is no such key).
func (a *Adapter) pointerState(ctx context.Context, ptr string) (string, int64, error) {
	var get *redis.StringCmd
	var exp *redis.Cmd
	_, err := a.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		get, exp = p.Get(ctx, ptr), p.Do(ctx, "pexpiretime", ptr)
		return nil
	})
	if shared.IsNil(err) {
		return "", -2, nil
	}
	if err != nil {
		return "", 0, err
	}
	uid, err := shared.Unescape(get.Val())
	if err != nil {
		return "", 0, shared.ErrCorrupt
	}
	ms, err := exp.Int64()
	return uid, ms, err
}

// again runs f, a step that may run twice with the same effect, and runs
// it once more when it fails with a broken connection (the server may
// have run it; its reply is lost), so that one lost reply does not fail
// the step, nor leave its outcome unknown. A Redis error reply,
// ErrReplicaAck or the end of ctx is returned as is. (go-redis retries
// such a command itself unless MaxRetries is -1; again retries the
// adapter's steps whatever the client's setting, and is what makes them
// safe to retry that matters: see the scripts.)
func again[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	v, err := f(ctx)
	if err == nil || !lostReply(ctx, err) {
		return v, err
	}
	return f(ctx)
}

// lostReply reports whether err is a broken connection (a network error
// or an unexpected end of stream) rather than an answer.
func lostReply(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, shared.ErrReplicaAck) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// hasField returns a claim's holds function for a pointer to a field of
// a hash of the holder's slot (an account or an authenticator).
func (a *Adapter) hasField(hashKey func(uid string) string, field string) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, holder string) (bool, error) {
		return a.c.HExists(ctx, hashKey(holder), field).Result()
	}
}

// commit makes a claimed pointer permanent if it still holds uid. It runs
// a second time when its reply is lost (again): a commit's outcome decides
// whether a write is undone, and running it twice is running it once.
func (a *Adapter) commit(ctx context.Context, ptr, uid string) (bool, error) {
	return again(ctx, func(ctx context.Context) (bool, error) {
		n, err := a.s.commit.Run(ctx, a.c, []string{ptr}, shared.Escape(uid), "0").Int()
		return n == 1, err
	})
}

// release deletes ptr if it still holds uid. It runs to its end even when
// ctx ends, since it undoes a half-done write, but returns by ctx's end
// (see withinDeadline).
func (a *Adapter) release(ctx context.Context, ptr, uid string) error {
	return finish(ctx, func(ctx context.Context) error {
		_, err := again(ctx, func(ctx context.Context) (any, error) {
			return a.s.release.Run(ctx, a.c, []string{ptr}, shared.Escape(uid)).Result()
		})
		return err
	})
}

// attach writes a record (field of the user's hash hashKey) under its
// unique pointer ptr: one script on a single node, attachCluster on a
// cluster. what names the record in the error of a taken pointer.
func (a *Adapter) attach(ctx context.Context, uid, ptr string, hashKey func(string) string, field, value, what string) error {
	var res string
	var err error
	if !a.cluster {
		res, err = a.s.attach.Run(ctx, a.c, []string{a.k.user(uid), hashKey(uid), ptr}, a.k.p, "S", shared.Escape(uid), field, value).Text()
	} else {
		res, err = a.attachCluster(ctx, ptr, uid, hashKey, field, value)
	}
	switch {
	case err != nil:
		return err
	case res == "notfound":
		return fmt.Errorf("user %q: %w", uid, core.ErrNotFound)
	case res != "ok":
		return fmt.Errorf("%s: %w", what, core.ErrAlreadyExists)
	}
	return nil
}

// followRecord runs a pointer-following script that replies one stored
// record (see follow); it returns "" when there is none, and the user id
// on a cluster.
func (a *Adapter) followRecord(ctx context.Context, s *redis.Script, ptr string, args ...any) (string, string, error) {
	v, uid, err := a.follow(ctx, s, ptr, args...)
	if shared.IsNil(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	rec, ok := v.(string)
	if !ok || rec == "" {
		return "", "", shared.ErrCorrupt
	}
	return rec, uid, nil
}

// listHash decodes, with decode, each value of the user's hash at key (one
// HVALS) and returns the records in the order of cmp. A missing hash gives
// an empty, non-nil list.
func listHash[T any](ctx context.Context, a *Adapter, key string, decode func(string) (*T, error), cmp func(x, y T) int) ([]T, error) {
	vals, err := a.c.HVals(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(vals))
	for _, v := range vals {
		r, err := decode(v)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, cmp)
	return out, nil
}

// attachCluster is the cluster protocol of linkAccount and
// createAuthenticator: claim the unique pointer, write the record in the
// user's slot, confirm the pointer. It returns "ok", "exists" or
// "notfound", and undoes its steps on failure.
func (a *Adapter) attachCluster(ctx context.Context, ptr, uid string, hashKey func(string) string, field, value string) (string, error) {
	if ctx.Done() != nil {
		return withinDeadline(ctx, func(ctx context.Context) (string, error) {
			return a.attachCluster(ctx, ptr, uid, hashKey, field, value)
		})
	}
	_, ok, err := a.claimProvisional(ctx, ptr, uid, a.hasField(hashKey, field))
	if err != nil {
		return "", err
	}
	hk := hashKey(uid)
	if !ok {
		return "exists", nil
	}
	// From here on the steps run to the end even if ctx is cancelled, so
	// that no half-done write is left behind.
	ctx = context.WithoutCancel(ctx)
	// Writing the field twice is writing it once: run it again when its
	// reply is lost.
	res, err := again(ctx, func(ctx context.Context) (string, error) {
		return a.s.attach.Run(ctx, a.c, []string{a.k.user(uid), hk}, a.k.p, "C", uid, field, value).Text()
	})
	if err != nil || res != "ok" {
		_ = a.release(ctx, ptr, uid)
		return res, err
	}
	ok, err = a.commit(ctx, ptr, uid)
	if err != nil {
		// The commit may have run (its reply lost with the connection).
		// Undo the record only once the pointer is released; if the
		// release fails too, keep the record, so that either the link is
		// whole or the claim expires, and deleteUser still finds the
		// record and releases its pointer. Removing the record of a
		// committed pointer would leave the pointer orphaned for good.
		if a.release(ctx, ptr, uid) == nil {
			_ = a.c.HDel(ctx, hk, field).Err()
		}
		return "", err
	}
	if !ok {
		// The user was deleted (which released the pointer) or the claim
		// outlived its TTL: undo the record.
		_ = a.c.HDel(ctx, hk, field).Err()
		return "notfound", nil
	}
	return "ok", nil
}

// withinDeadline runs f, a cluster write of several steps, on ctx without
// its cancellation, so that the steps run to their end and leave no
// half-done write; but it returns as soon as ctx ends (with ctx's error),
// and f goes on in the background, its result dropped. Each of f's round
// trips is still bounded by the client's read timeout. A caller's deadline
// is kept even when a server stops answering in the middle of f (a frozen
// master in a failover, a WAIT of [WithReplicaAck] on a master with no
// replica).
//
// With a ctx that never ends (one already without cancellation: f is a
// step of a call that runs within its deadline already), f runs in the
// caller's goroutine.
func withinDeadline[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f(ctx)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f(context.WithoutCancel(ctx))
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// finish is withinDeadline for a step that returns only an error.
func finish(ctx context.Context, f func(context.Context) error) error {
	_, err := withinDeadline(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}
