// Package betterauth is authport's adapter for the Redis keys of a Better
// Auth application (better-auth 1.7) configured with secondaryStorage on
// Redis: Better Auth then keeps its sessions (each with a copy of its
// user) and its verification values in Redis, and its users and accounts
// in its database. An [Adapter] does the same: it keeps sessions and
// verification tokens in Better Auth's keys and hands every other record
// to a primary adapter on the application's database (package
// gormadapter with its Better Auth preset, say), so that a Go service and
// the Better Auth app share their sessions both ways.
//
// The keys, under the prefix the app's secondaryStorage puts before
// Better Auth's keys (see ../README.md):
//
//   - <token>: a session, the JSON {"session": {...}, "user": {...}} with
//     the session's id, token, userId, expiresAt, createdAt, updatedAt,
//     ipAddress and userAgent, and a copy of the user; it expires with
//     the session.
//   - active-sessions-<userId>: the JSON list of the user's sessions,
//     [{"token", "expiresAt" (Unix milliseconds)}], sorted by expiry,
//     expiring with the last of them.
//   - revoked-sessions-before-<userId>: Unix milliseconds; a session of
//     the user created before is ended (Better Auth's "sign out
//     everywhere" and deleteUser write it).
//   - verification:<identifier>: a verification value, the JSON
//     {"id", "identifier", "value", "expiresAt", "createdAt",
//     "updatedAt"}; authport's token is the value.
//
// Every multi-key step is one Lua script, or a compare-and-set around
// one, so that the index stays exact. Better Auth's own writes are plain
// GETs and SETs: a write of the Better Auth app racing one of authport's
// on the same user's list can lose an entry, as two Better Auth
// instances can.
package betterauth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// Adapter keeps sessions and verification tokens in Better Auth's Redis
// keys and delegates users, accounts, authenticators and the extensions
// of those to its primary adapter. It implements [core.Adapter] and is
// safe for concurrent use (as far as the primary is). Build it with [New].
type Adapter struct {
	c       redis.UniversalClient
	k       keys
	primary core.Adapter
	now     func() time.Time
	revoked time.Duration
	s       *scripts
	omitted []core.Method
}

var _ interface {
	core.Adapter
	core.SessionExtender
	core.SessionsByUserLister
	core.SessionsByUserDeleter
	core.SessionMetadataKeeper
	core.MethodOmitter
	core.AccountsByUserLister
	core.AccountUpdater
	core.UserByUsernameGetter
	core.PasswordHashSwapper
	core.AuthenticatorCounterAdvancer
} = (*Adapter)(nil)

// Option configures an [Adapter].
type Option func(*config)

type config struct {
	shared.Config
	revoked time.Duration
}

// WithClock sets the clock that decides whether a session or verification
// token has expired (default time.Now). Redis itself evicts the keys at
// their expiry by the server's clock.
func WithClock(now func() time.Time) Option { return func(c *config) { c.Now = now } }

// WithRevocationTTL sets how long the revoked-sessions-before-<userId> key
// that [Adapter.DeleteUser] writes lives. Better Auth keeps it for its
// session.expiresIn, at least a day (and longer with the admin plugin's
// impersonation); give the app's value. The default is 7 days, Better
// Auth's default expiresIn. A value below a day is raised to a day.
func WithRevocationTTL(d time.Duration) Option { return func(c *config) { c.revoked = d } }

// New returns an adapter that keeps sessions and verification tokens in
// client under prefix, as a Better Auth application whose secondaryStorage
// puts prefix before its keys does (prefix "" for none), and every other
// record in primary. It loads its Lua scripts into the server.
//
// On Redis Cluster the prefix must hold a hash tag (as "{better-auth}:"),
// so that every key lands in one slot: the layout's scripts touch a
// session and its user's list at once, and Better Auth's key names carry
// no tag of their own. The app must then use the same prefix.
//
// It returns an error matching [core.ErrInvalidInput] for a nil client or
// primary, or a Cluster client and a prefix without a hash tag, and the
// server's error when the scripts cannot be loaded.
func New(ctx context.Context, client redis.UniversalClient, prefix string, primary core.Adapter, opts ...Option) (*Adapter, error) {
	var o config
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := o.Check("betterauth", client); err != nil {
		return nil, err
	}
	if primary == nil {
		return nil, fmt.Errorf("betterauth: the primary adapter is nil; give the adapter of the app's database (users and accounts live there): %w", core.ErrInvalidInput)
	}
	if _, ok := client.(*redis.ClusterClient); ok && !hasHashTag(prefix) {
		return nil, fmt.Errorf("betterauth: on Redis Cluster the prefix %q needs a hash tag such as \"{better-auth}:\" (in the app's secondaryStorage too), so that a session and its user's list share a slot: %w", prefix, core.ErrInvalidInput)
	}
	if o.revoked <= 0 {
		o.revoked = 7 * 24 * time.Hour
	}
	o.revoked = max(o.revoked, 24*time.Hour)
	a := &Adapter{k: keys{prefix: prefix}, primary: primary, now: o.Now, revoked: o.revoked, s: newScripts()}
	a.c = o.Client(client)
	a.omitted = omittedBy(primary)
	if err := a.Preload(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// hasHashTag reports whether a key starting with prefix has a Redis
// Cluster hash tag inside prefix: a '{' followed by a non-empty run and
// a '}'.
func hasHashTag(prefix string) bool {
	i := strings.IndexByte(prefix, '{')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(prefix[i+1:], '}')
	return j > 0
}

// Prefix returns the key prefix the adapter was built with.
func (a *Adapter) Prefix() string { return a.k.prefix }

// Primary returns the adapter that holds users, accounts and
// authenticators.
func (a *Adapter) Primary() core.Adapter { return a.primary }

// Preload loads the adapter's Lua scripts into the server, so that the
// first call of each operation already runs with EVALSHA in one round
// trip. [New] does it; call it again after the server lost its scripts.
func (a *Adapter) Preload(ctx context.Context) error {
	return shared.Load(ctx, a.c, "betterauth", a.s.all())
}

// KeepsSessionMetadata implements [core.SessionMetadataKeeper]: the
// session JSON holds createdAt, updatedAt, ipAddress and userAgent.
func (a *Adapter) KeepsSessionMetadata() bool { return true }
