package main

// The limit server: the plainest Go server that answers GET /auth/session
// as authport's handler does, for the limit rows. It imports nothing of
// authport: it reads the session cookie, makes one read of the store (a
// JOIN of session and user through a pgx pool on PostgreSQL, one script
// on Redis in authport's key layout) or decrypts the Auth.js JWE itself,
// checks the expiry and writes the same headers and JSON. It does not
// extend sessions (none of the bench's is due) and answers null to a
// request without a valid session.

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// limitUser is what the session JSON shows: the user's fields (nil: null,
// or absent with JWT sessions) and the session's expiry.
type limitUser struct {
	name, email, image *string
	expires            time.Time
}

// limitServer serves GET /auth/session from read, which returns the
// session of a cookie value (ok false: none, or expired).
type limitServer struct {
	cookie string // the session cookie's name
	jwt    bool   // JWT sessions: absent fields are left out, not null
	read   func(ctx context.Context, value string) (u limitUser, ok bool, err error)
	close  func()
}

// ServeHTTP answers GET /auth/session.
func (s *limitServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/auth/session" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	h["Cache-Control"] = []string{"private, no-cache, no-store"}
	h["Pragma"] = []string{"no-cache"}
	h["Expires"] = []string{"0"}
	value := limitCookie(r, s.cookie)
	if value == "" {
		_, _ = w.Write([]byte("null"))
		return
	}
	u, ok, err := s.read(r.Context(), value)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"SessionError","message":"the session could not be read"}`))
		return
	}
	if !ok {
		_, _ = w.Write([]byte("null"))
		return
	}
	b := make([]byte, 0, 192)
	b = append(b, `{"user":{`...)
	sep := ""
	for _, f := range []struct {
		key string
		v   *string
	}{{`"name":`, u.name}, {`"email":`, u.email}, {`"image":`, u.image}} {
		if f.v == nil && s.jwt {
			continue
		}
		b = append(b, sep...)
		b = append(b, f.key...)
		sep = ","
		if f.v == nil {
			b = append(b, "null"...)
			continue
		}
		q, _ := json.Marshal(*f.v)
		b = append(b, q...)
	}
	b = append(b, `},"expires":"`...)
	b = u.expires.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, `"}`...)
	_, _ = w.Write(b)
}

// limitCookie returns the value of the cookie name in r's Cookie headers,
// or "".
func limitCookie(r *http.Request, name string) string {
	for _, line := range r.Header["Cookie"] {
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ";")
			if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok && k == name {
				return v
			}
		}
	}
	return ""
}

// limitPostgres reads sessions from Auth.js's pg tables (sessions, users)
// at dsn, through a pgx pool of conns connections: one JOIN, the statement
// prepared once per connection (pgx's statement cache).
func limitPostgres(ctx context.Context, dsn string, conns int32) (func(context.Context, string) (limitUser, bool, error), func(), error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, err
	}
	cfg.MaxConns, cfg.MinConns = conns, conns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	const q = `SELECT u.name, u.email, u.image, s.expires FROM sessions s JOIN users u ON u.id = s."userId" WHERE s."sessionToken" = $1`
	read := func(ctx context.Context, token string) (limitUser, bool, error) {
		var u limitUser
		err := pool.QueryRow(ctx, q, token).Scan(&u.name, &u.email, &u.image, &u.expires)
		if err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return u, false, nil
			}
			return u, false, err
		}
		return u, u.expires.After(time.Now()), nil
	}
	return read, pool.Close, nil
}

// limitRedisScript reads a session in authport's Redis key layout
// (adapters/redis/README.md): the session key holds the escaped user id,
// the user's sessions set scores the token by its expiry (ms), and the
// user's hash holds name, email and image. KEYS[1] is the session key;
// ARGV: the prefix, the token.
const limitRedisScript = `
local u = redis.call('GET', KEYS[1])
if not u then return false end
local uk = ARGV[1] .. 'user:{' .. u .. '}'
local s = redis.call('ZSCORE', uk .. ':sessions', ARGV[2])
if not s then return false end
local f = redis.call('HMGET', uk, 'name', 'email', 'image')
return {s, f[1], f[2], f[3]}
`

// limitRedisEscape escapes a key component as the layout does: every byte
// outside A-Z a-z 0-9 . _ @ + - as %XX.
func limitRedisEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._@+-", c) >= 0 {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	if b == nil {
		return s
	}
	return string(b)
}

// limitRedis reads sessions stored under prefix in authport's Redis
// layout through opts' server, with a pool of conns connections: one
// script (one round trip) per read.
func limitRedis(ctx context.Context, opts *redis.Options, prefix string, conns int) (func(context.Context, string) (limitUser, bool, error), func(), error) {
	o := *opts
	o.PoolSize, o.MinIdleConns = conns, conns
	c := redis.NewClient(&o)
	script := redis.NewScript(limitRedisScript)
	if err := script.Load(ctx, c).Err(); err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	read := func(ctx context.Context, token string) (limitUser, bool, error) {
		var u limitUser
		v, err := script.EvalSha(ctx, c, []string{prefix + "session:{" + limitRedisEscape(token) + "}"}, prefix, token).Slice()
		if err == redis.Nil {
			return u, false, nil
		}
		if err != nil || len(v) != 4 {
			return u, false, err
		}
		ms, _ := v[0].(string)
		exp, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return u, false, err
		}
		u.expires = time.UnixMilli(exp)
		for i, p := range []**string{&u.name, &u.email, &u.image} {
			if s, ok := v[i+1].(string); ok {
				*p = &s
			}
		}
		return u, u.expires.After(time.Now()), nil
	}
	return read, func() { _ = c.Close() }, nil
}

// limitJWT opens Auth.js JWT session cookies named cookie made with
// secret: a compact JWE, "dir" with A256CBC-HS512, under the key Auth.js
// derives (HKDF-SHA256 of the secret, the cookie name as salt, 64 bytes).
func limitJWT(secret, cookie string) (func(context.Context, string) (limitUser, bool, error), error) {
	key, err := hkdf.Key(sha256.New, []byte(secret), []byte(cookie), "Auth.js Generated Encryption Key ("+cookie+")", 64)
	if err != nil {
		return nil, err
	}
	algs := []jose.KeyAlgorithm{jose.DIRECT}
	encs := []jose.ContentEncryption{jose.A256CBC_HS512}
	return func(_ context.Context, token string) (limitUser, bool, error) {
		var u limitUser
		obj, err := jose.ParseEncrypted(token, algs, encs)
		if err != nil {
			return u, false, nil
		}
		plain, err := obj.Decrypt(key)
		if err != nil {
			return u, false, nil
		}
		var c struct {
			Name    *string `json:"name"`
			Email   *string `json:"email"`
			Picture *string `json:"picture"`
			Exp     float64 `json:"exp"`
		}
		if json.Unmarshal(plain, &c) != nil {
			return u, false, nil
		}
		u = limitUser{name: c.Name, email: c.Email, image: c.Picture, expires: time.Unix(int64(c.Exp), 0)}
		return u, u.expires.After(time.Now()), nil
	}, nil
}
