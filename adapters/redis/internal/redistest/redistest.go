// Package redistest holds the test helpers both Redis layouts' tests use:
// the Redis deployments (single node, cluster, Sentinel), fresh key
// prefixes and their cleanup, and a dialer that loses a reply.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"iter"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// Backend is one Redis deployment the tests run against.
type Backend struct {
	Name    string
	Connect func(t testing.TB) redis.UniversalClient
	once    sync.Once
	client  redis.UniversalClient
}

// SingleNode connects to AUTHPORT_REDIS_URL. The clients of this package
// end a command when its context ends (ContextTimeoutEnabled), as
// README.md advises.
func SingleNode(t testing.TB) redis.UniversalClient {
	return fromURL(t, "AUTHPORT_REDIS_URL", provision.Redis(t), redis.ParseURL, redis.NewClient,
		func(o *redis.Options) { o.ContextTimeoutEnabled = true })
}

// Cluster connects to AUTHPORT_REDIS_CLUSTER_URL.
func Cluster(t testing.TB) redis.UniversalClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: provision.RedisCluster(t), ContextTimeoutEnabled: true})
}

// Sentinel connects through go-redis's failover client to the master the
// sentinels of AUTHPORT_REDIS_SENTINEL_URL name.
func Sentinel(t testing.TB) redis.UniversalClient {
	return fromURL(t, "AUTHPORT_REDIS_SENTINEL_URL", provision.RedisSentinel(t), redis.ParseFailoverURL, redis.NewFailoverClient,
		func(o *redis.FailoverOptions) { o.ContextTimeoutEnabled = true })
}

// fromURL parses the URL of the variable env into options O, lets enable
// set them up and makes the client.
func fromURL[O any](t testing.TB, env, url string, parse func(string) (*O, error), client func(*O) *redis.Client, enable func(*O)) redis.UniversalClient {
	opt, err := parse(url)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	enable(opt)
	return client(opt)
}

// Backends returns the Redis deployments a layout's conformance runs on:
// the single node, the cluster (withCluster) and Sentinel.
func Backends(withCluster bool) []*Backend {
	bs := []*Backend{{Name: "redis", Connect: SingleNode}}
	if withCluster {
		bs = append(bs, &Backend{Name: "redis-cluster", Connect: Cluster})
	}
	return append(bs, &Backend{Name: "redis-sentinel", Connect: Sentinel})
}

// Get returns the backend's shared client, connecting once. It skips or
// fails t (through provision) when the backend is not there.
func (b *Backend) Get(t testing.TB) redis.UniversalClient {
	t.Helper()
	b.once.Do(func() { b.client = b.Connect(t) })
	if b.client == nil {
		if provision.Required(b.Name) {
			t.Fatalf("%s: required but not available", b.Name)
		}
		t.Skipf("%s: not available", b.Name)
	}
	return b.client
}

// Close closes the shared client, if one was made.
func (b *Backend) Close() {
	if b.client != nil {
		_ = b.client.Close()
	}
}

// Conformance runs the conformance suite on each backend, named
// <backend><suffix>. open returns a fresh adapter with its raw view and
// the key prefix they use; again opens a second adapter instance on that
// prefix through a client of its own: the suite's peer, and its lossy
// peer, whose client loses replies through a [ReplyLoser].
func Conformance(t *testing.T, suffix string, backends []*Backend,
	open func(t testing.TB, b *Backend) (adapter any, raw conformance.Raw, prefix string),
	again func(c redis.UniversalClient, prefix string) (any, error)) {
	for _, b := range backends {
		conformance.Run(t, conformance.Harness{
			Name: b.Name + suffix,
			New: func(t testing.TB) conformance.Fixture {
				a, raw, prefix := open(t, b)
				peer := func(t testing.TB, hook redis.Hook) any {
					c := b.Connect(t)
					t.Cleanup(func() { _ = c.Close() })
					p, err := again(c, prefix)
					if err != nil {
						t.Fatalf("second adapter on the prefix %s: %v", prefix, err)
					}
					if hook != nil {
						c.AddHook(hook) // after again, which loads the scripts
					}
					return p
				}
				return conformance.Fixture{Adapter: a, Raw: raw,
					Peer: func(t testing.TB) any { return peer(t, nil) },
					LossyPeer: func(t testing.TB) (any, conformance.ReplyLoser) {
						l := &ReplyLoser{}
						return peer(t, Hook{Process: l.Process, Pipeline: l.Pipeline}), l
					}}
			},
		})
		b.Close()
	}
}

