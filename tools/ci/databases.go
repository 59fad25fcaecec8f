package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// postgresVersion is the newest PostgreSQL installed under
// /usr/lib/postgresql, or "" when there is none.
func postgresVersion() string {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	var vers []string
	for _, b := range bins {
		vers = append(vers, filepath.Base(filepath.Dir(filepath.Dir(b))))
	}
	slices.SortFunc(vers, func(a, b string) int {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		return cmp.Compare(x, y)
	})
	if len(vers) == 0 {
		return ""
	}
	return vers[len(vers)-1]
}

func pgWorks(ctx context.Context) bool {
	return succeeds(ctx, "psql", postgresURL, "-Atqc", "select 1")
}

func (s *services) postgres(ctx context.Context) error {
	if s.given("AUTHPORT_POSTGRES_URL", "postgres") {
		return nil
	}
	if !pgWorks(ctx) {
		if err := needRoot("starting PostgreSQL"); err != nil {
			return err
		}
		if postgresVersion() == "" {
			if err := s.aptInstall(ctx, "postgresql"); err != nil {
				return err
			}
		}
		ver := postgresVersion()
		if _, err := os.Stat("/etc/postgresql/" + ver + "/main"); err != nil {
			logf("postgres: creating cluster %s/main", ver)
			if err := s.quiet(ctx, "postgres", 0, "pg_createcluster", ver, "main"); err != nil {
				return s.failLog("postgres", "pg_createcluster "+ver+" main failed")
			}
		}
		ready := func() bool { return succeeds(ctx, "pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432") }
		if !ready() {
			logf("postgres: starting %s/main", ver)
			// A failure here (e.g. "already running" while it recovers) is
			// judged by the wait below.
			_ = s.quiet(ctx, "postgres", 0, "pg_ctlcluster", "--skip-systemctl-redirect", ver, "main", "start")
		}
		if !s.waitFor(ready) {
			return s.failLog("postgres", fmt.Sprintf("PostgreSQL %s/main did not accept connections on 127.0.0.1:5432 within %s (see /var/log/postgresql/postgresql-%s-main.log)", ver, s.timeout, ver))
		}
		if !pgWorks(ctx) && s.setupHost {
			if err := s.pgSetup(ctx, ver); err != nil {
				return err
			}
		}
		if !pgWorks(ctx) {
			return fmt.Errorf("PostgreSQL answers on 127.0.0.1:5432 but 'psql %s' fails: it needs trust auth on 127.0.0.1 and a database test; `scripts/services.sh -setup-host` sets them up (it edits pg_hba.conf)", postgresURL)
		}
	}
	s.export("AUTHPORT_POSTGRES_URL", postgresURL, "")
	return nil
}

// pgSetup (-setup-host only): trust auth on loopback, database test, and
// roles postgres and root (so plain `psql` as root works too).
func (s *services) pgSetup(ctx context.Context, ver string) error {
	hba := "/etc/postgresql/" + ver + "/main/pg_hba.conf"
	logf("postgres: setting up trust auth on loopback in %s and database test (-setup-host)", hba)
	b, err := os.ReadFile(hba)
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	// The first matching line wins in pg_hba.conf, so ours go on top.
	for _, l := range []string{"host all all ::1/128 trust", "host all all 127.0.0.1/32 trust"} {
		if !slices.Contains(lines, l) {
			lines = append([]string{l}, lines...)
		}
	}
	if err := os.WriteFile(hba, []byte(strings.Join(lines, "\n")), 0o640); err != nil {
		return err
	}
	if err := s.quiet(ctx, "postgres", 0, "pg_ctlcluster", "--skip-systemctl-redirect", ver, "main", "reload"); err != nil {
		return s.failLog("postgres", "could not reload PostgreSQL "+ver+"/main")
	}
	sql := []string{"runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c"}
	if err := s.quiet(ctx, "postgres", 0, append(sql, `do $$ begin
		if not exists (select from pg_roles where rolname = 'root') then create role root superuser login; end if;
	end $$`)...); err != nil {
		return s.failLog("postgres", "could not create PostgreSQL role root")
	}
	out, _ := cmdSpec{args: []string{"runuser", "-u", "postgres", "--", "psql", "-X", "-Atq", "-d", "postgres", "-c",
		"select 1 from pg_database where datname = 'test'"}}.output(ctx)
	if out == "" {
		if err := s.quiet(ctx, "postgres", 0, "runuser", "-u", "postgres", "--", "createdb", "test"); err != nil {
			return s.failLog("postgres", "could not create PostgreSQL database test")
		}
	}
	return nil
}

