package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pgSetup is one pg_auto_failover formation.
type pgSetup struct {
	dir   string
	ports []int // monitor, first node, second node
	uid   int
	gid   int
	env   []string
	// exited has a channel per node started, closed when it exits.
	exited []chan struct{}
}

// monitorSettings shorten the monitor's health checks, so that a dead
// primary is failed over in seconds (the defaults take about 30 s).
var monitorSettings = map[string]string{
	"pgautofailover.health_check_period":               "1000",
	"pgautofailover.health_check_timeout":              "1000",
	"pgautofailover.health_check_max_retries":          "1",
	"pgautofailover.health_check_retry_delay":          "500",
	"pgautofailover.node_considered_unhealthy_timeout": "2000",
	"pgautofailover.primary_demote_timeout":            "5000",
}

func pgCmd(args []string) error {
	fs := flag.NewFlagSet("pg", flag.ContinueOnError)
	dir := fs.String("dir", filepath.Join(tmpDir(), "authport-pg-ha"), "directory of the nodes' data and logs")
	ps := fs.String("ports", "5440,5441,5442", "the monitor's and the two nodes' ports")
	wait := fs.Duration("timeout", 240*time.Second, "how long to wait for the formation to be healthy")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pg, err := newPG(*dir, *ps)
	if err != nil {
		return err
	}
	if err := reuseOrStart("pg", fmt.Sprintf("formation (ports %v)", pg.ports),
		"a monitor, a primary and a synchronous standby in "+pg.dir,
		pg.healthy, func() error { return pg.start(*wait) }); err != nil {
		return err
	}
	uri, err := pg.autoctl("show", "uri", "--pgdata", pg.data(0), "--formation", "default")
	if err != nil {
		return err
	}
	// The nodes trust user postgres on loopback, and have no TLS (--no-ssl).
	if !strings.Contains(uri, "@") {
		uri = strings.Replace(uri, "postgres://", "postgres://postgres@", 1)
	}
	uri = strings.Replace(uri, "sslmode=prefer", "sslmode=disable", 1)
	uri = sortHosts(uri)
	fmt.Printf("AUTHPORT_POSTGRES_HA_URL=%s\n", uri)
	return nil
}

// sortHosts puts the hosts of a multi-host URL in order: pg_autoctl lists
// the primary first, which changes with every failover, and the URL should
// not (target_session_attrs=read-write finds the primary anyway).
func sortHosts(uri string) string {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return uri
	}
	at := strings.Index(rest, "@") + 1
	end := strings.IndexAny(rest[at:], "/?")
	if end < 0 {
		end = len(rest) - at
	}
	hosts := strings.Split(rest[at:at+end], ",")
	slices.Sort(hosts)
	return scheme + "://" + rest[:at] + strings.Join(hosts, ",") + rest[at+end:]
}

func newPG(dir, ps string) (*pgSetup, error) {
	p := &pgSetup{dir: dir}
	var err error
	if p.ports, err = ports(ps, 3); err != nil {
		return nil, err
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pg: no postgres user (install PostgreSQL): %w", err)
	}
	p.uid, _ = strconv.Atoi(u.Uid)
	p.gid, _ = strconv.Atoi(u.Gid)
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	// pg_autoctl keeps its state and pid files under the XDG directories:
	// ours are in dir, so that removing dir forgets a formation.
	p.env = []string{
		"PATH=" + bin + ":/usr/bin:/bin",
		"HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg", "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "xdg", "data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "xdg", "run"),
		"PG_REGRESS_SOCK_DIR=",
		"PGHOST=127.0.0.1",
	}
	return p, nil
}

// pgBin is the bin directory of the newest PostgreSQL that has the
// pg_auto_failover extension (pg_autoctl runs its pg_ctl).
func pgBin() (string, error) {
	if _, err := exec.LookPath("pg_autoctl"); err != nil {
		return "", fmt.Errorf("pg: no pg_autoctl: apt-get install postgresql-15-auto-failover")
	}
	exts, _ := filepath.Glob("/usr/share/postgresql/*/extension/pgautofailover.control")
	if len(exts) == 0 {
		return "", fmt.Errorf("pg: no pgautofailover extension: apt-get install postgresql-15-auto-failover")
	}
	ver := filepath.Base(filepath.Dir(filepath.Dir(exts[len(exts)-1])))
	return filepath.Join("/usr/lib/postgresql", ver, "bin"), nil
}

// data is the data directory of the monitor (0) or a node (1, 2).
func (p *pgSetup) data(i int) string {
	return filepath.Join(p.dir, []string{"monitor", "node1", "node2"}[i])
}

func (p *pgSetup) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = p.env
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(p.uid), Gid: uint32(p.gid)}}
	return cmd
}

