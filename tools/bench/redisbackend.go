package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/conformance/provision"
)

// redisStore is the Redis adapter on a client of its own, with a key
// prefix of its own (its keys are deleted at close).
type redisStore struct {
	c       redis.UniversalClient
	cluster bool
	prefix  string
	adapter fullAdapter
	rt      *roundTrips
}

func openRedis(ctx context.Context, rawURL string) (*redisStore, error) {
	s, err := newRedisStore(ctx, rawURL, provision.NewName("authport-bench-")+":", true)
	if err != nil {
		return nil, err
	}
	s.adapter, err = redisadapter.New(ctx, s.c, redisadapter.WithPrefix(s.prefix))
	if err != nil {
		_ = s.c.Close()
		return nil, err
	}
	return s, nil
}

// newRedisStore connects to the single Redis server of rawURL with a pool
// for concurrency 32, for a store whose keys start with prefix; counted
// makes the connections count their round trips in s.rt. The caller opens
// the adapter on s.c.
func newRedisStore(ctx context.Context, rawURL, prefix string, counted bool) (*redisStore, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	s := &redisStore{rt: &roundTrips{}, prefix: prefix}
	if counted {
		opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return s.rt.dial(ctx, network, addr)
		}
	}
	opts.PoolSize = 32
	opts.MinIdleConns = 32
	opts.ContextTimeoutEnabled = true
	s.c = redis.NewClient(opts)
	if err := s.c.Ping(ctx).Err(); err != nil {
		_ = s.c.Close()
		return nil, err
	}
	return s, nil
}

// openRedisCluster opens a cluster client on AUTHPORT_REDIS_CLUSTER_URL's
// comma-separated seed addresses; the adapter runs its cluster protocol.
func openRedisCluster(ctx context.Context, seeds string) (*redisStore, error) {
	s := &redisStore{rt: &roundTrips{}, prefix: provision.NewName("authport-bench-") + ":", cluster: true}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(seeds, ","), PoolSize: 32, MinIdleConns: 32,
		ContextTimeoutEnabled: true, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return s.rt.dial(ctx, network, addr)
		}})
	s.c = c
	if err := c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }); err != nil {
		_ = c.Close()
		return nil, err
	}
	var err error
	if s.adapter, err = redisadapter.New(ctx, c, redisadapter.WithPrefix(s.prefix)); err != nil {
		_ = c.Close()
		return nil, err
	}
	return s, nil
}

// close deletes the bench's keys (on every master of a cluster) and closes
// the client.
func (s *redisStore) close() {
	ctx := context.Background()
	clean := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, s.prefix+"*", 5000).Iterator()
		var batch []string
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 5000 {
				_ = unlinkAll(ctx, c, batch)
				batch = batch[:0]
			}
		}
		return unlinkAll(ctx, c, batch)
	}
	switch c := s.c.(type) {
	case *redis.ClusterClient:
		_ = c.ForEachMaster(ctx, clean)
	case *redis.Client:
		_ = clean(ctx, c)
	}
	_ = s.c.Close()
}

