package provision

import (
	"slices"
	"strings"
	"testing"
)

func TestRequired(t *testing.T) {
	tests := []struct {
		require string
		want    map[string]bool // backends not listed must be false
	}{
		{"", nil},
		{"   ", nil},
		{"all", map[string]bool{"postgres": true, "mysql": true, "redis": true, "redis-cluster": true, "mongodb": true}},
		{"ALL", map[string]bool{"postgres": true, "mysql": true, "redis": true, "redis-cluster": true, "mongodb": true}},
		{"postgres", map[string]bool{"postgres": true}},
		{"postgres,mysql", map[string]bool{"postgres": true, "mysql": true}},
		{" Redis , mongodb ,", map[string]bool{"redis": true, "mongodb": true}},
		{"redis-cluster", map[string]bool{"redis-cluster": true}},
		{"redis", map[string]bool{"redis": true}}, // not redis-cluster
		{",,", nil},
		{"postgresql", nil}, // not a prefix match
		{"memory,sqlite", nil},
		{"mysql,all", map[string]bool{"postgres": true, "mysql": true, "redis": true, "redis-cluster": true, "mongodb": true}},
	}
	backends := []string{"postgres", "mysql", "redis", "redis-cluster", "mongodb"}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.require, ",", ";"), func(t *testing.T) {
			t.Setenv(RequireEnv, tt.require)
			for _, b := range backends {
				if got := Required(b); got != tt.want[b] {
					t.Errorf("AUTHPORT_REQUIRE=%q: Required(%q) = %v, want %v", tt.require, b, got, tt.want[b])
				}
			}
			if Required("") {
				t.Errorf("AUTHPORT_REQUIRE=%q: Required(\"\") = true", tt.require)
			}
		})
	}
}

func TestMissingVerdict(t *testing.T) {
	pg := backendFor(BackendPostgres)
	tests := []struct {
		name      string
		require   string
		fatal     bool
		wantInMsg string
	}{
		{"unset skips", "", false, "no PostgreSQL: set AUTHPORT_POSTGRES_URL"},
		{"other backend skips", "mysql,redis", false, "no PostgreSQL"},
		{"named fails", "mysql,postgres", true, "AUTHPORT_REQUIRE requires postgres"},
		{"all fails", "all", true, "no PostgreSQL"},
		{"misspelt fails", "postgress", true, `unknown backends postgress`},
		{"misspelt among known fails", "mysql,mongo", true, `unknown backends mongo`},
		{"embedded names are known", "memory,bbolt,sqlite", false, "no PostgreSQL"},
		{"npm is known", "npm", false, "no PostgreSQL"},
		{"containers is known", "containers", false, "no PostgreSQL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := missingVerdict(pg, tt.require, pg.missing)
			if v.fatal != tt.fatal {
				t.Errorf("fatal = %v, want %v (reason %q)", v.fatal, tt.fatal, v.reason)
			}
			if !strings.HasPrefix(v.reason, pg.missing) || !strings.Contains(v.reason, tt.wantInMsg) {
				t.Errorf("reason = %q, want it to start with %q and contain %q", v.reason, pg.missing, tt.wantInMsg)
			}
		})
	}
}

// fakeTB records what a helper does to its test instead of ending it.
type fakeTB struct {
	testing.TB // nil: calling anything not overridden below panics, which the test would see
	skipped    string
	failed     string
}

func (f *fakeTB) Helper()          {}
func (f *fakeTB) Skip(args ...any) { f.skipped = strings.TrimSpace(sprint(args)) }
func (f *fakeTB) Fatal(args ...any) {
	f.failed = strings.TrimSpace(sprint(args))
}

