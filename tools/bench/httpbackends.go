package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/postgres-gorm/pgxread"
	"github.com/authport/authport/adapters/redis/unstorage"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// The databases of the HTTP rows: opened, seeded and shared by the two
// servers (bbolt, PostgreSQL in Auth.js's own schema, Redis in the
// unstorage layout, or none for JWT sessions).

// httpSide is one server setup: authport's or Auth.js's servers for one
// backend.
type httpSide struct {
	db, extend *server // database sessions, with default UpdateAge and with UpdateAge 0
	jwt        *server
}

func (s *httpSide) close() {
	for _, v := range []*server{s.db, s.extend, s.jwt} {
		if v != nil {
			v.close()
		}
	}
}

// httpBackend is a backend's two sides, its seeded data and its in-process
// handler-vs-adapter row.
type httpBackend struct {
	name       string
	users      int
	authport   *httpSide
	authjs     *httpSide // nil: no Auth.js column (bbolt)
	jwtCookies []string  // the JWT backend's cookies, by user
	inproc     *handler.Handler
	getter     core.SessionAndUserGetter
	adapter    any
	closeStore func()
	authjsSkip string
	maxAge     time.Duration
	// sqlDB is the PostgreSQL backend's database (the burst row counts
	// its writes there); nil on the others.
	sqlDB     *sql.DB
	newUserID func() (string, error)
}

func (b *httpBackend) close() {
	b.authport.close()
	if b.authjs != nil {
		b.authjs.close()
	}
	if b.closeStore != nil {
		b.closeStore()
	}
}