func myWorks(ctx context.Context) bool {
	return succeeds(ctx, "mariadb", "--protocol=TCP", "-h", "127.0.0.1", "-P", "3306", "-u", "root", "-D", "test", "-e", "select 1")
}

// myAlive: the server answers, on its socket or on TCP. `mariadb-admin
// ping` succeeds even when the login is refused, but not with "host not
// allowed", which is what a fresh install says to TCP clients.
func myAlive(ctx context.Context) bool {
	return succeeds(ctx, "mariadb-admin", "ping") ||
		succeeds(ctx, "mariadb-admin", "--protocol=TCP", "-h", "127.0.0.1", "-P", "3306", "ping")
}

func (s *services) mysql(ctx context.Context) error {
	if s.given("AUTHPORT_MYSQL_URL", "mysql") {
		return nil
	}
	if !myWorks(ctx) {
		if err := needRoot("starting MariaDB"); err != nil {
			return err
		}
		if !fileExecutable("/usr/sbin/mariadbd") {
			if err := s.aptInstall(ctx, "mariadb-server"); err != nil {
				return err
			}
		}
		// The server runs as user mysql, which may not write to our
		// $TMPDIR: it gets its own default, /tmp.
		noTmp := []string{"env", "-u", "TMPDIR"}
		if _, err := os.Stat("/var/lib/mysql/mysql"); err != nil {
			logf("mysql: initialising /var/lib/mysql")
			if err := s.quiet(ctx, "mysql", 0, append(noTmp, "mariadb-install-db", "--user=mysql")...); err != nil {
				return s.failLog("mysql", "mariadb-install-db failed")
			}
		}
		// systemd would create the socket directory; start-stop-daemon does not.
		if err := s.quiet(ctx, "mysql", 0, "install", "-d", "-o", "mysql", "-g", "mysql", "/run/mysqld"); err != nil {
			return s.failLog("mysql", "could not create /run/mysqld")
		}
		if !myAlive(ctx) {
			logf("mysql: starting mariadbd")
			if err := s.quiet(ctx, "mysql", 0, append(noTmp, "start-stop-daemon", "--start", "--oknodo", "--background", "--exec", "/usr/sbin/mariadbd")...); err != nil {
				return s.failLog("mysql", "start-stop-daemon could not start /usr/sbin/mariadbd")
			}
		}
		if !s.waitFor(func() bool { return myAlive(ctx) }) {
			return fmt.Errorf("MariaDB did not answer on 127.0.0.1:3306 within %s (see /var/log/mysql/error.log or 'journalctl -u mariadb')", s.timeout)
		}
		if !myWorks(ctx) && s.setupHost {
			// Over the Unix socket, where Debian's root@localhost
			// authenticates by unix_socket.
			logf("mysql: setting up root over TCP without password and database test (-setup-host)")
			if err := s.quiet(ctx, "mysql", 0, "mariadb", "-u", "root", "-e", `
				CREATE DATABASE IF NOT EXISTS test;
				CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
				GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
				ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
				FLUSH PRIVILEGES;`); err != nil {
				return s.failLog("mysql", "could not set up MariaDB's root user and database test")
			}
		}
		if !myWorks(ctx) {
			return fmt.Errorf("MariaDB answers on 127.0.0.1:3306 but root without password cannot use database test over TCP; `scripts/services.sh -setup-host` sets that up (it changes root's authentication)")
		}
	}
	s.export("AUTHPORT_MYSQL_URL", mysqlURL, "")
	return nil
}

func (s *services) redisInstalled(ctx context.Context) error {
	if !commandExists("redis-server") || !commandExists("redis-cli") {
		return s.aptInstall(ctx, "redis-server")
	}
	return nil
}

