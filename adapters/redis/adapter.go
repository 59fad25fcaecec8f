package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

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
	s        *scripts
	u        *ustore // non-nil with WithUnstorageLayout
	slots    slotTags
}

var (
	_ core.Adapter                      = (*Adapter)(nil)
	_ core.AuthenticatorCounterAdvancer = (*Adapter)(nil)
)

// Option configures an [Adapter].
type Option func(*options)

type options struct {
	prefix    string
	prefixSet bool
	cluster   *bool
	claimTTL  time.Duration
	unstorage *string
	// WithReplicaAck
	ackReplicas int
	ackTimeout  time.Duration
}

// WithPrefix sets the prefix of every key the adapter reads and writes
// (default [DefaultPrefix]). It must not contain '{' or '}', which would
// change the hash slots of the keys on Redis Cluster.
func WithPrefix(prefix string) Option {
	return func(o *options) { o.prefix, o.prefixSet = prefix, true }
}

// WithClusterMode forces the cluster protocol on (true) or off (false).
// By default it is on exactly when the client is a *redis.ClusterClient.
// Turn it on for any client that routes keys to several servers by slot.
func WithClusterMode(on bool) Option { return func(o *options) { o.cluster = &on } }

// WithClaimTTL sets how long, in cluster mode, a freshly claimed unique
// index key (e-mail, account, authenticator) stays provisional before the
// write that claimed it confirms it, and how long a user's e-mail-change
// lock lasts (default 30s). A writer that stops between claiming and
// confirming blocks the value for at most this long.
func WithClaimTTL(d time.Duration) Option { return func(o *options) { o.claimTTL = d } }

// New returns an adapter that stores records through client, which may be
// a *redis.Client, a failover (sentinel) client or a *redis.ClusterClient.
// It returns an error matching [core.ErrInvalidInput] for a nil client, a
// prefix containing a brace or a non-positive claim TTL. New does no I/O;
// see [Adapter.Preload].
func New(client redis.UniversalClient, opts ...Option) (*Adapter, error) {
	o := options{prefix: DefaultPrefix, claimTTL: 30 * time.Second}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if isNilClient(client) {
		return nil, fmt.Errorf("redisadapter.New: client is nil: %w", core.ErrInvalidInput)
	}
	if strings.ContainsAny(o.prefix, "{}") {
		return nil, fmt.Errorf("redisadapter.New: prefix %q contains a brace: %w", o.prefix, core.ErrInvalidInput)
	}
	if o.claimTTL <= 0 {
		return nil, fmt.Errorf("redisadapter.New: claim TTL %v is not positive: %w", o.claimTTL, core.ErrInvalidInput)
	}
	if o.ackReplicas > 0 && o.ackTimeout < 0 {
		return nil, fmt.Errorf("redisadapter.New: replica-ack timeout %v is negative (0 waits for ever): %w", o.ackTimeout, core.ErrInvalidInput)
	}
	_, isCluster := client.(*redis.ClusterClient)
	a, err := build(client, o, isCluster)
	if err != nil || o.ackReplicas <= 0 {
		return a, err
	}
	ac := newAckClient(a.c, o.ackReplicas, o.ackTimeout, a.s)
	a.c = ac
	if a.u != nil {
		a.u.c = ac
	}
	return a, nil
}

// build is New after the checks that do not depend on the layout.
func build(client redis.UniversalClient, o options, isCluster bool) (*Adapter, error) {
	if o.unstorage != nil {
		if isCluster || (o.cluster != nil && *o.cluster) {
			return nil, fmt.Errorf("redisadapter.New: WithUnstorageLayout cannot run on Redis Cluster: unstorage's keys carry no hash tags, so the adapter's atomic scripts would span hash slots (CROSSSLOT); use a single server or a failover client: %w", core.ErrInvalidInput)
		}
		if o.prefixSet {
			return nil, fmt.Errorf("redisadapter.New: WithPrefix and WithUnstorageLayout exclude each other; the layout's base is its prefix: %w", core.ErrInvalidInput)
		}
		base := unstorageBase(*o.unstorage)
		return &Adapter{c: client, k: keys{p: base}, pArg: base, claimTTL: o.claimTTL, s: newScripts(),
			u: &ustore{c: client, k: ukeys{base: base}}}, nil
	}
	if o.cluster != nil {
		isCluster = *o.cluster
	}
	return &Adapter{c: client, k: keys{p: o.prefix}, pArg: o.prefix, cluster: isCluster, claimTTL: o.claimTTL, s: newScripts()}, nil
}

func isNilClient(c redis.UniversalClient) bool {
	switch v := c.(type) {
	case nil:
		return true
	case *redis.Client:
		return v == nil
	case *redis.ClusterClient:
		return v == nil
	}
	return false
}

