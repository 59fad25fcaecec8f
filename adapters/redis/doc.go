// Package redisadapter is the Redis adapter of authport: it stores users,
// accounts, sessions, verification tokens and authenticators in Redis
// through a go-redis v9 [github.com/redis/go-redis/v9.UniversalClient] — a
// single server, a failover (sentinel) client or a Redis Cluster — and
// implements all 19 methods of the adapter contract ([core.Adapter]) and
// the extensions [core.AuthenticatorCounterAdvancer],
// [core.AccountsByUserLister], [core.AccountUpdater], [core.SessionExtender],
// [core.SessionsByUserLister] and [core.SessionsByUserDeleter]; it keeps
// session metadata ([core.SessionMetadataKeeper]) and second factors
// ([core.FactorCreator], [core.FactorsByUserLister], [core.FactorSwapper],
// [core.FactorDeleter]). Call it through [core.NewStore] (core/auth does):
// the checked layer validates input and names the method in errors, so the
// adapter does neither.
//
// Everything about one user (the user hash, its accounts, its sessions,
// its authenticators and its factors) lives in the user's hash slot,
// {<user id>}. Lookups by e-mail, account, session token and credential id
// go through small index keys, each in its own slot, that hold the user
// id; a factor id has one too, which makes it unique across users. The
// user's slot is the truth: an index key is followed and then confirmed
// there.
//
// On a single server every operation is one command or one Lua script, so
// each is atomic and one round trip. On a cluster the operations that
// touch an index key run as a short, ordered sequence of single-slot steps
// that is safe under concurrency (README.md describes it).
//
// Session and verification-token keys expire at the record's expiry
// (PXAT), updateSession moves the expiry, and an expired session or token
// is never returned, even before Redis evicts it. A user's sessions set
// (the index listSessionsByUserId reads) and its metadata hash expire with
// the user's last session, and every write or listing of the set prunes
// the entries of expired sessions, evicted or not.
//
// Key names are escaped so that no value can collide with another key,
// leave the prefix or change a key's hash slot. README.md lists every key.
//
// Package github.com/authport/authport/adapters/redis/unstorage, in this
// module, is the adapter for the keys and JSON values of Auth.js's
// @auth/unstorage-adapter over unstorage's Redis driver, on a single
// server, so that an Auth.js application and an authport one can share one
// Redis database; README.md says what holds there and what does not.
//
// Package github.com/authport/authport/adapters/redis/betterauth, in this
// module, keeps sessions and verification tokens in the keys of a Better
// Auth app with secondaryStorage on Redis, over a primary adapter on the
// app's database for users and accounts.
package redisadapter