// View is the base of a layout's raw view (conformance.Raw): the client,
// the key prefix, and the records the layout's decoder reads. It is a
// conformance.RecordsReader, so the suite reads every kind in one go.
type View struct {
	conformance.Raw
	C      redis.UniversalClient
	Prefix string
	read   ReadRecords
}

var _ conformance.RecordsReader = View{}

// ReadRecords reads every record stored under a view's prefix.
type ReadRecords = func(ctx context.Context) (conformance.Records, error)

// NewView returns the View of the keys under prefix; records returns the
// layout's reader of a View.
func NewView(c redis.UniversalClient, prefix string, records func(View) ReadRecords) View {
	v := View{C: c, Prefix: prefix}
	v.read = records(v)
	v.Raw = conformance.RawSnapshot(v.read)
	return v
}

// Records reads every record under the prefix at once (one SCAN and its
// pipelines), as each of the conformance.Raw methods does for its kind.
func (v View) Records(ctx context.Context) (conformance.Records, error) { return v.read(ctx) }

// Hook is a go-redis hook made of functions: Process wraps every
// command, Pipeline every pipeline; a nil one lets them through.
type Hook struct {
	Process  func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error
	Pipeline func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error
}

// DialHook lets dials through.
func (h Hook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook runs h.Process around every command.
func (h Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	if h.Process == nil {
		return next
	}
	return func(ctx context.Context, cmd redis.Cmder) error { return h.Process(ctx, cmd, next) }
}

// ProcessPipelineHook runs h.Pipeline around every pipeline.
func (h Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	if h.Pipeline == nil {
		return next
	}
	return func(ctx context.Context, cmds []redis.Cmder) error { return h.Pipeline(ctx, cmds, next) }
}

// ReadEach returns the reader of records that reads the stored items with
// read and files each into the records with add; an item's error ends it.
func ReadEach[K, V any](read func(context.Context) (iter.Seq2[K, V], error), add func(rs *conformance.Records, k K, v V) error) ReadRecords {
	return func(ctx context.Context) (conformance.Records, error) {
		var rs conformance.Records
		items, err := read(ctx)
		if err != nil {
			return rs, err
		}
		for k, v := range items {
			if err := add(&rs, k, v); err != nil {
				return conformance.Records{}, err
			}
		}
		return rs, nil
	}
}

// Append returns the function that appends a decoded record to list, or
// returns the decoder's error (an error too when it found no record).
func Append[T any](list *[]T) func(*T, error) error {
	return func(v *T, err error) error {
		if err == nil && v == nil {
			err = errors.New("no record decoded")
		}
		if err != nil {
			return err
		}
		*list = append(*list, *v)
		return nil
	}
}

// UniqueName returns a name no other test run uses: stem, then random hex.
func UniqueName(t testing.TB, stem string) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return stem + hex.EncodeToString(b[:])
}

// CleanupPrefix deletes every key under prefix when t ends.
func CleanupPrefix(t testing.TB, c redis.UniversalClient, prefix string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := DeletePrefix(ctx, c, prefix); err != nil {
			t.Errorf("cleaning up prefix %s: %v", prefix, err)
		}
	})
}