// openHTTP opens the backend's store, seeds it with users users, each
// with a session, and starts authport's servers on it and, when node and
// the npm packages are there, Auth.js's.
func openHTTP(ctx context.Context, name string, users int) (*httpBackend, error) {
	b := &httpBackend{name: name, users: users, authport: &httpSide{}, maxAge: auth.DefaultMaxAge}
	zero := time.Duration(0)
	zeroSecs := 0
	var adapter any
	var newUserID func() (string, error)
	var toSeed fullAdapter // seeded with seedSessions below (openAuthJSPg seeds its own)
	var node nodeConfig
	switch name {
	case "jwt":
		codec, err := jwt.NewCodec(benchSecret)
		if err != nil {
			return nil, err
		}
		b.jwtCookies = make([]string, users)
		for i := range users {
			if b.jwtCookies[i], err = codec.Encode(sessionCookie, map[string]any{"sub": userID(i), "name": "Ada Lovelace",
				"email": userID(i) + "@bench.example", "picture": "https://bench.example/" + userID(i) + ".png"}, auth.DefaultMaxAge); err != nil {
				return nil, err
			}
		}
		// auth.New wants an adapter; JWT sessions never reach it.
		if b.authport.jwt, _, err = startGo(goServerConfig{adapter: newMemory(), strategy: auth.StrategyJWT}); err != nil {
			return nil, err
		}
		node = nodeConfig{Adapter: "none", Strategy: "jwt"}
	case "bbolt":
		s, err := openBolt("")
		if err != nil {
			return nil, err
		}
		b.closeStore = s.close
		adapter, b.getter, toSeed = s.adapter, s.adapter, s.adapter
	case "postgres":
		s, u, schema, err := openPgTables(ctx, users)
		if err != nil {
			return nil, err
		}
		b.closeStore = s.close
		adapter, b.getter = s.adapter, s.adapter
		newUserID = func() (string, error) { return s.adapter.NewUserID(context.Background()) }
		b.sqlDB, b.newUserID = s.db, newUserID
		node = nodeConfig{Adapter: "pg", URL: u, Schema: schema}
	case "redis":
		u, err := env("AUTHPORT_REDIS_URL")
		if err != nil {
			return nil, err
		}
		s, base, err := openUnstorage(ctx, u)
		if err != nil {
			return nil, err
		}
		b.closeStore = s.close
		adapter, b.getter, toSeed = s.adapter, s.adapter, s.adapter
		node = nodeConfig{Adapter: "unstorage", URL: u, Base: base}
	default:
		return nil, fmt.Errorf("unknown HTTP backend %q (known: %s)", name, strings.Join(allHTTPBackends, ", "))
	}
	if toSeed != nil {
		if err := seedSessions(ctx, toSeed, users); err != nil {
			b.close()
			return nil, err
		}
	}
	if adapter != nil {
		b.adapter = adapter
		var err error
		if b.authport.db, _, err = startGo(goServerConfig{adapter: adapter, strategy: auth.StrategyDatabase, newUserID: newUserID}); err == nil {
			b.authport.extend, _, err = startGo(goServerConfig{adapter: adapter, strategy: auth.StrategyDatabase, updateAge: &zero, newUserID: newUserID})
		}
		if err == nil {
			b.inproc, err = goHandler("http://127.0.0.1", goServerConfig{adapter: adapter, strategy: auth.StrategyDatabase, newUserID: newUserID}, &linkStore{links: map[string]string{}})
		}
		if err != nil {
			b.close()
			return nil, err
		}
	}
	if name == "bbolt" {
		b.authjsSkip = "bbolt: Auth.js has no bbolt adapter"
		return b, nil
	}
	if why := authjsMissing(); why != "" {
		b.authjsSkip = why
		return b, nil
	}
	b.authjs = &httpSide{}
	var err error
	if name == "jwt" {
		b.authjs.jwt, err = startNode(ctx, node)
	} else if b.authjs.db, err = startNode(ctx, node); err == nil {
		node.UpdateAge = &zeroSecs
		b.authjs.extend, err = startNode(ctx, node)
	}
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// seedSessions creates users u0…u(n-1) (benchUser) with the session s<i>
// each, expiring in MaxAge less an hour (not due for an extension).
func seedSessions(ctx context.Context, a fullAdapter, users int) error {
	exp := time.Now().Add(auth.DefaultMaxAge - time.Hour)
	return parallel(users, 8, func(i int) error {
		if _, err := a.CreateUser(ctx, benchUser(userID(i))); err != nil {
			return err
		}
		_, err := a.CreateSession(ctx, core.Session{SessionToken: sessionToken(i), UserID: userID(i), Expires: exp})
		return err
	})
}

// authJSPgSchema is @auth/pg-adapter's schema, with the unique
// constraints of its repository's schema.sql (an index on the session
// token and the e-mail; Auth.js's queries need them as much as ours).
var authJSPgSchema = []string{
	`CREATE TABLE verification_token (identifier TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL, token TEXT NOT NULL, PRIMARY KEY (identifier, token))`,
	`CREATE TABLE accounts (id SERIAL, "userId" INTEGER NOT NULL, type VARCHAR(255) NOT NULL, provider VARCHAR(255) NOT NULL,
  "providerAccountId" VARCHAR(255) NOT NULL, refresh_token TEXT, access_token TEXT, expires_at BIGINT, id_token TEXT,
  scope TEXT, session_state TEXT, token_type TEXT, PRIMARY KEY (id), UNIQUE (provider, "providerAccountId"))`,
	`CREATE TABLE sessions (id SERIAL, "userId" INTEGER NOT NULL, expires TIMESTAMPTZ NOT NULL,
  "sessionToken" VARCHAR(255) NOT NULL UNIQUE, PRIMARY KEY (id))`,
	`CREATE TABLE users (id SERIAL, name VARCHAR(255), email VARCHAR(255) UNIQUE, "emailVerified" TIMESTAMPTZ, image TEXT, PRIMARY KEY (id))`,
	`CREATE INDEX ON sessions ("userId")`,
	`CREATE INDEX ON accounts ("userId")`,
}

// openPgTables opens Auth.js's tables, seeded with users, in a schema of
// their own on AUTHPORT_POSTGRES_URL's server: it returns the store, the
// server's URL and the schema.
func openPgTables(ctx context.Context, users int) (*sqlStore, string, string, error) {
	u, err := env("AUTHPORT_POSTGRES_URL")
	if err != nil {
		return nil, "", "", err
	}
	s, schema, err := openAuthJSPg(ctx, u, users)
	if err != nil {
		return nil, "", "", err
	}
	return s, u, schema, nil
}

// openAuthJSPg makes a schema of its own with Auth.js's pg tables, seeds
// users users (ids 1…n from the SERIAL, e-mail u<i>@bench.example) with
// the session s<i> each, and opens the gorm adapter with AuthJSPg on it.
func openAuthJSPg(ctx context.Context, base string, users int) (*sqlStore, string, error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, "", err
	}
	s := &sqlStore{dialect: "postgres", rt: &roundTrips{}}
	s.cleanup = append(s.cleanup, func() { _ = admin.Close() })
	cfg, schema, err := s.schema(ctx, admin, base, "authport_bench_http_")
	if err != nil {
		s.close()
		return nil, "", err
	}
	s.openDB(stdlib.GetConnector(*cfg))
	for _, q := range authJSPgSchema {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			s.close()
			return nil, "", fmt.Errorf("%s: %w", q, err)
		}
	}
	exp := time.Now().Add(auth.DefaultMaxAge - time.Hour)
	for _, q := range []string{
		`INSERT INTO users (name, email, "emailVerified", image) SELECT 'Ada Lovelace', 'u' || g || '@bench.example', now(),
		  'https://bench.example/u' || g || '.png' FROM generate_series(0, $1 - 1) g ORDER BY g`,
		`INSERT INTO sessions ("userId", expires, "sessionToken") SELECT g + 1, $2, 's' || g FROM generate_series(0, $1 - 1) g`,
	} {
		args := []any{users}
		if strings.Contains(q, "$2") {
			args = append(args, exp)
		}
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			s.close()
			return nil, "", fmt.Errorf("seeding: %w", err)
		}
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
		s.close()
		return nil, "", err
	}
	if err := authJSPgAdapter(ctx, s); err != nil {
		s.close()
		return nil, "", err
	}
	return s, schema, nil
}

