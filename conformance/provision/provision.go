// Package provision gives a test a database server to run against.
//
// Each helper ([Postgres], [MySQL], [Redis], [RedisCluster], [MongoDB], and
// [Server] for any backend of the table of backends,
// conformance/backendtable) looks for its server in this order:
//
//  1. An environment variable naming a running server:
//     AUTHPORT_POSTGRES_URL (a PostgreSQL URL, e.g.
//     postgres://postgres@127.0.0.1:5432/test?sslmode=disable),
//     AUTHPORT_MYSQL_URL (a go-sql-driver/mysql DSN, e.g.
//     root@tcp(127.0.0.1:3306)/test), AUTHPORT_REDIS_URL (a Redis URL, e.g.
//     redis://127.0.0.1:6379/0), AUTHPORT_REDIS_CLUSTER_URL (comma-separated
//     host:port seeds of a Redis Cluster), AUTHPORT_REDIS_SENTINEL_URL (a
//     Redis Sentinel deployment, see [RedisSentinel]),
//     AUTHPORT_POSTGRES_HA_URL (a multi-host PostgreSQL URL, see
//     [PostgresHA]) or AUTHPORT_MONGODB_URL (a MongoDB URI).
//  2. Otherwise the test is skipped with the reason, unless AUTHPORT_REQUIRE
//     names the backend: then the test fails with the same reason.
//     AUTHPORT_REQUIRE is a comma-separated list of backend names (those
//     of the table of backends, conformance/backendtable, and dex,
//     chromium, npm and containers) or "all". A CI that sets it can never pass
//     with a database silently skipped; a name it does not know (a
//     misspelling) fails a test whose database is missing, too.
//
// This package starts no database: scripts/services.sh provides every one
// of them on this machine and prints the variables, and the module
// tests/backends runs each adapter's conformance suite on containers
// it starts through testcontainers-go (which this package must not import:
// adapters' tests import it, and their consumers' go.sum would get
// testcontainers' modules).
//
// The returned server is shared, and may hold data from earlier runs: a
// caller isolates each test in a database, schema, key prefix or collection
// set of its own, and drops it in t.Cleanup.
//
// AUTHPORT_REQUIRE also accepts the names of what other test helpers
// provide, so that one list serves every module's tests: dex (the OpenID
// provider of oauth/oauthtest) and chromium (the browser of the end-to-end
// tests in examples/demo and tests/passkeystore).
package provision

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/authport/authport/conformance/backendtable"
)

// Backend names, as used in AUTHPORT_REQUIRE and as the conformance suite's
// backend subtest names.
const (
	BackendPostgres     = "postgres"
	BackendMySQL        = "mysql"
	BackendRedis        = "redis"
	BackendRedisCluster = "redis-cluster"
	BackendMongoDB      = "mongodb"
	// BackendRedisSentinel is Redis Sentinel: a master, its replica and
	// sentinels, reached through go-redis's failover client.
	BackendRedisSentinel = "redis-sentinel"
	// BackendPostgresHA is a highly available PostgreSQL (a primary and a
	// synchronous standby), reached through a multi-host URL.
	BackendPostgresHA = "postgres-ha"
)

// BackendContainers is the AUTHPORT_REQUIRE name that makes a missing
// container engine fail the tests of tests/backends, which start their
// databases through testcontainers-go.
const BackendContainers = "containers"

// RequireEnv is the environment variable that turns a missing database from
// a skip into a failure; see [Required].
const RequireEnv = "AUTHPORT_REQUIRE"

// knownBackends returns the names AUTHPORT_REQUIRE may hold besides "all":
// the backends of the table (conformance/backendtable), "dex" and
// "chromium" (see the package comment), "npm", which makes a missing
// Node.js setup fail the interop tests (conformance/nodeproc,
// scripts/test.sh), and "containers".
func knownBackends() []string {
	table, _ := backendtable.Read() // a broken table fails backendtable's own test
	return append(table.Names(), "dex", "chromium", "npm", BackendContainers)
}