// Prefix returns the key prefix (with [WithUnstorageLayout], the prefix
// unstorage's Redis driver puts before every key: the base and a colon).
func (a *Adapter) Prefix() string { return a.k.p }

// ClusterMode reports whether the adapter uses the cluster protocol.
func (a *Adapter) ClusterMode() bool { return a.cluster }

// Preload loads the adapter's Lua scripts into the server (every master of
// a cluster), so that the first call of each operation already runs with
// EVALSHA in one round trip. Without it, the first call of a script on a
// server sends the script once more.
func (a *Adapter) Preload(ctx context.Context) error {
	all := a.s.all()
	if a.u != nil {
		all = unstorageScripts()
	}
	for _, s := range all {
		if err := s.Load(ctx, a.c).Err(); err != nil {
			return fmt.Errorf("redisadapter: loading scripts: %w", err)
		}
	}
	return nil
}

func (a *Adapter) mode() string {
	if a.cluster {
		return "C"
	}
	return "S"
}

// userKeys returns the four keys of a user's slot, in the order the
// scripts expect them.
func (a *Adapter) userKeys(uid string) []string {
	return []string{a.k.user(uid), a.k.accounts(uid), a.k.sessions(uid), a.k.authenticators(uid)}
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
	uid, err := unescape(v)
	if err != nil {
		return "", errCorrupt
	}
	return uid, nil
}

// claim sets ptr to uid unless it exists, expiring at the given time in
// ms (atMs > 0) or after the claim TTL. It reports whether it set it.
func (a *Adapter) claim(ctx context.Context, ptr, uid string, atMs int64) (bool, error) {
	var err error
	if atMs > 0 {
		err = a.c.Do(ctx, "set", ptr, escape(uid), "nx", "pxat", atMs).Err()
	} else {
		err = a.c.Do(ctx, "set", ptr, escape(uid), "nx", "px", a.claimTTL.Milliseconds()).Err()
	}
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// commit makes a claimed pointer permanent if it still holds uid.
func (a *Adapter) commit(ctx context.Context, ptr, uid string) (bool, error) {
	n, err := a.s.commit.Run(ctx, a.c, []string{ptr}, escape(uid), "0").Int()
	return n == 1, err
}

// release deletes ptr if it still holds uid. It runs even when ctx is
// cancelled, since it undoes a half-done write.
func (a *Adapter) release(ctx context.Context, ptr, uid string) error {
	return a.s.release.Run(context.WithoutCancel(ctx), a.c, []string{ptr}, escape(uid)).Err()
}

// attachCluster is the cluster protocol of linkAccount and
// createAuthenticator: claim the unique pointer, write the record in the
// user's slot, confirm the pointer. It returns "ok", "exists" or
// "notfound", and undoes its steps on failure.
func (a *Adapter) attachCluster(ctx context.Context, ptr, uid, hashKey, field, value string) (string, error) {
	if ctx.Done() != nil {
		return withinDeadline(ctx, func(ctx context.Context) (string, error) {
			return a.attachCluster(ctx, ptr, uid, hashKey, field, value)
		})
	}
	ok, err := a.claim(ctx, ptr, uid, 0)
	if err != nil {
		return "", err
	}
	if !ok {
		return "exists", nil
	}
	// From here on the steps run to the end even if ctx is cancelled, so
	// that no half-done write is left behind.
	ctx = context.WithoutCancel(ctx)
	res, err := a.s.attach.Run(ctx, a.c, []string{a.k.user(uid), hashKey}, a.k.p, "C", uid, field, value).Text()
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
			_ = a.c.HDel(ctx, hashKey, field).Err()
		}
		return "", err
	}
	if !ok {
		// The user was deleted (which released the pointer) or the claim
		// outlived its TTL: undo the record.
		_ = a.c.HDel(ctx, hashKey, field).Err()
		return "notfound", nil
	}
	return "ok", nil
}

func wrap(method core.Method, err error) error {
	return fmt.Errorf("%s: %w", method, err)
}

func isNil(err error) bool { return errors.Is(err, redis.Nil) }

func invalid(method core.Method, field, reason string) error {
	return &core.InputError{Method: string(method), Field: field, Reason: reason}
}

// withinDeadline runs f, a cluster write of several steps, on ctx without
// its cancellation, so that the steps run to their end and leave no
// half-done write; but it returns as soon as ctx ends (with ctx's error),
// and f goes on in the background, its result dropped. Each of f's round
// trips is still bounded by the client's read timeout. A caller's deadline
// is kept even when a server stops answering in the middle of f (a frozen
// master in a failover, a WAIT of [WithReplicaAck] on a master with no
// replica).
func withinDeadline[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
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
