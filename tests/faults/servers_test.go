package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
)

// The servers this file starts are the test's own: each on a port of its
// own, with its data in a directory of its own that is removed at cleanup.
// The shared services of scripts/services.sh are never touched.

// binary finds a server program: the first of candidates that is an
// executable path or is found on PATH. When there is none it skips t, or
// fails it when AUTHPORT_REQUIRE names backend.
func binary(t *testing.T, backend string, candidates ...string) string {
	t.Helper()
	for _, c := range candidates {
		if strings.Contains(c, "/") {
			if st, err := os.Stat(c); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return c
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	missing(t, backend, fmt.Sprintf("none of %s is installed", strings.Join(candidates, ", ")))
	return ""
}

// missing skips t because backend cannot run here, or fails it when
// AUTHPORT_REQUIRE names backend (or is "all").
func missing(t *testing.T, backend, reason string) {
	t.Helper()
	if provision.Required(backend) {
		t.Fatalf("%s: %s (%s requires it)", backend, reason, provision.RequireEnv)
	}
	t.Skipf("%s: %s; set %s=%s to make this a failure", backend, reason, provision.RequireEnv, backend)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// freeClusterPort returns a port p such that p and its cluster bus port
// p+10000 were both free a moment ago.
func freeClusterPort(t *testing.T, taken []int) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(10000)
		if slices.Contains(taken, p) {
			continue
		}
		l1, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		l1.Close()
		if err != nil {
			continue
		}
		l2.Close()
		return p
	}
	t.Fatal("no free pair of ports (p, p+10000) in 20000-39999")
	return 0
}

// tempDir makes a directory for a server's data, removed at cleanup. It is
// made under os.TempDir rather than t.TempDir because a server may run as
// another user (postgres), which must reach it.
func tempDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// run runs a program to completion, failing with its output.
func run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, lastLines(out.String(), 15))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor calls ping until it succeeds or ctx ends, each try bounded to 1 s.
func waitFor(ctx context.Context, ping func(context.Context) error) error {
	for {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		err := ping(tctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// process is a server the test runs as its own child: started with fixed
// arguments, killed with SIGKILL and started again on the same port and
// data directory. A child dies with the test process (Pdeathsig).
type process struct {
	name string
	args []string
	log  string // the file its stdout and stderr are appended to
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *process) start() error {
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(p.name, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(p.done)
	return nil
}

// kill sends SIGKILL and waits until the process is gone.
func (p *process) kill() error {
	if p.cmd == nil {
		return nil
	}
	select {
	case <-p.done:
		return fmt.Errorf("%s had already exited; its log %s ends:\n%s", p.name, p.log, p.tail())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.cmd = nil
	return nil
}

// exited reports the process's log when it has died by itself.
func (p *process) exited() error {
	if p.cmd == nil {
		return errors.New(p.name + " is not running")
	}
	select {
	case <-p.done:
		return fmt.Errorf("%s exited; its log %s ends:\n%s", p.name, p.log, p.tail())
	default:
		return nil
	}
}

func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	return lastLines(string(b), 15)
}

// startProcess starts p, kills it at cleanup, and waits until ping
// succeeds.
func startProcess(t *testing.T, p *process, ping func(context.Context) error) {
	t.Helper()
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.kill() })
	if err := p.waitReady(ping, 60*time.Second); err != nil {
		t.Fatal(err)
	}
}

// waitReady waits until ping succeeds, failing early when p dies.
func (p *process) waitReady(ping func(context.Context) error, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	err := waitFor(ctx, func(ctx context.Context) error {
		if err := p.exited(); err != nil {
			cancel()
			return err
		}
		return ping(ctx)
	})
	if err != nil {
		if e := p.exited(); e != nil {
			return e
		}
		return fmt.Errorf("%s did not answer within %v: %w; its log %s ends:\n%s", p.name, limit, err, p.log, p.tail())
	}
	return nil
}

// ---- PostgreSQL ------------------------------------------------------------

// pgServer is a PostgreSQL cluster in a temporary directory, run with
// pg_ctl (as the postgres user when the test runs as root, since the
// server refuses to run as root).
type pgServer struct {
	bin  string // the directory with initdb, pg_ctl, postgres
	dir  string
	port int
	as   []string // the runuser prefix, or nil
}

func newPostgres(t *testing.T) *pgServer {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	slices.SortFunc(bins, func(a, b string) int { return pgVersion(a) - pgVersion(b) })
	candidates := append(slices.Clone(bins), "pg_ctl")
	slices.Reverse(candidates[:len(bins)])
	pgCtl := binary(t, provision.BackendPostgres, candidates...)
	s := &pgServer{bin: filepath.Dir(pgCtl), dir: tempDir(t, "authport-faults-pg-"), port: freePort(t)}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			missing(t, provision.BackendPostgres, "the test runs as root and there is no user postgres to run the server as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(s.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.as = []string{"runuser", "-u", "postgres", "--"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.cmd(ctx, "initdb", "-D", s.data(), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		t.Fatal(err)
	}
	if err := s.start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.cmd(ctx, "pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
	})
	return s
}

// pgVersion is the major version in a /usr/lib/postgresql/N/bin path.
func pgVersion(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

func (s *pgServer) data() string { return filepath.Join(s.dir, "data") }

func (s *pgServer) cmd(ctx context.Context, prog string, args ...string) error {
	full := append(slices.Clone(s.as), append([]string{filepath.Join(s.bin, prog)}, args...)...)
	return run(ctx, full[0], full[1:]...)
}

func (s *pgServer) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

func (s *pgServer) start(ctx context.Context) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200", s.port, s.dir)
	return s.cmd(ctx, "pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60", "-o", opts, "start")
}

// stop shuts the server down with pg_ctl's mode: "fast" (roll back and
// disconnect the clients, checkpoint) or "immediate" (quit at once, crash
// recovery on the next start).
func (s *pgServer) stop(ctx context.Context, mode string) error {
	return s.cmd(ctx, "pg_ctl", "-D", s.data(), "-m", mode, "-w", "-t", "60", "stop")
}

// ---- MariaDB ---------------------------------------------------------------

// newMariaDB initialises a data directory with mariadb-install-db and runs
// mariadbd on it, without grant tables (any login is root), durable as
// configured by default (innodb_flush_log_at_trx_commit=1).
func newMariaDB(t *testing.T, ping func(port int) func(context.Context) error) (*process, int) {
	t.Helper()
	server := binary(t, provision.BackendMySQL, "/usr/sbin/mariadbd", "mariadbd", "/usr/sbin/mysqld", "mysqld")
	install := binary(t, provision.BackendMySQL, "mariadb-install-db", "mysql_install_db")
	dir := tempDir(t, "authport-faults-mariadb-")
	data := filepath.Join(dir, "data")
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
		"--skip-test-db"}, asRoot...)
	if err := run(ctx, install, args...); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	p := &process{
		name: server,
		args: append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + filepath.Join(dir, "mysqld.sock"),
			"--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1", "--pid-file=" + filepath.Join(dir, "mysqld.pid"),
			"--skip-grant-tables", "--skip-name-resolve", "--innodb-buffer-pool-size=64M", "--max-connections=300"}, asRoot...),
		log: filepath.Join(dir, "mariadbd.log"),
	}
	startProcess(t, p, ping(port))
	return p, port
}