// backend describes one kind of database server.
type backend struct {
	name    string // the AUTHPORT_REQUIRE name
	env     string // the variable that names a running server
	missing string // the skip reason
}

// provided ends the skip reason of a database: where to get one.
const provided = " (eval \"$(scripts/services.sh)\" provides one on this machine; " +
	"tests/backends runs the conformance suite on containers instead)"

// backendFor returns the description of the backend named name, from its
// row of the table (conformance/backendtable); a name without a variable
// there gets a description with no variable.
func backendFor(name string) backend {
	table, err := backendtable.Read()
	if err != nil {
		return backend{name: name, missing: err.Error()}
	}
	s, ok := table.Get(name)
	if !ok || s.Env == "" {
		return backend{name: name, missing: "no " + name + " backend"}
	}
	missing := "no " + s.Title + ": set " + s.Env
	if s.Form != "" {
		missing += " (" + s.Form + ")"
	}
	return backend{name: name, env: s.Env, missing: missing + provided}
}

// Server returns the value of the variable that names the server of the
// backend name in the table of backends (conformance/backendtable), such as
// AUTHPORT_POSTGRES_URL for postgres. Without it it skips t, or fails it
// when [Required](name). A backend added to the table needs no helper of
// its own here: its test calls Server with its name.
func Server(t testing.TB, name string) string {
	t.Helper()
	return provide(t, backendFor(name), os.Getenv)
}

// Postgres returns the URL of a PostgreSQL server, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable, from
// AUTHPORT_POSTGRES_URL. Without it it skips t, or fails it when
// [Required]("postgres").
func Postgres(t testing.TB) string {
	t.Helper()
	return provide(t, backendFor(BackendPostgres), os.Getenv)
}

// MySQL returns a go-sql-driver/mysql DSN of a MySQL or MariaDB server, e.g.
// root@tcp(127.0.0.1:3306)/test, from AUTHPORT_MYSQL_URL. The DSN carries no
// parameters of its own beyond those in the variable; the caller adds what
// its driver needs (parseTime, say). Without it it skips t, or fails it when
// [Required]("mysql").
func MySQL(t testing.TB) string {
	t.Helper()
	return provide(t, backendFor(BackendMySQL), os.Getenv)
}

// Redis returns the URL of a single Redis server, e.g.
// redis://127.0.0.1:6379/0, from AUTHPORT_REDIS_URL. Without it it skips t,
// or fails it when [Required]("redis").
func Redis(t testing.TB) string {
	t.Helper()
	return provide(t, backendFor(BackendRedis), os.Getenv)
}

// RedisCluster returns the host:port seed addresses of a Redis Cluster from
// AUTHPORT_REDIS_CLUSTER_URL (comma-separated). Without the variable it
// skips t, or fails it when [Required]("redis-cluster"). The result has at least one address.
func RedisCluster(t testing.TB) []string {
	t.Helper()
	return clusterSeeds(t, os.Getenv)
}

// clusterSeeds implements [RedisCluster] with the environment read through
// getenv.
func clusterSeeds(t testing.TB, getenv func(string) string) []string {
	t.Helper()
	b := backendFor(BackendRedisCluster)
	seeds := splitSeeds(getenv(b.env))
	if len(seeds) == 0 {
		decide(t, b, getenv(RequireEnv), b.missing)
		return nil
	}
	return seeds
}

// RedisSentinel returns the URL of a Redis Sentinel deployment from
// AUTHPORT_REDIS_SENTINEL_URL, in the form go-redis's ParseFailoverURL
// reads, e.g.
// redis://127.0.0.1:26390/0?master_name=authport&addr=127.0.0.1:26391.
// Without it it skips t, or fails it when [Required]("redis-sentinel").
func RedisSentinel(t testing.TB) string {
	t.Helper()
	return provide(t, backendFor(BackendRedisSentinel), os.Getenv)
}

