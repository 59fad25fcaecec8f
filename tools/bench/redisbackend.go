package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	redisadapter "github.com/authport/authport/adapters/redis"
)

// redisStore is the Redis adapter on a client of its own, with a key
// prefix of its own (its keys are deleted at close).
type redisStore struct {
	c       *redis.Client
	prefix  string
	adapter *redisadapter.Adapter
	rt      *roundTrips
}

func openRedis(ctx context.Context, rawURL string) (*redisStore, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	s := &redisStore{rt: &roundTrips{}, prefix: randomName("authport-bench-") + ":"}
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return s.rt.dial(ctx, network, addr)
	}
	opts.PoolSize = 32
	opts.MinIdleConns = 32
	opts.ContextTimeoutEnabled = true
	s.c = redis.NewClient(opts)
	if err := s.c.Ping(ctx).Err(); err != nil {
		_ = s.c.Close()
		return nil, err
	}
	s.adapter, err = redisadapter.New(s.c, redisadapter.WithPrefix(s.prefix))
	if err != nil {
		_ = s.c.Close()
		return nil, err
	}
	return s, nil
}

// close deletes the bench's keys and closes the client.
func (s *redisStore) close() {
	ctx := context.Background()
	iter := s.c.Scan(ctx, 0, s.prefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			_ = s.c.Unlink(ctx, batch...).Err()
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		_ = s.c.Unlink(ctx, batch...).Err()
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

func (s *redisStore) key(kind, id string) string { return s.prefix + kind + ":{" + id + "}" }

// rawRedis is the raw baseline: one hand-written script or command per
// step, through the adapter's own client.
func (s *redisStore) rawRedis(ctx context.Context) (*rawOps, error) {
	scripts := map[string]*redis.Script{}
	for name, src := range map[string]string{"su": rawGetSessionAndUser, "ua": rawGetUserByAccount,
		"us": rawUpdateSession, "cs": rawCreateSession, "du": rawDeleteUser} {
		sc := redis.NewScript(src)
		if err := sc.Load(ctx, s.c).Err(); err != nil {
			return nil, fmt.Errorf("loading script %s: %w", name, err)
		}
		scripts[name] = sc
	}
	return &rawOps{
		getSessionAndUser: func(ctx context.Context, token, want string) error {
			v, err := scripts["su"].EvalSha(ctx, s.c, []string{s.key("session", token)}, s.prefix, token, time.Now().UnixMilli()).Slice()
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
	}, nil
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