func (s *services) redis(ctx context.Context) error {
	if s.given("AUTHPORT_REDIS_URL", "redis") {
		return nil
	}
	if !redisPong(6379) {
		if err := needRoot("starting Redis"); err != nil {
			return err
		}
		if err := s.redisInstalled(ctx); err != nil {
			return err
		}
		for _, d := range []string{"/var/lib/redis", "/var/log/redis"} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		logf("redis: starting redis-server on 6379")
		if err := s.quiet(ctx, "redis", 0, "redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379",
			"--save", "", "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", "/var/log/redis/ci.log"); err != nil {
			return s.failLog("redis", "redis-server did not start")
		}
		if !s.waitFor(func() bool { return redisPong(6379) }) {
			return fmt.Errorf("Redis did not answer on 127.0.0.1:6379 within %s (see /var/log/redis/ci.log)", s.timeout)
		}
	}
	s.export("AUTHPORT_REDIS_URL", redisURL, "")
	return nil
}

// clusterHealthy: every node sees a healthy cluster with every slot served,
// and they are one cluster (not three single-node clusters).
func (s *services) clusterHealthy() bool {
	for _, p := range s.clusterPorts {
		info, err := redisCommand(p, "CLUSTER INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return false
		}
	}
	nodes, err := redisCommand(s.clusterPorts[0], "CLUSTER NODES")
	if err != nil {
		return false
	}
	for _, p := range s.clusterPorts {
		id, err := redisCommand(p, "CLUSTER MYID")
		if err != nil || id == "" || !strings.Contains(nodes, fmt.Sprintf("%s 127.0.0.1:%d@", id, p)) {
			return false
		}
	}
	return true
}

func (s *services) createCluster(ctx context.Context) error {
	dir := filepath.Join(s.tmp, "authport-redis-cluster")
	var addrs []string
	for _, p := range s.clusterPorts {
		if redisPong(p) {
			logf("redis-cluster: shutting down the node on %d", p)
			_, _ = redisCommand(p, "SHUTDOWN NOSAVE")
		}
		if !s.waitFor(func() bool { return portFree(p) }) {
			return fmt.Errorf("port %d is still in use by something that is not a Redis we could shut down; free it or set AUTHPORT_REDIS_CLUSTER_PORTS", p)
		}
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range s.clusterPorts {
		if err := s.quiet(ctx, "redis-cluster", 0, "redis-server", "--cluster-enabled", "yes",
			"--cluster-config-file", fmt.Sprintf("%s/nodes-%d.conf", dir, p), "--port", strconv.Itoa(p),
			"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "yes",
			"--dir", dir, "--logfile", fmt.Sprintf("%s/redis-%d.log", dir, p)); err != nil {
			return s.failLog("redis-cluster", fmt.Sprintf("redis-server did not start on port %d", p))
		}
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	for _, p := range s.clusterPorts {
		if !s.waitFor(func() bool { return redisPong(p) }) {
			return fmt.Errorf("Redis Cluster node on port %d did not answer within %s (see %s/redis-%d.log)", p, s.timeout, dir, p)
		}
	}
	args := append([]string{"redis-cli", "--cluster", "create"}, addrs...)
	if err := s.quiet(ctx, "redis-cluster", 60*time.Second, append(args, "--cluster-replicas", "0", "--cluster-yes")...); err != nil {
		return s.failLog("redis-cluster", "redis-cli --cluster create failed")
	}
	return nil
}

func (s *services) redisCluster(ctx context.Context) error {
	if s.given("AUTHPORT_REDIS_CLUSTER_URL", "redis-cluster") {
		return nil
	}
	ports := strings.Trim(fmt.Sprint(s.clusterPorts), "[]")
	if len(s.clusterPorts) != 3 {
		return fmt.Errorf("AUTHPORT_REDIS_CLUSTER_PORTS must name three ports, got '%s'", ports)
	}
	if err := s.redisInstalled(ctx); err != nil {
		return err
	}
	if s.clusterHealthy() {
		logf("redis-cluster: reusing the healthy cluster on %s", ports)
	} else {
		logf("redis-cluster: no healthy cluster on %s: creating one (3 masters)", ports)
		if err := s.createCluster(ctx); err != nil {
			return err
		}
		if !s.waitFor(s.clusterHealthy) {
			return fmt.Errorf("Redis Cluster on %s did not reach cluster_state:ok within %s (see %s/authport-redis-cluster/redis-*.log)", ports, s.timeout, s.tmp)
		}
	}
	s.export("AUTHPORT_REDIS_CLUSTER_URL", clusterURL(s.clusterPorts), "")
	return nil
}
