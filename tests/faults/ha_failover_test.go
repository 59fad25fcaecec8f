package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"

	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/conformance/provision"
)

// haBackends are the backends of the table of backends that TestFailover
// runs.
func haBackends() []string {
	return []string{provision.BackendRedisSentinel, provision.BackendPostgresHA}
}

// TestFailover is the failover of the highly available deployments under
// the 8-worker load: Redis Sentinel (a master, a replica, three sentinels)
// and PostgreSQL HA (a pg_auto_failover monitor, a primary and a
// synchronous standby), each private to this test, started by tools/ha
// (AUTHPORT_HA_BIN, from scripts/services.sh) on free ports and in
// directories of the test's own. The master or the primary is killed
// (SIGKILL; for PostgreSQL the node's whole process group, pg_autoctl and
// postgres: the machine is gone), the standby or the replica takes over,
// and the raw check then counts what was undone: acknowledged token uses
// whose token is back, acknowledged deleteUsers whose user or sessions are
// back, acknowledged createSessions whose session is gone.
//
// It fails on an undone acknowledged write where the deployment promises
// none: PostgreSQL HA (synchronous replication), and Redis Sentinel with
// redisadapter.WithReplicaAck. Without that option Redis replicates
// asynchronously: what it undoes is reported, not failed. The timings are
// reported, not asserted.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("the failover run takes a minute or two; not in -short")
	}
	bin := os.Getenv(haBinEnv)
	if bin == "" {
		for _, b := range haBackends() {
			if provision.Required(b) {
				t.Fatalf("%s is required but %s is not set (eval \"$(scripts/services.sh)\" builds tools/ha)", b, haBinEnv)
			}
		}
		t.Skipf("%s is not set (eval \"$(scripts/services.sh)\" builds tools/ha)", haBinEnv)
	}
	started := time.Now()
	var rows []haRow
	t.Run(provision.BackendRedisSentinel, func(t *testing.T) { rows = append(rows, runSentinelFailover(t, bin)...) })
	t.Run(provision.BackendPostgresHA, func(t *testing.T) { rows = append(rows, runPGFailover(t, bin)...) })
	fmt.Printf("\nFailover under load (tests/faults, TestFailover): %d workers, %v per call, %d CPUs, %v in all\n%s\n",
		workers, callTimeout, runtime.NumCPU(), time.Since(started).Round(time.Second), formatHATable(rows))
	for _, r := range rows {
		judgeHA(t, r)
	}
}

const haBinEnv = "AUTHPORT_HA_BIN"

// haRow is one failover row: the load's row, the deployment, the option,
// and whether an undone acknowledged write fails the test.
type haRow struct {
	row
	deployment, option string
	promised           bool
}

// haTool runs tools/ha and returns the value of the one NAME=VALUE line it
// prints; its progress goes to the test's log.
func haTool(t *testing.T, bin string, args ...string) string {
	t.Helper()
	return haToolAs(t, false, bin, args...)
}

// privileged is the command name args, through `sudo -n` when root is
// needed (asRoot) and this test does not run as root.
func privileged(ctx context.Context, asRoot bool, name string, args ...string) *exec.Cmd {
	if !asRoot || os.Geteuid() == 0 {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "sudo", append([]string{"-n", name}, args...)...)
}

// haToolAs is haTool, run as root when asRoot.
func haToolAs(t *testing.T, asRoot bool, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := privileged(ctx, asRoot, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	t.Logf("tools/ha %s: %s", args[0], strings.TrimSpace(stderr.String()))
	_, v, ok := strings.Cut(strings.TrimSpace(string(out)), "=")
	if !ok {
		t.Fatalf("tools/ha %s printed %q", args[0], out)
	}
	return v
}

// killPidfile sends SIGKILL to the process (group, when group) whose pid
// dir/name holds.
func killPidfile(dir, name string, group bool) error {
	return signalPidfile(dir, name, group, syscall.SIGKILL)
}

// signalPidfile sends sig to the process (group, when group) whose pid
// dir/name holds.
func signalPidfile(dir, name string, group bool, sig syscall.Signal) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || pid <= 1 {
		return fmt.Errorf("%s: bad pid %q", name, b)
	}
	if group {
		pid = -pid
	}
	if group && os.Geteuid() != 0 {
		// A pg_autoctl node runs as postgres, started through sudo.
		return privileged(context.Background(), true, "kill", "-"+strconv.Itoa(int(sig)), "--", strconv.Itoa(pid)).Run()
	}
	return syscall.Kill(pid, sig)
}