// GlobEscape escapes the glob metacharacters of s for SCAN MATCH.
func GlobEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ScanKeys returns every key under prefix, on every master of a cluster.
// SCAN walks the whole database whatever the MATCH, so it asks for large
// batches: the shared test server may hold many keys of other runs.
func ScanKeys(ctx context.Context, c redis.UniversalClient, prefix string) ([]string, error) {
	match := GlobEscape(prefix) + "*"
	scan := func(ctx context.Context, n redis.Cmdable) ([]string, error) {
		var out []string
		var cursor uint64
		for {
			ks, next, err := n.Scan(ctx, cursor, match, 10000).Result()
			if err != nil {
				return nil, err
			}
			out = append(out, ks...)
			if cursor = next; cursor == 0 {
				return out, nil
			}
		}
	}
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return scan(ctx, c)
	}
	var mu sync.Mutex
	var all []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		ks, err := scan(ctx, n)
		mu.Lock()
		all = append(all, ks...)
		mu.Unlock()
		return err
	})
	return all, err
}

// DeletePrefix deletes every key under prefix.
func DeletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) error {
	ks, err := ScanKeys(ctx, c, prefix)
	if err != nil {
		return err
	}
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range ks {
			p.Del(ctx, k)
		}
		return nil
	})
	return err
}

// ErrLostReply stands for a connection that broke after the command was
// sent: the server may or may not have run it.
var ErrLostReply = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer (injected)")}

// ConnDropper dials real connections; once Armed, the next read of a reply
// waits for the server to act on what was sent, then breaks the
// connection and fails, as a connection reset after the command would.
type ConnDropper struct {
	Armed, Fired atomic.Bool
}

// Dial is a go-redis Dialer.
func (d *ConnDropper) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &droppingConn{Conn: c, d: d}, nil
}

type droppingConn struct {
	net.Conn
	d *ConnDropper
}

func (c *droppingConn) Read(p []byte) (int, error) {
	if c.d.Armed.CompareAndSwap(true, false) {
		c.d.Fired.Store(true)
		time.Sleep(100 * time.Millisecond) // the server runs the command
		_ = c.Conn.Close()
		return 0, ErrLostReply
	}
	return c.Conn.Read(p)
}

// ReplyLoser is a go-redis hook (Process and Pipeline of a [Hook]) that
// loses replies when told to (conformance.ReplyLoser): the command runs,
// then it fails with [ErrLostReply], as when the connection breaks while
// the client waits for the reply. go-redis does not retry it (the hook
// is outside its retries), so the adapter sees the error, as with
// MaxRetries -1 or once its retries are spent.
type ReplyLoser struct {
	mu            sync.Mutex
	skip, n, lost int
}

// LoseReplies lets skip round trips through, then loses the replies of
// the n after them.
func (l *ReplyLoser) LoseReplies(skip, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skip, l.n, l.lost = skip, n, 0
}

// Lost returns how many replies were lost since LoseReplies, and disarms.
func (l *ReplyLoser) Lost() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skip, l.n = 0, 0
	return l.lost
}

// loses reports whether the round trip about to run loses its reply.
func (l *ReplyLoser) loses() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.skip > 0:
		l.skip--
		return false
	case l.n > 0:
		l.n--
		l.lost++
		return true
	}
	return false
}

// Process is the hook's Process (see Hook).
func (l *ReplyLoser) Process(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
	lose := l.loses()
	err := next(ctx, cmd)
	if lose {
		cmd.SetErr(ErrLostReply)
		return ErrLostReply
	}
	return err
}

// Pipeline is the hook's Pipeline (see Hook).
func (l *ReplyLoser) Pipeline(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
	lose := l.loses()
	err := next(ctx, cmds)
	if lose {
		for _, c := range cmds {
			c.SetErr(ErrLostReply)
		}
		return ErrLostReply
	}
	return err
}

// Mentioner finds the keys that mention a string.
type Mentioner interface {
	Mentions(context.Context, string) ([]string, error)
}

// TokenStore is the part of an adapter LostTokenReply uses.
type TokenStore interface {
	core.VerificationTokenCreator
	core.VerificationTokenUser
}

