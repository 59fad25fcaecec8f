package main

import (
	"context"
	"fmt"

	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// The read path: GET /auth/session with a valid session cookie, through
// the handler, core/auth and the adapter, on PostgreSQL (Auth.js's pg
// tables through the gorm adapter's AuthJSPg preset, as in the HTTP rows),
// Redis (authport's own key layout, package redisadapter) and JWT
// sessions (no store). The limit rows serve it beside the hand-written
// server (limit.go), and TestReadPathAllocs holds its allocations to
// budgets.

// readPathBackends are the read path's backends, in table order.
var readPathBackends = []string{"postgres", "redis", "jwt"}

// readPath is one backend of the read path, seeded with users users.
type readPath struct {
	name    string
	users   int
	auth    *auth.Auth
	handler *handler.Handler
	// getter is the adapter (nil with JWT sessions).
	getter core.SessionAndUserGetter
	// cookies are the session cookie's values, by user: the session
	// token, or the JWT.
	cookies []string
	// pgDSN is PostgreSQL's URL with the tables' schema as search_path.
	pgDSN string
	// redis is the Redis store (client and key prefix).
	redis *redisStore
	cfg   goServerConfig
	close func()
}

// newHandler builds another handler on p's store for origin (its auth.Auth
// with BaseURL origin/auth), as a server on that origin serves it.
func (p *readPath) newHandler(origin string) (*auth.Auth, *handler.Handler, error) {
	a, err := goAuth(origin, p.cfg, &linkStore{links: map[string]string{}})
	if err != nil {
		return nil, nil, err
	}
	h, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
	return a, h, err
}

// readPathOrigin is the origin of the read path's handler.
const readPathOrigin = "http://127.0.0.1"

// openReadPath opens backend name ("postgres", "redis", "jwt"), seeds
// users users, each with a session expiring in MaxAge less an hour (not
// due for an extension), and builds the handler on it.
func openReadPath(ctx context.Context, name string, users int) (*readPath, error) {
	p := &readPath{name: name, users: users, cookies: make([]string, users), close: func() {}}
	cfg := goServerConfig{strategy: auth.StrategyDatabase}
	for i := range users {
		p.cookies[i] = sessionToken(i)
	}
	switch name {
	case "postgres":
		s, u, schema, err := openPgTables(ctx, users)
		if err != nil {
			return nil, err
		}
		p.close = s.close
		if p.pgDSN, err = provision.InSchema(u, schema); err != nil {
			s.close()
			return nil, err
		}
		cfg.adapter, p.getter = s.adapter, s.adapter
	case "redis":
		u, err := env("AUTHPORT_REDIS_URL")
		if err != nil {
			return nil, err
		}
		s, err := newRedisStore(ctx, u, provision.NewName("authport-bench-read-")+":", false)
		if err != nil {
			return nil, err
		}
		p.close, p.redis = s.close, s
		a, err := redisadapter.New(ctx, s.c, redisadapter.WithPrefix(s.prefix))
		if err != nil {
			s.close()
			return nil, err
		}
		s.adapter = a
		if err := seedSessions(ctx, a, users); err != nil {
			s.close()
			return nil, err
		}
		cfg.adapter, p.getter = a, a
	case "jwt":
		codec, err := jwt.NewCodec(benchSecret)
		if err != nil {
			return nil, err
		}
		for i := range users {
			if p.cookies[i], err = codec.Encode(sessionCookie, map[string]any{"sub": userID(i), "name": "Ada Lovelace",
				"email": userID(i) + "@bench.example", "picture": "https://bench.example/" + userID(i) + ".png"}, auth.DefaultMaxAge); err != nil {
				return nil, err
			}
		}
		// auth.New wants an adapter; JWT sessions never reach it.
		cfg.adapter, cfg.strategy = newMemory(), auth.StrategyJWT
	default:
		return nil, fmt.Errorf("unknown read-path backend %q (known: postgres, redis, jwt)", name)
	}
	p.cfg = cfg
	var err error
	if p.auth, p.handler, err = p.newHandler(readPathOrigin); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}
