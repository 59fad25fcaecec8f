// Package unstorage is authport's Redis adapter for the key layout of
// Auth.js's @auth/unstorage-adapter (2.x, default options) over unstorage's
// Redis driver: a user is the JSON document at <base>:user:<id>, dates are
// ISO 8601 strings, and so on (see ../README.md). An Auth.js application
// and an authport one can then share the same Redis database.
//
// It keeps second factors too ([core.FactorCreator] and the three methods
// beside it), as JSON documents under keys of authport's own, which
// @auth/unstorage-adapter never reads (authport:factor:<id>, and the set
// authport:factors-by-user:<user id>).
//
// Every operation stays atomic (Lua scripts and compare-and-set), so the
// guarantees of authport's own layout (package redisadapter) hold, single
// use of verification tokens and unique e-mails, accounts, sessions and
// credentials included, as far as authport's own callers go;
// @auth/unstorage-adapter itself does not make them. The layout needs a
// single Redis server (or a failover client): [New] refuses Redis Cluster,
// since unstorage's keys carry no hash tags.
package unstorage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// Adapter stores authport records in unstorage's layout. It implements
// every method of [core.Adapter] and is safe for concurrent use. Build it
// with [New].
type Adapter struct {
	c   redis.UniversalClient
	k   ukeys
	now func() time.Time
	s   *scripts
}

var _ shared.Layout = (*Adapter)(nil)

// Option configures an [Adapter].
type Option func(*config)

type config struct{ shared.Config }

// WithClock sets the clock that decides whether a session or verification
// token has expired (default time.Now). Redis itself evicts the keys at
// their expiry by the server's clock.
func WithClock(now func() time.Time) Option { return func(c *config) { c.Now = now } }

// ErrReplicaAck is matched (with errors.Is) by the error of a write that
// the server applied but fewer replicas than [WithReplicaAck] asks for
// acknowledged within its timeout. It is the same error as
// redisadapter.ErrReplicaAck.
var ErrReplicaAck = shared.ErrReplicaAck

// WithReplicaAck makes every write wait, before the call returns, until n
// replicas have acknowledged it (Redis's WAIT n timeout), for at most
// timeout, as redisadapter.WithReplicaAck does. n <= 0 turns it off (the
// default); a negative timeout is refused by [New].
func WithReplicaAck(n int, timeout time.Duration) Option {
	return func(c *config) { c.AckReplicas, c.AckTimeout = n, timeout }
}

// New returns an adapter on client (a *redis.Client or a failover client)
// that reads and writes the keys unstorage's Redis driver uses with the
// given base option (Auth.js: redisDriver({ base })), after loading its Lua
// scripts into the server. It returns an error matching
// [core.ErrInvalidInput] for a nil client, a Redis Cluster client or a
// negative replica-ack timeout, and the server's error when the scripts
// cannot be loaded.
func New(ctx context.Context, client redis.UniversalClient, base string, opts ...Option) (*Adapter, error) {
	var o config
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := o.Check("unstorage", client); err != nil {
		return nil, err
	}
	if _, ok := client.(*redis.ClusterClient); ok {
		return nil, fmt.Errorf("unstorage: the layout cannot run on Redis Cluster: unstorage's keys carry no hash tags, so the adapter's atomic scripts would span hash slots (CROSSSLOT); use a single server or a failover client, or redisadapter's own layout: %w", core.ErrInvalidInput)
	}
	prefix := unstorageBase(base)
	a := &Adapter{k: ukeys{base: prefix}, now: o.Now, s: newScripts()}
	a.c = o.Client(client)
	if err := a.Preload(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// Prefix returns the prefix unstorage's Redis driver puts before every key
// for the adapter's base: the base and a colon ("" for no base).
func (a *Adapter) Prefix() string { return a.k.base }

// Preload loads the adapter's Lua scripts into the server, so that the
// first call of each operation already runs with EVALSHA in one round
// trip. [New] does it; call it again after the server lost its scripts
// (a restart or SCRIPT FLUSH) to save a round trip on each script's next
// call.
func (a *Adapter) Preload(ctx context.Context) error {
	return shared.Load(ctx, a.c, "unstorage", a.s.all())
}

// mergeDoc returns the stored document raw with the fields of the encoded
// record doc set and the fields named in drop removed, so that fields
// authport does not know (another application's) are kept.
func mergeDoc(raw, doc string, drop ...string) (string, error) {
	out, _ := object(raw)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	for _, k := range drop {
		delete(out, k)
	}
	known, _ := object(doc)
	for k, v := range known {
		out[k] = v
	}
	return marshalJSON(out)
}

// listDocs reads the documents at keys, each key once (Auth.js may list a
// record twice), in one MGET, and returns the records read makes of those
// that exist, in the order of cmp. read returns nil for a document that is
// not one of the records listed.
func listDocs[T any](ctx context.Context, a *Adapter, keys []string, read func(key, raw string) (*T, error), cmp func(x, y T) int) ([]T, error) {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	out := []T{}
	if len(keys) == 0 {
		return out, nil
	}
	vals, err := a.c.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		raw, ok := v.(string)
		if !ok {
			continue
		}
		r, err := read(keys[i], raw)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, cmp)
	return out, nil
}

// replyErr maps a script's reply: "notfound" is the user's ErrNotFound,
// "exists" the record's ErrAlreadyExists (what names the record), anything
// else but "ok" an error.
func replyErr(res, userID, what string) error {
	switch res {
	case "ok":
		return nil
	case "notfound":
		return fmt.Errorf("user %q: %w", userID, core.ErrNotFound)
	case "exists":
		return fmt.Errorf("%s: %w", what, core.ErrAlreadyExists)
	}
	return fmt.Errorf("%w: unexpected script reply %q", shared.ErrCorrupt, res)
}