// The raw baseline's scripts, written for the key layout of
// adapters/redis/README.md (the bench's ids need no escaping). ARGV[1] is
// the prefix.
const (
	rawGetSessionAndUser = `
local u = redis.call('GET', KEYS[1])
if not u then return false end
local uk = ARGV[1] .. 'user:{' .. u .. '}'
local s = redis.call('ZSCORE', uk .. ':sessions', ARGV[2])
if not s or tonumber(s) <= tonumber(ARGV[3]) then return false end
return {s, redis.call('HGETALL', uk)}
`
	rawGetUserByAccount = `
local u = redis.call('GET', KEYS[1])
if not u then return false end
return redis.call('HGETALL', ARGV[1] .. 'user:{' .. u .. '}')
`
	// ARGV: prefix, member, new expiry (ms), now (ms).
	rawUpdateSession = `
local u = redis.call('GET', KEYS[1])
if not u then return false end
local z = ARGV[1] .. 'user:{' .. u .. '}:sessions'
local s = redis.call('ZSCORE', z, ARGV[2])
if not s or tonumber(s) <= tonumber(ARGV[4]) then return false end
redis.call('ZADD', z, ARGV[3], ARGV[2])
local m = redis.call('ZRANGE', z, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', z, m[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return u
`
	// KEYS: user, sessions, session pointer. ARGV: uid, member, expiry (ms).
	rawCreateSession = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'notfound' end
if not redis.call('SET', KEYS[3], ARGV[1], 'PXAT', ARGV[3], 'NX') then return 'exists' end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('PEXPIREAT', KEYS[2], ARGV[3], 'GT')
return 'ok'
`
	// KEYS: user, accounts, sessions, authenticators. ARGV: prefix.
	rawDeleteUser = `
local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then return false end
local email = redis.call('HGET', KEYS[1], 'email')
local accs = redis.call('HKEYS', KEYS[2])
local sess = redis.call('ZRANGE', KEYS[3], 0, -1)
local auths = redis.call('HKEYS', KEYS[4])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1] .. 'email:{' .. email .. '}')
for _, a in ipairs(accs) do redis.call('DEL', ARGV[1] .. 'account:{' .. a .. '}') end
for _, s in ipairs(sess) do redis.call('DEL', ARGV[1] .. 'session:{' .. s .. '}') end
for _, c in ipairs(auths) do redis.call('DEL', ARGV[1] .. 'authenticator:{' .. c .. '}') end
return h
`
)

// The raw baseline's scripts of the session inventory, written for the
// key layout of adapters/redis/README.md: a user's sessions set z
// (<p>user:{<uid>}:sessions, member the token, score its expiry in ms)
// and its metadata hash m (z .. ':meta', the token's field: the time
// last seen in ms, a space, then the rest). Both prune the entries of
// sessions expired at now (ms) and give the set and the hash the last
// session's expiry, as the adapter's scripts do.
const (
	// The entries of the sessions expired at now, and their metadata,
	// dropped; gone holds them.
	rawPrune = `
local gone = redis.call('ZRANGE', z, '-inf', now, 'BYSCORE')
if #gone > 0 then
  for _, g in ipairs(gone) do redis.call('HDEL', m, g) end
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now)
end
`
	// The set and the hash expire with the last session.
	rawSetTTL = `
local last = redis.call('ZRANGE', z, -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIREAT', z, last[2])
  redis.call('PEXPIREAT', m, last[2])
else
  redis.call('DEL', m)
end
`
	// listSessionsByUserId, on a single node and in the user's slot alike.
	// KEYS: z, m. ARGV: now (ms). Returns {member, expiry, metadata or '',
	// …}.
	rawListSessions = `
local z, m, now = KEYS[1], KEYS[2], ARGV[1]
` + rawPrune + `
if #gone > 0 then ` + rawSetTTL + ` end
local live = redis.call('ZRANGE', z, 0, -1, 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = live[i + 1]
  out[#out + 1] = redis.call('HGET', m, live[i]) or ''
end
return out
`
	// The refresh rotation's compare-and-set of the expiry, in the user's
	// slot: written only if the stored expiry is not after the one read,
	// with the time seen at the head of the session's metadata. ARGV:
	// member, new expiry, expiry read, seen, now (ms). Returns 1 when it
	// wrote, 0 when the expiry had moved, nil when the session is gone or
	// has expired.
	rawExtend = `
local s = redis.call('ZSCORE', z, ARGV[1])
if not s or tonumber(s) <= tonumber(now) then return false end
if tonumber(s) > tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', z, ARGV[2], ARGV[1])
local meta = redis.call('HGET', m, ARGV[1])
if meta then
  local i = string.find(meta, ' ', 1, true)
  redis.call('HSET', m, ARGV[1], ARGV[4] .. string.sub(meta, i))
end
` + rawPrune + rawSetTTL
	// On a single node: KEYS: the session pointer. ARGV: as rawExtend's,
	// then the prefix. The pointer's TTL follows.
	rawExtendSession = `
local u = redis.call('GET', KEYS[1])
if not u then return false end
local z = ARGV[6] .. 'user:{' .. u .. '}:sessions'
local m, now = z .. ':meta', ARGV[5]
` + rawExtend + `
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
`
	// In the user's slot: KEYS: z, m. ARGV: as rawExtend's.
	rawClusterExtendSession = `
local z, m, now = KEYS[1], KEYS[2], ARGV[5]
` + rawExtend + `
return 1
`
)

// The raw baseline's scripts in a cluster, each run in the user's slot
// after the client has read the pointer key (KEYS share the tag {<uid>}).
const (
	// KEYS: user, sessions. ARGV: member, now (ms).
	rawClusterSessionAndUser = `
local s = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not s or tonumber(s) <= tonumber(ARGV[2]) then return false end
return {s, redis.call('HGETALL', KEYS[1])}
`
	// KEYS: sessions. ARGV: member, new expiry (ms), now (ms).
	rawClusterUpdateSession = `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) <= tonumber(ARGV[3]) then return false end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local m = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], m[2])