func sprint(args []any) string {
	var b strings.Builder
	for _, a := range args {
		if s, ok := a.(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestProvide(t *testing.T) {
	pg := backendFor(BackendPostgres)
	tests := []struct {
		name                  string
		vars                  map[string]string
		want, skipped, failed string
	}{
		{name: "variable", vars: map[string]string{"AUTHPORT_POSTGRES_URL": " postgres://h/db "}, want: "postgres://h/db"},
		{
			name: "variable even when required",
			vars: map[string]string{"AUTHPORT_POSTGRES_URL": "postgres://h/db", RequireEnv: "all"}, want: "postgres://h/db",
		},
		{name: "unset skips", skipped: pg.missing},
		{name: "blank variable is unset", vars: map[string]string{"AUTHPORT_POSTGRES_URL": "  "}, skipped: pg.missing},
		{
			name: "unset required fails", vars: map[string]string{RequireEnv: "postgres"},
			failed: pg.missing + " (AUTHPORT_REQUIRE requires postgres)",
		},
		{name: "other backend required skips", vars: map[string]string{RequireEnv: "redis"}, skipped: pg.missing},
		{name: "containers required skips", vars: map[string]string{RequireEnv: "containers"}, skipped: pg.missing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeTB{}
			got := provide(f, pg, env(tt.vars))
			if got != tt.want || f.skipped != tt.skipped || f.failed != tt.failed {
				t.Errorf("provide = %q, skipped %q, failed %q;\nwant %q, skipped %q, failed %q",
					got, f.skipped, f.failed, tt.want, tt.skipped, tt.failed)
			}
		})
	}
}

// TestMissingSaysWhereToGetOne checks that the reason of every database
// names its variable, scripts/services.sh and tests/backends.
func TestMissingSaysWhereToGetOne(t *testing.T) {
	for _, name := range []string{BackendPostgres, BackendMySQL, BackendRedis, BackendRedisCluster, BackendMongoDB} {
		b := backendFor(name)
		for _, want := range []string{b.env, "scripts/services.sh", "tests/backends"} {
			if !strings.Contains(b.missing, want) {
				t.Errorf("%s: reason %q does not name %s", name, b.missing, want)
			}
		}
	}
}

func TestClusterSeeds(t *testing.T) {
	tests := []struct {
		name            string
		vars            map[string]string
		want            []string
		skipped, failed bool
	}{
		{name: "seeds", vars: map[string]string{"AUTHPORT_REDIS_CLUSTER_URL": "127.0.0.1:7000, 127.0.0.1:7001,,"}, want: []string{"127.0.0.1:7000", "127.0.0.1:7001"}},
		{name: "one seed", vars: map[string]string{"AUTHPORT_REDIS_CLUSTER_URL": "h:7000"}, want: []string{"h:7000"}},
		{name: "unset skips", skipped: true},
		{name: "empty list skips", vars: map[string]string{"AUTHPORT_REDIS_CLUSTER_URL": " , "}, skipped: true},
		{name: "unset redis required skips", vars: map[string]string{RequireEnv: "redis"}, skipped: true},
		{name: "unset required fails", vars: map[string]string{RequireEnv: "redis-cluster"}, failed: true},
		{name: "unset all fails", vars: map[string]string{RequireEnv: "all"}, failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeTB{}
			got := clusterSeeds(f, env(tt.vars))
			if !slices.Equal(got, tt.want) || (f.skipped != "") != tt.skipped || (f.failed != "") != tt.failed {
				t.Errorf("clusterSeeds = %q, skipped %q, failed %q; want %q, skipped %v, failed %v",
					got, f.skipped, f.failed, tt.want, tt.skipped, tt.failed)
			}
			if msg := f.skipped + f.failed; msg != "" && !strings.Contains(msg, "AUTHPORT_REDIS_CLUSTER_URL") {
				t.Errorf("reason %q does not name AUTHPORT_REDIS_CLUSTER_URL", msg)
			}
		})
	}
}

// The high-availability backends are known names: required by "all" or by
// name, and a missing one fails rather than skips when required.
func TestHABackends(t *testing.T) {
	for _, b := range []string{BackendRedisSentinel, BackendPostgresHA} {
		if !requiredIn("all", b) || !requiredIn(b, b) || requiredIn("redis,postgres", b) {
			t.Errorf("%s: requiredIn wrong", b)
		}
		if u := unknownRequired(b); len(u) != 0 {
			t.Errorf("%s: unknown to AUTHPORT_REQUIRE: %v", b, u)
		}
		env := backendFor(b).env
		if env == "" {
			t.Fatalf("%s: no variable", b)
		}
		getenv := func(k string) string { return map[string]string{RequireEnv: "all"}[k] }
		if v := missingVerdict(backendFor(b), getenv(RequireEnv), backendFor(b).missing); !v.fatal || !strings.Contains(v.reason, env) {
			t.Errorf("%s: missing under all: %+v", b, v)
		}
	}
}

// TestBackendFor pins each backend's variable and skip reason.
func TestBackendFor(t *testing.T) {
	tests := []struct{ name, env, missing string }{
		{BackendPostgres, "AUTHPORT_POSTGRES_URL", "no PostgreSQL: set AUTHPORT_POSTGRES_URL" + provided},
		{BackendMySQL, "AUTHPORT_MYSQL_URL", "no MySQL/MariaDB: set AUTHPORT_MYSQL_URL" + provided},
		{BackendRedis, "AUTHPORT_REDIS_URL", "no Redis: set AUTHPORT_REDIS_URL" + provided},
		{
			BackendRedisCluster, "AUTHPORT_REDIS_CLUSTER_URL",
			"no Redis Cluster: set AUTHPORT_REDIS_CLUSTER_URL (comma-separated host:port seeds)" + provided,
		},
		{
			BackendRedisSentinel, "AUTHPORT_REDIS_SENTINEL_URL",
			"no Redis Sentinel: set AUTHPORT_REDIS_SENTINEL_URL (redis://SENTINEL/0?master_name=NAME&addr=SENTINEL2...)" + provided,
		},
		{
			BackendPostgresHA, "AUTHPORT_POSTGRES_HA_URL",
			"no highly available PostgreSQL: set AUTHPORT_POSTGRES_HA_URL (a multi-host URL with target_session_attrs=read-write)" + provided,
		},
		{BackendMongoDB, "AUTHPORT_MONGODB_URL", "no MongoDB: set AUTHPORT_MONGODB_URL" + provided},
		{"dex", "", "no dex backend"},
	}
	for _, tt := range tests {
		if got, want := backendFor(tt.name), (backend{name: tt.name, env: tt.env, missing: tt.missing}); got != want {
			t.Errorf("backendFor(%q) = %+v, want %+v", tt.name, got, want)
		}
	}
}