// ---- Redis -----------------------------------------------------------------

// redisArgs are the arguments of a durable redis-server: every write is in
// the append-only file, fsynced, before the server answers.
func redisArgs(port int, dir string) []string {
	return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log")}
}

func newRedis(t *testing.T, ping func(port int) func(context.Context) error) (*process, int) {
	t.Helper()
	bin := binary(t, provision.BackendRedis, "redis-server")
	dir := tempDir(t, "authport-faults-redis-")
	port := freePort(t)
	p := &process{name: bin, args: redisArgs(port, dir), log: filepath.Join(dir, "stdout.log")}
	startProcess(t, p, ping(port))
	return p, port
}

// newRedisCluster starts three durable masters with cluster mode on and
// joins them with redis-cli --cluster create (no replicas). Each node keeps
// its nodes.conf and AOF in a directory of its own, so a restarted node
// rejoins with its slots and data.
func newRedisCluster(t *testing.T, ping func(port int) func(context.Context) error, healthy func(ctx context.Context, ports []int) error) ([]*process, []int) {
	t.Helper()
	bin := binary(t, provision.BackendRedisCluster, "redis-server")
	cli := binary(t, provision.BackendRedisCluster, "redis-cli")
	dir := tempDir(t, "authport-faults-cluster-")
	var ports []int
	var procs []*process
	for range 3 {
		port := freeClusterPort(t, ports)
		ports = append(ports, port)
		nd := filepath.Join(dir, strconv.Itoa(port))
		if err := os.MkdirAll(nd, 0o755); err != nil {
			t.Fatal(err)
		}
		args := append(redisArgs(port, nd), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
		p := &process{name: bin, args: args, log: filepath.Join(nd, "stdout.log")}
		startProcess(t, p, ping(port))
		procs = append(procs, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--cluster", "create"}
	for _, p := range ports {
		args = append(args, "127.0.0.1:"+strconv.Itoa(p))
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if err := run(ctx, cli, args...); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, func(ctx context.Context) error { return healthy(ctx, ports) }); err != nil {
		t.Fatalf("the cluster on %v did not become healthy: %v", ports, err)
	}
	return procs, ports
}

// ---- MongoDB stand-in ------------------------------------------------------

// standinEnv names the stand-in binary; scripts/services.sh builds it and
// prints the export line.
const standinEnv = "AUTHPORT_MONGOSTANDIN_BIN"

func newStandin(t *testing.T, ping func(port int) func(context.Context) error) (*process, int) {
	t.Helper()
	bin := os.Getenv(standinEnv)
	if bin == "" {
		missing(t, provision.BackendMongoDB, standinEnv+` is not set: run eval "$(scripts/services.sh)", which builds tools/mongostandin and sets it`)
	}
	bin = binary(t, provision.BackendMongoDB, bin)
	dir := tempDir(t, "authport-faults-mongo-")
	port := freePort(t)
	p := &process{
		name: bin,
		args: []string{"-listen", "127.0.0.1:" + strconv.Itoa(port), "-data", filepath.Join(dir, "data")},
		log:  filepath.Join(dir, "standin.log"),
	}
	startProcess(t, p, ping(port))
	return p, port
}

// signal sends sig to the running process (SIGSTOP, SIGCONT).
func (p *process) signal(sig syscall.Signal) error {
	if err := p.exited(); err != nil {
		return err
	}
	return p.cmd.Process.Signal(sig)
}