// cleanupPidfiles kills, when t ends, every process of a tools/ha
// deployment in dir (process groups: a pg_autoctl node takes its postgres
// with it).
func cleanupPidfiles(t *testing.T, dir string) {
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
		for _, f := range files {
			_ = killPidfile(dir, filepath.Base(f), strings.HasPrefix(filepath.Base(f), "node") || strings.HasPrefix(filepath.Base(f), "monitor"))
		}
	})
}

func ports(t *testing.T, n int) string {
	var ps []string
	for range n {
		ps = append(ps, strconv.Itoa(freePort(t)))
	}
	return strings.Join(ps, ",")
}

// ---- Redis Sentinel ----------------------------------------------------------

const sentinelName = "faults"

func runSentinelFailover(t *testing.T, bin string) []haRow {
	if _, err := exec.LookPath("redis-server"); err != nil {
		missing(t, provision.BackendRedisSentinel, "no redis-server on PATH")
	}
	dir := tempDir(t, "authport-faults-sentinel-")
	data, sentinels := ports(t, 2), ports(t, 3)
	cleanupPidfiles(t, dir)
	args := []string{"sentinel", "-dir", dir, "-ports", data, "-sentinels", sentinels, "-name", sentinelName}
	url := haTool(t, bin, args...)
	opt, err := redis.ParseFailoverURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := func() *redis.Client {
		o := *opt
		o.ContextTimeoutEnabled, o.MaxRetries = true, -1 // see redisOptions
		return redis.NewFailoverClient(&o)
	}
	plain := newRedisAdapter(t, client())
	acked := newRedisAdapter(t, client(), redisadapter.WithReplicaAck(1, ackTimeout))
	rawC := client()
	t.Cleanup(func() { _ = rawC.Close() })
	sentinelPort, _ := strconv.Atoi(strings.Split(sentinels, ",")[0])

	var rows []haRow
	type run struct {
		a      *redisadapter.Adapter
		option string
		ack    bool
		freeze bool
	}
	var runs []run
	for _, freeze := range []bool{false, true} {
		runs = append(runs,
			run{plain, "defaults (asynchronous replication)", false, freeze},
			run{acked, fmt.Sprintf("WithReplicaAck(1, %v)", ackTimeout), true, freeze})
	}
	for i, s := range runs {
		// Each failover starts from a master with its replica online:
		// tools/ha reuses the deployment if it is so, and starts it afresh
		// (same ports) after the previous failover left it without one.
		if i > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := waitFor(ctx, func(ctx context.Context) error { return replicaOnline(ctx, sentinelPort) }); err != nil {
				t.Logf("before failover %d: %v; tools/ha starts the deployment afresh", i+1, err)
			}
			cancel()
			haTool(t, bin, args...)
		}
		f := fault{name: "SIGKILL of the master, replica promoted by the sentinels", crash: true, failover: true,
			inject: func(ctx context.Context) (time.Time, time.Time, error) {
				return killMaster(ctx, dir, sentinelPort)
			}}
		deployment := "Redis Sentinel (master + replica + 3 sentinels, down-after 1000 ms): master SIGKILLed"
		if s.freeze {
			f = fault{name: "SIGSTOP of the master until the replica is promoted, then SIGCONT", crash: true, failover: true,
				inject: func(ctx context.Context) (time.Time, time.Time, error) {
					return freezeMaster(ctx, dir, sentinelPort)
				}}
			deployment = "Redis Sentinel: master frozen (SIGSTOP) until its replica is promoted, then resumed"
		}
		r, err := runScenario(t, "redis-sentinel", false, s.a, redisRaw{c: rawC}, f, fmt.Sprintf("se%d%s", i, randomHex(3)))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, haRow{row: r, deployment: deployment, option: s.option, promised: s.ack})
	}
	return rows
}

// sentinelMaster connects to the sentinel on sentinelPort and returns the
// client (the caller closes it) and the port of the master it names.
func sentinelMaster(ctx context.Context, sentinelPort int) (*redis.SentinelClient, string, error) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(sentinelPort)})
	addr, err := sc.GetMasterAddrByName(ctx, sentinelName).Result()
	if err != nil {
		_ = sc.Close()
		return nil, "", err
	}
	return sc, addr[1], nil
}

// promoted returns the port of the master sc's sentinel names, or an
// error while that is still old.
func promoted(ctx context.Context, sc *redis.SentinelClient, old string) (string, error) {
	addr, err := sc.GetMasterAddrByName(ctx, sentinelName).Result()
	if err != nil {
		return "", err
	}
	if addr[1] == old {
		return "", fmt.Errorf("the sentinels still name %s", old)
	}
	return addr[1], nil
}

