package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	boltadapter "github.com/authport/authport/adapters/bbolt"
	"github.com/authport/authport/adapters/memory"
	mongoadapter "github.com/authport/authport/adapters/mongodb"
	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/postgres-gorm/pgxread"
	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/go-sql-driver/mysql"
	goredis "github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// store is the adapter the demo signs users in through, what it is
// ("bbolt /tmp/authport-demo.db"), and how to release it.
type store struct {
	adapter any
	desc    string
	close   func() error
}

// errBadDB reports a -db value the demo cannot open.
var errBadDB = errors.New("bad -db value")

// defaultBoltPath is where the demo keeps its data when -db is not given.
func defaultBoltPath() string { return filepath.Join(os.TempDir(), "authport-demo.db") }

// openStore opens the adapter that db names:
//
//	""  or "bbolt"          bbolt in defaultBoltPath
//	"bbolt:PATH"            bbolt in PATH
//	"memory"                in memory, gone when the demo stops
//	"postgres://…"          PostgreSQL through the gorm adapter (tables created)
//	"mysql://u:p@host/db"   MySQL or MariaDB through the gorm adapter;
//	"u:p@tcp(host)/db"      the go-sql-driver DSN form works too
//	"sqlite:PATH"           SQLite through the gorm adapter
//	"redis://…"             Redis; a "prefix" query parameter sets the key prefix
//	"mongodb://…/DB"        MongoDB, database DB ("authport" when none)
func openStore(ctx context.Context, db string) (*store, error) {
	scheme, rest, _ := strings.Cut(db, ":")
	switch {
	case db == "" || db == "bbolt":
		return openBolt(ctx, defaultBoltPath())
	case scheme == "bbolt":
		return openBolt(ctx, rest)
	case db == "memory":
		return &store{adapter: memory.New(), desc: "memory (gone when the demo stops)", close: func() error { return nil }}, nil
	case scheme == "postgres" || scheme == "postgresql":
		// Sessions read through pgx itself, as the adapter's README
		// recommends on PostgreSQL.
		return openGorm(ctx, postgres.Open(db), "PostgreSQL "+redact(db), gormadapter.WithRowReader(pgxread.New()))
	case scheme == "mysql":
		dsn, err := mysqlDSN(db)
		if err != nil {
			return nil, err
		}
		return openGorm(ctx, gormmysql.Open(dsn), "MySQL "+redact(db))
	case strings.Contains(db, "@tcp(") || strings.Contains(db, "@unix("):
		dsn, err := withParseTime(db)
		if err != nil {
			return nil, err
		}
		return openGorm(ctx, gormmysql.Open(dsn), "MySQL (DSN)")
	case scheme == "sqlite":
		if rest == "" {
			return nil, fmt.Errorf("%w %q: say which file, e.g. sqlite:authport.sqlite", errBadDB, db)
		}
		return openGorm(ctx, sqlite.Open("file:"+rest+"?_foreign_keys=on&_busy_timeout=5000"), "SQLite "+rest)
	case scheme == "redis" || scheme == "rediss":
		return openRedis(ctx, db)
	case scheme == "mongodb" || scheme == "mongodb+srv":
		return openMongo(ctx, db)
	}
	return nil, fmt.Errorf("%w %q: use bbolt:PATH, memory, postgres://…, mysql://…, sqlite:PATH, redis://… or mongodb://…", errBadDB, db)
}

func openBolt(ctx context.Context, path string) (*store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: bbolt needs a file, e.g. bbolt:authport.db", errBadDB)
	}
	a, err := boltadapter.Open(ctx, path, boltadapter.WithLockTimeout(2*time.Second))
	if errors.Is(err, boltadapter.ErrLocked) {
		return nil, fmt.Errorf("open bbolt file %s (is another demo using it?): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open bbolt file: %w", err)
	}
	return &store{adapter: a, desc: "bbolt " + path, close: a.Close}, nil
}

func openGorm(ctx context.Context, dialector gorm.Dialector, desc string, opts ...gormadapter.Option) (*store, error) {
	db, err := gorm.Open(dialector, &gorm.Config{Logger: logger.Discard, TranslateError: true})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", desc, err)
	}
	closeDB := func() error {
		sqlDB, err := db.DB()
		if err != nil {
			return err
		}
		return sqlDB.Close()
	}
	a, err := gormadapter.New(ctx, db, opts...)
	if err == nil {
		err = a.Migrate(ctx)
	}
	if err != nil {
		_ = closeDB()
		return nil, fmt.Errorf("set up %s: %w", desc, err)
	}
	return &store{adapter: a, desc: desc, close: closeDB}, nil
}

// mysqlDSN turns mysql://user:pass@host:port/db?params into the driver's
// DSN, with parseTime on.
func mysqlDSN(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errBadDB, err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	if u.Port() == "" {
		cfg.Addr = u.Host + ":3306"
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" {
		return "", fmt.Errorf("%w %s: name the database, e.g. mysql://root@127.0.0.1:3306/test", errBadDB, redact(raw))
	}
	cfg.ParseTime = true
	for k, vs := range u.Query() {
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params[k] = vs[0]
	}
	return cfg.FormatDSN(), nil
}

func withParseTime(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errBadDB, err)
	}
	cfg.ParseTime = true
	return cfg.FormatDSN(), nil
}

func openRedis(ctx context.Context, raw string) (*store, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadDB, err)
	}
	q := u.Query()
	var opts []redisadapter.Option
	if p := q.Get("prefix"); p != "" {
		opts = append(opts, redisadapter.WithPrefix(p))
	}
	q.Del("prefix")
	u.RawQuery = q.Encode()
	ro, err := goredis.ParseURL(u.String())
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", errBadDB, redact(raw), err)
	}
	// Reach the address first: go-redis logs every failed dial of its
	// retries (four lines) before returning the error; one line is enough.
	var d net.Dialer
	conn, err := d.DialContext(ctx, cmp.Or(ro.Network, "tcp"), ro.Addr)
	if err != nil {
		return nil, fmt.Errorf("connect to Redis %s: %w", redact(raw), err)
	}
	_ = conn.Close()
	client := goredis.NewClient(ro)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("connect to Redis %s: %w", redact(raw), err)
	}
	a, err := redisadapter.New(ctx, client, opts...)
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("set up Redis %s: %w", redact(raw), err)
	}
	return &store{adapter: a, desc: "Redis " + redact(raw), close: client.Close}, nil
}

func openMongo(ctx context.Context, raw string) (*store, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadDB, err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		name = "authport"
	}
	client, err := mongo.Connect(options.Client().
		// 5 s to find a server, not the driver's 30 s: a server that is not
		// running fails fast (serverSelectionTimeoutMS in the URI wins).
		SetServerSelectionTimeout(5 * time.Second).ApplyURI(raw).SetTimeout(30 * time.Second))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", errBadDB, redact(raw), err)
	}
	closeClient := func() error { return client.Disconnect(context.Background()) }
	a, err := mongoadapter.New(ctx, client.Database(name))
	if err == nil {
		err = a.Migrate(ctx)
	}
	if err != nil {
		_ = closeClient()
		return nil, fmt.Errorf("set up MongoDB %s: %w", redact(raw), err)
	}
	return &store{adapter: a, desc: "MongoDB " + redact(raw), close: closeClient}, nil
}

// redact drops the password from a URL, for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