// LostTokenReply checks useVerificationToken when the reply of its
// command is lost after the server took the token (the connection breaks
// while the client waits for it), and go-redis retries the command on a
// new connection (its default on a network error). The retry must give the
// token, not "no token"; and the token stays single-use: a later call gets
// nothing. a's client must dial through drop.
func LostTokenReply(t *testing.T, drop *ConnDropper, a TokenStore, raw Mentioner) {
	ctx := context.Background()
	s := core.NewStore(a)
	exp := core.NormalizeTime(time.Now().Add(time.Hour))
	vt := core.VerificationToken{Identifier: "ada@example.com", Token: "hash-1", Expires: exp}
	if _, err := s.CreateVerificationToken(ctx, vt); err != nil {
		t.Fatal(err)
	}
	drop.Armed.Store(true)
	key := core.VerificationTokenKey{Identifier: vt.Identifier, Token: vt.Token}
	got, err := s.UseVerificationToken(ctx, key)
	if !drop.Fired.Load() {
		t.Fatal("no reply was dropped: the test did not exercise a retry")
	}
	if err != nil || got == nil || !got.Expires.Equal(exp) {
		t.Fatalf("useVerificationToken whose first reply was lost and was retried = %v, %v; want the token", got, err)
	}
	again, err := s.UseVerificationToken(ctx, key)
	if err != nil || again != nil {
		t.Errorf("a second useVerificationToken = %v, %v; want nil, nil (single use)", again, err)
	}
	if left, err := raw.Mentions(ctx, vt.Identifier); err != nil || len(left) > 0 {
		t.Errorf("after the token was used, %v still mention its identifier (%v)", left, err)
	}
}

// SessionExtenderStore is what ExtendSession needs of an adapter.
type SessionExtenderStore interface {
	core.UserCreator
	core.SessionCreator
	core.SessionAndUserGetter
	core.SessionExtender
}

// ExtendSession checks an adapter's extendSession through [core.Store]:
// concurrent calls with the same from on one session write exactly once
// and all return the expiry that one wrote, which a read then finds; a
// call with a from the stored expiry is now after writes nothing and
// returns the stored session; an unknown token gives nil, false, nil.
func ExtendSession(t *testing.T, a SessionExtenderStore) {
	ctx := context.Background()
	s := core.NewStore(a)
	u := core.User{ID: "extender", Email: "extender@example.com"}
	if _, err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	from := core.NormalizeTime(time.Now().Add(time.Hour))
	if _, err := s.CreateSession(ctx, core.Session{SessionToken: "tok", UserID: u.ID, Expires: from}); err != nil {
		t.Fatal(err)
	}
	stored := coretest.ExtendOnce(t, ctx, "tok", u.ID, from, 16, s)
	if su, err := s.GetSessionAndUser(ctx, "tok"); err != nil || su == nil || !su.Session.Expires.Equal(stored) {
		t.Errorf("getSessionAndUser after the extensions = %v, %v; want expires %v", su, err, stored)
	}

	// A stale from: the stored expiry is after it.
	got, wrote, err := s.ExtendSession(ctx, "tok", from, from.Add(24*time.Hour), time.Now())
	if err != nil || wrote || got == nil || !got.Expires.Equal(stored) {
		t.Errorf("extendSession with a stale from = %v, %v, %v; want the stored session (expires %v), false", got, wrote, err, stored)
	}
	// The stored expiry as from: it writes.
	next := stored.Add(time.Hour)
	if got, wrote, err := s.ExtendSession(ctx, "tok", stored, next, time.Now()); err != nil || !wrote || got == nil || !got.Expires.Equal(next) {
		t.Errorf("extendSession from the stored expiry = %v, %v, %v; want the session expiring %v, true", got, wrote, err, next)
	}
	if got, wrote, err := s.ExtendSession(ctx, "unknown", from, next, time.Now()); err != nil || wrote || got != nil {
		t.Errorf("extendSession of an unknown token = %v, %v, %v; want nil, false, nil", got, wrote, err)
	}
}