// replicaOnline: the master the sentinels name has its replica online.
func replicaOnline(ctx context.Context, sentinelPort int) error {
	sc, port, err := sentinelMaster(ctx, sentinelPort)
	if err != nil {
		return err
	}
	_ = sc.Close()
	c := redis.NewClient(redisOptions("127.0.0.1:" + port))
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return err
	}
	if !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=online") {
		return fmt.Errorf("master %s: no replica online yet", port)
	}
	return nil
}

// freezeMaster stops the master the sentinels name (SIGSTOP: clients
// still reach it, it answers nothing), waits until they promote its
// replica, resumes it (SIGCONT: it runs and acknowledges what clients sent
// it meanwhile) and returns when the sentinels have made it the new
// master's replica, which throws away what it acknowledged.
func freezeMaster(ctx context.Context, dir string, sentinelPort int) (time.Time, time.Time, error) {
	sc, port, err := sentinelMaster(ctx, sentinelPort)
	if err != nil {
		return time.Now(), time.Now(), err
	}
	defer sc.Close()
	pidfile := "redis-" + port + ".pid"
	began := time.Now()
	if err := signalPidfile(dir, pidfile, false, syscall.SIGSTOP); err != nil {
		return began, began, err
	}
	err = waitFor(ctx, func(ctx context.Context) error {
		_, err := promoted(ctx, sc, port)
		return err
	})
	back := time.Now()
	if cerr := signalPidfile(dir, pidfile, false, syscall.SIGCONT); err == nil {
		err = cerr
	}
	if err != nil {
		return began, back, err
	}
	err = waitFor(ctx, func(ctx context.Context) error {
		c := redis.NewClient(redisOptions("127.0.0.1:" + port))
		defer c.Close()
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && (!strings.Contains(info, "role:slave") || !strings.Contains(info, "master_link_status:up")) {
			err = fmt.Errorf("the old master %s is not a replica in sync yet", port)
		}
		return err
	})
	return began, back, err
}