return 1
`
	// KEYS: user, sessions. ARGV: member, expiry (ms).
	rawClusterCreateSession = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'notfound' end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('PEXPIREAT', KEYS[2], ARGV[2], 'GT')
return 'ok'
`
	// KEYS: a pointer. ARGV: the user id. Deletes the pointer only if it
	// still names that user (another user may have claimed it since).
	rawClusterRelease = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`
	// KEYS: user, accounts, sessions, authenticators. Returns {HGETALL,
	// e-mail, account fields, session members, authenticator fields}.
	rawClusterDeleteUser = `
local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then return false end
local r = {h, redis.call('HGET', KEYS[1], 'email'), redis.call('HKEYS', KEYS[2]), redis.call('ZRANGE', KEYS[3], 0, -1), redis.call('HKEYS', KEYS[4])}
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return r
`
)

// rawRedisCluster is the raw baseline on a cluster: the pointer key is in
// another slot than the user's keys, so every operation that follows one
// reads it first (as the adapter does), and deleteUser deletes the
// pointers it found in one pipeline after the script, each only if it
// still names the user (the pointers are in other slots: another user may
// have claimed one meanwhile).
func (s *redisStore) rawRedisCluster(ctx context.Context) (*rawOps, error) {
	load := func(src string) (*redis.Script, error) {
		sc := redis.NewScript(src)
		err := s.c.(*redis.ClusterClient).ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return sc.Load(ctx, n).Err() })
		return sc, err
	}
	su, err1 := load(rawClusterSessionAndUser)
	us, err2 := load(rawClusterUpdateSession)
	cs, err3 := load(rawClusterCreateSession)
	du, err4 := load(rawClusterDeleteUser)
	rel, err5 := load(rawClusterRelease)
	ext, err6 := load(rawClusterExtendSession)
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, err
	}
	single, err := s.rawRedis(ctx)
	if err != nil {
		return nil, err
	}
	return &rawOps{
		getSessionAndUser: func(ctx context.Context, token, want string) error {
			uid, err := s.c.Get(ctx, s.key("session", token)).Result()
			if err != nil {
				return err
			}
			uk := s.key("user", uid)
			v, err := su.EvalSha(ctx, s.c, []string{uk, uk + ":sessions"}, token, time.Now().UnixMilli()).Slice()
			return checkSessionReply(token, want, v, err)
		},
		getUserByAccount: func(ctx context.Context, acct, want string) error {
			uid, err := s.c.Get(ctx, s.key("account", provider+":"+acct)).Result()
			if err != nil {
				return err
			}
			h, err := s.c.HGetAll(ctx, s.key("user", uid)).Result()
			if err != nil {
				return err
			}
			if h["id"] != want {
				return fmt.Errorf("account %s: user %v, want %s", acct, h, want)
			}
			return nil
		},
		updateSession: func(ctx context.Context, token string, expires time.Time) error {
			ptr := s.key("session", token)
			uid, err := s.c.Get(ctx, ptr).Result()
			if err != nil {
				return err
			}
			if err := us.EvalSha(ctx, s.c, []string{s.key("user", uid) + ":sessions"}, token, expires.UnixMilli(), time.Now().UnixMilli()).Err(); err != nil {
				return err
			}
			return s.c.PExpireAt(ctx, ptr, expires).Err()
		},
		createAndUseToken: single.createAndUseToken,
		createSession: func(ctx context.Context, token, user string, expires time.Time) error {
			ptr := s.key("session", token)
			ok, err := s.c.SetArgs(ctx, ptr, user, redis.SetArgs{Mode: "NX", ExpireAt: expires}).Result()
			if err != nil {
				return err
			}
			if ok != "OK" {
				return fmt.Errorf("session %s exists", token)
			}
			uk := s.key("user", user)
			res, err := cs.EvalSha(ctx, s.c, []string{uk, uk + ":sessions"}, token, expires.UnixMilli()).Text()
			if err == nil && res != "ok" {
				err = errors.New("createSession: " + res)
			}
			if err != nil {
				_ = s.c.Del(context.WithoutCancel(ctx), ptr).Err()
			}
			return err
		},
		deleteUser: func(ctx context.Context, id string) error {
			uk := s.key("user", id)
			v, err := du.EvalSha(ctx, s.c, []string{uk, uk + ":accounts", uk + ":sessions", uk + ":authenticators"}).Slice()
			if err != nil {
				return err
			}
			if len(v) != 5 {
				return fmt.Errorf("deleteUser %s: %v", id, v)
			}
			if h, _ := v[0].([]any); field(h, "id") != id {
				return fmt.Errorf("deleted %v, want %s", v[0], id)
			}
			pipe := s.c.Pipeline()
			email, _ := v[1].(string)
			rel.EvalSha(ctx, pipe, []string{s.key("email", email)}, id)
			for i, kind := range []string{"account", "session", "authenticator"} {
				list, _ := v[2+i].([]any)
				for _, m := range list {
					rel.EvalSha(ctx, pipe, []string{s.key(kind, fmt.Sprint(m))}, id)
				}
			}
			_, err = pipe.Exec(ctx)
			return err
		},
		listSessions: single.listSessions,
		// The pointer read once: the read and the extension in the
		// user's slot, then the pointer's TTL (four round trips).
		refresh: func(ctx context.Context, token, want string) error {
			ptr := s.key("session", token)
			uid, err := s.c.Get(ctx, ptr).Result()
			if err != nil {
				return err
			}
			uk := s.key("user", uid)
			keys := []string{uk, uk + ":sessions"}
			v, err := su.EvalSha(ctx, s.c, keys, token, time.Now().UnixMilli()).Slice()
			from, next, err := rotation(token, want, v, err)
			if err != nil {
				return err
			}
			now := time.Now().UnixMilli()
			n, err := ext.EvalSha(ctx, s.c, []string{keys[1], keys[1] + ":meta"}, token, next, from, now, now).Int()
			if err := extended(token, n, err); err != nil {
				return err
			}
			return s.c.PExpireAt(ctx, ptr, time.UnixMilli(next)).Err()
		},
	}, nil
}

func (s *redisStore) key(kind, id string) string { return s.prefix + kind + ":{" + id + "}" }

// rawRedis is the raw baseline: one hand-written script or command per
// step, through the adapter's own client.
func (s *redisStore) rawRedis(ctx context.Context) (*rawOps, error) {
	scripts := map[string]*redis.Script{}
	for name, src := range map[string]string{"su": rawGetSessionAndUser, "ua": rawGetUserByAccount,
		"us": rawUpdateSession, "cs": rawCreateSession, "du": rawDeleteUser, "ls": rawListSessions, "ex": rawExtendSession} {
		sc := redis.NewScript(src)
		if err := sc.Load(ctx, s.c).Err(); err != nil {
			return nil, fmt.Errorf("loading script %s: %w", name, err)
		}
		scripts[name] = sc
	}
	return &rawOps{
		getSessionAndUser: func(ctx context.Context, token, want string) error {
			v, err := scripts["su"].EvalSha(ctx, s.c, []string{s.key("session", token)}, s.prefix, token, time.Now().UnixMilli()).Slice()
			return checkSessionReply(token, want, v, err)
		},
		getUserByAccount: func(ctx context.Context, acct, want string) error {
			v, err := scripts["ua"].EvalSha(ctx, s.c, []string{s.key("account", provider+":"+acct)}, s.prefix).Slice()
			if err != nil {
				return err
			}
			if field(v, "id") != want {
				return fmt.Errorf("account %s: user %v, want %s", acct, v, want)
			}
			return nil
		},
		updateSession: func(ctx context.Context, token string, expires time.Time) error {
			_, err := scripts["us"].EvalSha(ctx, s.c, []string{s.key("session", token)}, s.prefix, token,
				expires.UnixMilli(), time.Now().UnixMilli()).Text()
			return err
		},
		createAndUseToken: func(ctx context.Context, identifier, token string, expires time.Time) error {
			k := s.key("verification", identifier+":"+token)
			ms := expires.UnixMilli()
			ok, err := s.c.SetArgs(ctx, k, ms, redis.SetArgs{Mode: "NX", ExpireAt: expires}).Result()
			if err != nil {
				return err
			}
			if ok != "OK" {
				return fmt.Errorf("token %s exists", identifier)
			}
			v, err := s.c.GetDel(ctx, k).Result()
			if err != nil {
				return err
			}
			if got, _ := strconv.ParseInt(v, 10, 64); got != ms || got <= time.Now().UnixMilli() {
				return fmt.Errorf("token %s: expiry %s", identifier, v)
			}
			return nil
		},
		createSession: func(ctx context.Context, token, user string, expires time.Time) error {
			uk := s.key("user", user)
			res, err := scripts["cs"].EvalSha(ctx, s.c, []string{uk, uk + ":sessions", s.key("session", token)}, user, token, expires.UnixMilli()).Text()
			if err != nil {
				return err
			}
			if res != "ok" {
				return errors.New("createSession: " + res)
			}
			return nil
		},
		deleteUser: func(ctx context.Context, id string) error {
			uk := s.key("user", id)
			v, err := scripts["du"].EvalSha(ctx, s.c, []string{uk, uk + ":accounts", uk + ":sessions", uk + ":authenticators"}, s.prefix).Slice()
			if err != nil {
				return err
			}
			if field(v, "id") != id {
				return fmt.Errorf("deleted %v, want %s", v, id)
			}
			return nil
		},
		listSessions: func(ctx context.Context, user string, want []string) error {
			z := s.key("user", user) + ":sessions"
			v, err := scripts["ls"].EvalSha(ctx, s.c, []string{z, z + ":meta"}, time.Now().UnixMilli()).Slice()
			if err != nil {
				return err
			}
			if len(v)%3 != 0 {
				return fmt.Errorf("the sessions of %s: %v", user, v)
			}
			return checkTokens(user, want, len(v)/3, func(j int) string { s, _ := v[3*j].(string); return s })
		},
		// The read, then the extension (two round trips).
		refresh: func(ctx context.Context, token, want string) error {
			ptr := s.key("session", token)
			v, err := scripts["su"].EvalSha(ctx, s.c, []string{ptr}, s.prefix, token, time.Now().UnixMilli()).Slice()
			from, next, err := rotation(token, want, v, err)
			if err != nil {
				return err
			}
			now := time.Now().UnixMilli()
			n, err := scripts["ex"].EvalSha(ctx, s.c, []string{ptr}, token, next, from, now, now, s.prefix).Int()
			return extended(token, n, err)
		},
	}, nil
}

// rotation checks a raw getSessionAndUser script's reply of a refresh
// rotation (see checkSessionReply) and returns the expiry read and the
// next (nextExpiry's), in ms.
func rotation(token, want string, v []any, err error) (from, next int64, _ error) {
	if err := checkSessionReply(token, want, v, err); err != nil {
		return 0, 0, err
	}
	score, _ := v[0].(string)
	f, err := strconv.ParseFloat(score, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("session %s: expiry %v", token, v[0])
	}
	from = int64(f)
	return from, nextExpiry(time.UnixMilli(from)).UnixMilli(), nil
}

// extended checks a raw extension script's reply: 1, it wrote.
func extended(token string, n int, err error) error {
	if err == nil && n != 1 {
		err = fmt.Errorf("session %s: not extended (%d)", token, n)
	}
	return err
}

// field returns the value of name in an HGETALL reply, or nil.
func field(pairs []any, name string) any {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] == name {
			return pairs[i+1]
		}
	}
	return nil
}

// unlinkAll unlinks keys one command each, in one pipeline (on a node of a
// cluster they may lie in different slots).
func unlinkAll(ctx context.Context, c *redis.Client, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	pipe := c.Pipeline()
	for _, k := range keys {
		pipe.Unlink(ctx, k)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// checkSessionReply checks a raw getSessionAndUser script's reply (the
// session and its user's hash) for the session token: its user must be
// want.
func checkSessionReply(token, want string, v []any, err error) error {
	if err != nil {
		return err
	}
	if len(v) != 2 {
		return fmt.Errorf("session %s: %v", token, v)
	}
	if h, _ := v[1].([]any); field(h, "id") != want {
		return fmt.Errorf("session %s: user %v, want %s", token, v[1], want)
	}
	return nil
}

// openRedisNamed opens the Redis backend name ("redis" or "redis-cluster")
// at its URL from the environment.
func openRedisNamed(ctx context.Context, name string) (*redisStore, error) {
	if name != "redis-cluster" {
		return openRedisEnv(ctx)
	}
	u, err := env("AUTHPORT_REDIS_CLUSTER_URL")
	if err != nil {
		return nil, err
	}
	return openRedisCluster(ctx, u)
}

// openRedisEnv is openRedis on the server at $AUTHPORT_REDIS_URL.
func openRedisEnv(ctx context.Context) (*redisStore, error) {
	u, err := env("AUTHPORT_REDIS_URL")
	if err != nil {
		return nil, err
	}
	return openRedis(ctx, u)
}