// authJSPgAdapter opens the gorm adapter with AuthJSPg on s.db as
// s.adapter, reading sessions through pgxread, as the adapter's README
// recommends for PostgreSQL, unless AUTHPORT_BENCH_PG_READ is
// "database/sql" (the read without the option, to compare).
func authJSPgAdapter(ctx context.Context, s *sqlStore) error {
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: s.db}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return err
	}
	opts := []gormadapter.Option{gormadapter.AuthJSPg(), gormadapter.WithRowReader(pgxread.New())}
	switch v := os.Getenv(pgReadEnv); v {
	case "", "pgxread":
	case "database/sql":
		opts = opts[:1]
	default:
		return fmt.Errorf("%s=%q: want pgxread (the default) or database/sql", pgReadEnv, v)
	}
	s.adapter, err = gormadapter.New(ctx, gdb, opts...)
	return err
}

// pgReadEnv chooses the PostgreSQL adapter's session read in the handler
// rows (authJSPgAdapter).
const pgReadEnv = "AUTHPORT_BENCH_PG_READ"

// openUnstorage opens the Redis adapter in @auth/unstorage-adapter's
// layout under a base of its own (its keys deleted at close).
func openUnstorage(ctx context.Context, rawURL string) (*redisStore, string, error) {
	base := provision.NewName("authport-bench-http-")
	s, err := newRedisStore(ctx, rawURL, base+":", false)
	if err != nil {
		return nil, "", err
	}
	if s.adapter, err = unstorage.New(ctx, s.c, base); err != nil {
		_ = s.c.Close()
		return nil, "", err
	}
	return s, base, nil
}