// killMaster kills the master the sentinels name and returns when a
// sentinel names the replica instead and it answers as a master. It then
// starts the killed server again, empty, as tools/ha did: the sentinels
// turn it into the new master's replica (without one, the writes of
// WithReplicaAck(1, …) fail after the failover until a replica is back).
func killMaster(ctx context.Context, dir string, sentinelPort int) (time.Time, time.Time, error) {
	sc, port, err := sentinelMaster(ctx, sentinelPort)
	if err != nil {
		return time.Now(), time.Now(), err
	}
	defer sc.Close()
	began := time.Now()
	if err := killPidfile(dir, "redis-"+port+".pid", false); err != nil {
		return began, began, err
	}
	err = waitFor(ctx, func(ctx context.Context) error {
		now, err := promoted(ctx, sc, port)
		if err != nil {
			return err
		}
		c := redis.NewClient(redisOptions("127.0.0.1:" + now))
		defer c.Close()
		role, err := c.Do(ctx, "role").Slice()
		if err != nil {
			return err
		}
		if len(role) == 0 || role[0] != "master" {
			return fmt.Errorf("%s is not a master yet: %v", now, role)
		}
		return nil
	})
	back := time.Now()
	if err != nil {
		return began, back, err
	}
	err = run(ctx, "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "yes", "--dir", dir,
		"--pidfile", filepath.Join(dir, "redis-"+port+".pid"), "--logfile", filepath.Join(dir, "redis-"+port+".log"),
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
	return began, back, err
}

// ---- PostgreSQL HA -----------------------------------------------------------

func runPGFailover(t *testing.T, bin string) []haRow {
	if os.Geteuid() != 0 && exec.Command("sudo", "-n", "true").Run() != nil {
		missing(t, provision.BackendPostgresHA, "tools/ha runs the formation as user postgres: needs root or passwordless sudo")
	}
	if _, err := exec.LookPath("pg_autoctl"); err != nil {
		missing(t, provision.BackendPostgresHA, "no pg_autoctl (apt-get install postgresql-15-auto-failover)")
	}
	dir := tempDir(t, "authport-faults-pgha-")
	// The nodes run as postgres, which must reach its files.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(dir, "f")
	cleanupPidfiles(t, dir)
	ps := ports(t, 3)
	url := haToolAs(t, true, bin, "pg", "-dir", dir, "-ports", ps)
	a := newGorm(t, postgres.New(postgres.Config{Conn: openSQL(t, "pgx", url)}), true)
	rv := sqlRaw{db: openSQL(t, "pgx", url)}
	nodes := strings.Split(ps, ",")[1:]
	f := fault{name: "SIGKILL of the primary node (pg_autoctl and postgres), standby promoted", crash: true, failover: true,
		inject: func(ctx context.Context) (time.Time, time.Time, error) {
			return killPrimary(ctx, dir, nodes)
		}}
	r, err := runScenario(t, "postgres-ha", true, a, rv, f, "pg"+randomHex(3))
	if err != nil {
		t.Fatal(err)
	}
	return []haRow{{row: r, deployment: "PostgreSQL HA (pg_auto_failover: monitor + primary + synchronous standby, health checks every 1 s)", option: "defaults (synchronous_commit on, ANY 1 standby)", promised: true}}
}

// killPrimary kills the node that is the primary and returns when the
// other accepts writes.
func killPrimary(ctx context.Context, dir string, nodes []string) (time.Time, time.Time, error) {
	writable := func(ctx context.Context, port string) error {
		c, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:"+port+"/test?sslmode=disable&target_session_attrs=read-write")
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		return c.Ping(ctx)
	}
	for i, port := range nodes {
		if writable(ctx, port) != nil {
			continue
		}
		other := nodes[1-i]
		began := time.Now()
		if err := killPidfile(dir, fmt.Sprintf("node%d.pid", i+1), true); err != nil {
			return began, began, err
		}
		err := waitFor(ctx, func(ctx context.Context) error { return writable(ctx, other) })
		return began, time.Now(), err
	}
	return time.Now(), time.Now(), fmt.Errorf("no node of %v takes writes", nodes)
}

// ---- judging and the table ---------------------------------------------------

func judgeHA(t *testing.T, r haRow) {
	t.Helper()
	where := r.backend + "/" + r.option
	for _, e := range haProblems(r) {
		t.Errorf("%s: %s", where, e)
	}
	if !r.promised && r.lost+r.partial > 0 {
		t.Logf("%s: %d acknowledged write(s) undone by the failover (asynchronous replication: reported, not failed)", where, r.lost+r.partial)
	}
	logDetails(t, where, r.details)
}

// haProblems lists what fails a failover row: a panic, a hung call, no
// success after the failover, too little load to check, and, where the
// deployment promises it (r.promised), any acknowledged write undone,
// among them a revoked session readable again and a rotated refresh token
// accepted again.
func haProblems(r haRow) []string {
	var out []string
	if r.panics > 0 {
		out = append(out, fmt.Sprintf("%d panic(s)", r.panics))
	}
	if r.hung > 0 {
		out = append(out, fmt.Sprintf("%d call(s) returned more than %v after their %v deadline while the process was running", r.hung, grace, callTimeout))
	}
	if r.recovery < 0 {
		out = append(out, fmt.Sprintf("no call succeeded after the failover; errors after it: %q", r.slowRecovery))
	}
	if r.acked < 50 {
		out = append(out, fmt.Sprintf("only %d acknowledged writes to check", r.acked))
	}
	if r.promised && (r.undone() > 0 || r.lost > 0 || r.partial > 0) {
		out = append(out, fmt.Sprintf("acknowledged writes undone by the failover: %d token use(s), %d deleteUser(s), %d deleted session(s) back, %d acknowledged session(s) lost, %d revoked session(s) readable again, %d rotated refresh token(s) accepted again; %d lost and %d partial in all",
			r.tokensBack, r.deletedBack, r.sessionsBack, r.sessionsLost, r.revokedBack, r.rotationsBack, r.lost, r.partial))
	}
	return out
}

// undone counts the acknowledged writes of the kinds the failover tables
// show that the failover undid.
func (r row) undone() int {
	return r.tokensBack + r.deletedBack + r.sessionsBack + r.sessionsLost + r.revokedBack + r.rotationsBack
}

func formatHATable(rows []haRow) string {
	var b strings.Builder
	b.WriteString("| deployment | adapter option | ops | failed calls | kill → new primary | kill → first success | acked checked | undone | token uses back | deleted users back | deleted sessions back | acked sessions lost | revoked sessions readable again | rotated refresh tokens accepted twice | acked writes lost (all kinds) | panics | hung |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %d | %d | %d | %d | %d | %d | %s | %d | %d | %d |\n",
			r.deployment, r.option, r.ops, r.errFault+r.errOther, ms(r.down), r.firstSuccess(), r.acked, r.undone(),
			r.tokensBack, r.deletedBack, r.sessionsBack, r.sessionsLost, r.sessionOpsCells(), r.lost+r.partial, r.panics, r.hung)
	}
	return b.String()
}