// PostgresHA returns the multi-host URL of a highly available PostgreSQL
// (a primary and a synchronous standby) from AUTHPORT_POSTGRES_HA_URL, e.g.
// postgres://postgres@127.0.0.1:5441,127.0.0.1:5442/test?target_session_attrs=read-write&sslmode=disable.
// Without it it skips t, or fails it when [Required]("postgres-ha").
func PostgresHA(t testing.TB) string {
	t.Helper()
	return provide(t, backendFor(BackendPostgresHA), os.Getenv)
}

// MongoDB returns a MongoDB connection URI from AUTHPORT_MONGODB_URL, e.g.
// mongodb://127.0.0.1:27018/. Without it it skips t, or fails it when
// [Required]("mongodb").
func MongoDB(t testing.TB) string {
	t.Helper()
	return provide(t, backendFor(BackendMongoDB), os.Getenv)
}

// Required reports whether AUTHPORT_REQUIRE names backend (one of postgres,
// mysql, redis, redis-cluster, redis-sentinel, postgres-ha, mongodb, dex,
// chromium, memory, bbolt,
// sqlite), or is "all".
// Names are compared without regard to case or surrounding spaces. A test
// whose required backend is missing fails instead of skipping.
func Required(backend string) bool {
	return requiredIn(os.Getenv(RequireEnv), backend)
}

// requiredIn reports whether the AUTHPORT_REQUIRE value list names backend
// or is "all".
func requiredIn(list, backend string) bool {
	backend = strings.ToLower(strings.TrimSpace(backend))
	if backend == "" {
		return false
	}
	for _, name := range splitList(list) {
		if name == "all" || name == backend {
			return true
		}
	}
	return false
}

// unknownRequired returns the names in the AUTHPORT_REQUIRE value list that
// are neither a backend nor "all".
func unknownRequired(list string) []string {
	var unknown []string
	for _, name := range splitList(list) {
		if name != "all" && !slices.Contains(knownBackends(), name) {
			unknown = append(unknown, name)
		}
	}
	return unknown
}

// splitList splits a comma-separated list into lowercased, trimmed,
// non-empty names.
func splitList(list string) []string {
	return splitSeeds(strings.ToLower(list))
}

// splitSeeds splits a comma-separated list of addresses into trimmed,
// non-empty ones.
func splitSeeds(s string) []string {
	var seeds []string
	for a := range strings.SplitSeq(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			seeds = append(seeds, a)
		}
	}
	return seeds
}

// verdict is what a helper does when its backend is missing.
type verdict struct {
	fatal  bool   // fail the test rather than skip it
	reason string // the message to skip or fail with
}

// missingVerdict decides, from the AUTHPORT_REQUIRE value require, whether a
// missing backend b skips or fails the test, and with what message. A
// require value that names an unknown backend fails the test too, so that a
// misspelt name can never turn a required database into a skip.
func missingVerdict(b backend, require, reason string) verdict {
	if unknown := unknownRequired(require); len(unknown) > 0 {
		return verdict{fatal: true, reason: fmt.Sprintf(
			"%s; and %s=%q names unknown backends %s (known: all, %s)",
			reason, RequireEnv, require, strings.Join(unknown, ", "), strings.Join(knownBackends(), ", "))}
	}
	if requiredIn(require, b.name) {
		return verdict{fatal: true, reason: reason + " (" + RequireEnv + " requires " + b.name + ")"}
	}
	return verdict{reason: reason}
}

// decide skips or fails t because backend b is missing.
func decide(t testing.TB, b backend, require, reason string) {
	t.Helper()
	v := missingVerdict(b, require, reason)
	if v.fatal {
		t.Fatal(v.reason)
		return
	}
	t.Skip(v.reason)
}

// provide implements the helpers: the variable named by b.env from getenv,
// else a skip or failure of t. It returns "" only after t.Skip or t.Fatal
// (which, on a real test, do not return).
func provide(t testing.TB, b backend, getenv func(string) string) string {
	t.Helper()
	if v := strings.TrimSpace(getenv(b.env)); v != "" {
		return v
	}
	decide(t, b, getenv(RequireEnv), b.missing)
	return ""
}