// autoctl runs pg_autoctl as postgres, bounded to 30 s.
func (p *pgSetup) autoctl(args ...string) (string, error) {
	cmd := p.command("pg_autoctl", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pg_autoctl %s: %w: %s", strings.Join(args, " "), err, lastLine(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// psql runs one statement on 127.0.0.1:port as postgres.
func (p *pgSetup) psql(port int, db, sql string) (string, error) {
	return run(10*time.Second, "psql", "-X", "-Atq", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres", "-d", db, "-c", sql)
}

// nodeState is one node as the monitor reports it.
type nodeState struct {
	Port     int    `json:"nodeport"`
	Reported string `json:"reportedstate"`
	Goal     string `json:"goalstate"`
}

func (p *pgSetup) nodes() ([]nodeState, error) {
	out, err := p.psql(p.ports[0], "pg_auto_failover",
		"select coalesce(json_agg(json_build_object('nodeport', nodeport, 'reportedstate', reportedstate, 'goalstate', goalstate)), '[]') from pgautofailover.node")
	if err != nil {
		return nil, err
	}
	var ns []nodeState
	if err := json.Unmarshal([]byte(out), &ns); err != nil {
		return nil, fmt.Errorf("monitor's node list %q: %w", out, err)
	}
	return ns, nil
}

// healthy: the monitor knows two nodes of ours, one primary and one
// secondary, each in the state it was asked for, and the primary takes
// writes in database test.
func (p *pgSetup) healthy() error {
	ns, err := p.nodes()
	if err != nil {
		return err
	}
	roles := map[string]int{}
	for _, n := range ns {
		if n.Reported != n.Goal || !contains(p.ports[1:], n.Port) {
			return fmt.Errorf("node on %d is %s, going to %s", n.Port, n.Reported, n.Goal)
		}
		roles[n.Reported] = n.Port
	}
	if len(ns) != 2 || roles["primary"] == 0 || roles["secondary"] == 0 {
		return fmt.Errorf("%v: want a primary and a secondary", ns)
	}
	_, err = p.psql(roles["primary"], "test", "select 1")
	return err
}

// runNode starts `pg_autoctl create ... --run` in a session of its own,
// writing its pid (which is also its process group) to dir/NAME.pid.
func (p *pgSetup) runNode(i int, args ...string) error {
	name := filepath.Base(p.data(i))
	logf, err := os.OpenFile(filepath.Join(p.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := p.command("pg_autoctl", append(args, "--pgdata", p.data(i), "--pgport", strconv.Itoa(p.ports[i]),
		"--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--run")...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	p.exited = append(p.exited, exited)
	go func() { _ = cmd.Wait(); close(exited) }()
	return os.WriteFile(filepath.Join(p.dir, name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
}

// stop kills every node of ours (its whole process group).
func (p *pgSetup) stop() {
	files, _ := filepath.Glob(filepath.Join(p.dir, "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

func (p *pgSetup) start(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	p.stop()
	for _, port := range p.ports {
		if !waitFor(10*time.Second, func() bool { return portFree(port) }) {
			return fmt.Errorf("pg: port %d is held by something else; free it or pass other ports", port)
		}
	}
	if err := os.RemoveAll(p.dir); err != nil {
		return err
	}
	// pg_autoctl's processes create their state directories concurrently
	// and one may fail with "File exists": they are made here first.
	dirs := []string{p.dir}
	for i := range p.ports {
		for _, x := range []string{"run", "config", "data"} {
			dirs = append(dirs, filepath.Join(p.dir, "xdg", x, "pg_autoctl", p.data(i)))
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	// The pid files in dir are readable by all: a test that started the
	// formation through sudo reads them to kill a node.
	if err := os.Chmod(p.dir, 0o755); err != nil {
		return err
	}
	if err := filepath.Walk(p.dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(path, p.uid, p.gid)
	}); err != nil {
		return err
	}
	step := func(what string, ok func() error) error {
		var last error
		if !waitFor(time.Until(deadline), func() bool {
			for i, e := range p.exited {
				select {
				case <-e:
					last = fmt.Errorf("pg_autoctl of %s exited (see %s.log)", filepath.Base(p.data(i)), p.data(i))
					return true
				default:
				}
			}
			last = ok()
			return last == nil
		}) || last != nil {
			return fmt.Errorf("pg: %s: %w (logs in %s)", what, last, p.dir)
		}
		return nil
	}

	if err := p.runNode(0, "create", "monitor"); err != nil {
		return err
	}
	var monitor string
	if err := step("the monitor did not start", func() (err error) {
		monitor, err = p.autoctl("show", "uri", "--pgdata", p.data(0), "--formation", "monitor")
		if err == nil {
			_, err = p.psql(p.ports[0], "pg_auto_failover", "select 1")
		}
		return err
	}); err != nil {
		return err
	}
	for k, v := range monitorSettings {
		if _, err := p.psql(p.ports[0], "postgres", fmt.Sprintf("alter system set %s = '%s'", k, v)); err != nil {
			return err
		}
	}
	if _, err := p.psql(p.ports[0], "postgres", "select pg_reload_conf()"); err != nil {
		return err
	}

	node := func(i int) error {
		return p.runNode(i, "create", "postgres", "--monitor", monitor, "--dbname", "test", "--name", fmt.Sprintf("node%d", i))
	}
	if err := node(1); err != nil {
		return err
	}
	if err := step("the first node did not become the primary", func() error {
		ns, err := p.nodes()
		if err == nil && (len(ns) != 1 || ns[0].Reported != "single") {
			err = fmt.Errorf("nodes %v", ns)
		}
		return err
	}); err != nil {
		return err
	}
	if err := node(2); err != nil {
		return err
	}
	// The standby's pg_basebackup waits for a checkpoint on the primary.
	return step("the standby did not catch up", func() error {
		_, _ = p.psql(p.ports[1], "postgres", "checkpoint")
		return p.healthy()
	})
}
