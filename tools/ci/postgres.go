package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		var x, y float64
		fmt.Sscan(a, &x)
		fmt.Sscan(b, &y)
		return cmp.Compare(x, y)
	})
	if len(vers) == 0 {
		return ""
	}
	return vers[len(vers)-1]
}

func pgWorks(ctx context.Context, url string) bool {
	return succeeds(ctx, "psql", url, "-Atqc", "select 1")
}

func (s *services) postgres(ctx context.Context) error {
	works := func() bool { return pgWorks(ctx, s.url("postgres")) }
	return s.systemServer("postgres", "AUTHPORT_POSTGRES_URL", s.url("postgres"), works, func() error { return s.startPostgres(ctx) })
}

// startPostgres installs, creates or starts the machine's PostgreSQL, and
// with -setup-host configures it for the test URL.
func (s *services) startPostgres(ctx context.Context) error {
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
	if !pgWorks(ctx, s.url("postgres")) && s.setupHost {
		if err := s.pgSetup(ctx, ver); err != nil {
			return err
		}
	}
	if !pgWorks(ctx, s.url("postgres")) {
		return fmt.Errorf("PostgreSQL answers on 127.0.0.1:5432 but 'psql %s' fails: it needs trust auth on 127.0.0.1 and a database test; `scripts/services.sh -setup-host` sets them up (it edits pg_hba.conf)", s.url("postgres"))
	}
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
	works := func() bool { return myWorks(ctx) }
	return s.systemServer("mysql", "AUTHPORT_MYSQL_URL", s.url("mysql"), works, func() error { return s.startMySQL(ctx) })
}

// startMySQL installs, initialises or starts the machine's MariaDB, and
// with -setup-host configures it for the test URL.
func (s *services) startMySQL(ctx context.Context) error {
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
	return nil
}
