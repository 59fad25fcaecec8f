package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// allServices is the default of AUTHPORT_SERVICES, in the order they are
// provided: the backends of the table whose server this program starts or
// passes through, in table order, then the programs the tests run.
func allServices(table []backend) []string {
	var names []string
	for _, b := range table {
		if b.Start != startEmbedded {
			names = append(names, b.Name)
		}
	}
	return append(names, "dex", "chromium", "containers")
}

// wantedServices reads AUTHPORT_SERVICES: names of services, "none", or
// names each with a leading "-" for every service but those.
func wantedServices(value string, all []string) ([]string, error) {
	fields := strings.Fields(value)
	if len(fields) == 0 {
		return all, nil
	}
	except := strings.HasPrefix(fields[0], "-")
	var wanted []string
	for _, f := range fields {
		name, minus := strings.CutPrefix(f, "-")
		if minus != except {
			return nil, fmt.Errorf("AUTHPORT_SERVICES=%q: either name the services, or every one with a leading - to leave it out", value)
		}
		if !(name == "none" && !minus) && !slices.Contains(all, name) {
			return nil, fmt.Errorf("unknown service '%s' in AUTHPORT_SERVICES (known: %s, or none)", name, strings.Join(all, " "))
		}
		wanted = append(wanted, name)
	}
	if except {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(wanted, n) }), nil
	}
	return wanted, nil
}

// env is one NAME=VALUE line the services command prints as an export.
type env struct{ name, value string }

// services provides the services of one run and collects their exports.
type services struct {
	repo, tmp, logDir string
	timeout           time.Duration
	setupHost         bool
	clusterPorts      []int
	mongoPort         int
	exports           []env
	aptUpdated        bool
	haBin             string
	table             []backend // the table of backends
}

// url returns the URL of the backend name in the table: the server this
// program provides on this machine.
func (s *services) url(name string) string {
	b, _ := backendNamed(s.table, name)
	return b.URL
}

// servicesCmd is `ci services` (scripts/services.sh): it prints the export
// lines on stdout, for `eval "$(scripts/services.sh)"`.
//
// PostgreSQL, MariaDB and Redis are the machine's own servers on their
// usual ports, started when down and installed from Debian's packages when
// missing (as root, or through `sudo -n` for apt-get alone); their
// configuration is changed only with -setup-host. The Redis Cluster (three
// masters, no replicas) lives in $TMPDIR/authport-redis-cluster. Redis
// Sentinel (a master and a replica on 6390-6391, sentinels on 26390-26392)
// and PostgreSQL HA (a pg_auto_failover monitor, primary and synchronous
// standby on 5440-5442) are tools/ha's, whose binary is exported as
// AUTHPORT_HA_BIN for the fault suite. MongoDB is tools/mongostandin
// (FerretDB on SQLite), run with its data in $TMPDIR/authport-mongostandin-PORT;
// its binary is exported as AUTHPORT_MONGOSTANDIN_BIN too. dex is only built
// (AUTHPORT_DEX_BIN), and Chromium only installed (AUTHPORT_CHROMIUM_BIN):
// the tests start their own. "containers" readies podman's Docker-compatible
// API and the database images with tools/containers (in the background
// when missing), unless DOCKER_HOST is set or a Docker engine's socket
// exists. Binaries built from tools/ are cached in
// ${XDG_CACHE_HOME:-$HOME/.cache}/authport; logs of what is started and
// built are in $TMPDIR/authport-services.
func servicesCmd(ctx context.Context, repo string, args []string) error {
	fs := flag.NewFlagSet("services", flag.ContinueOnError)
	setup := fs.Bool("setup-host", os.Getenv("AUTHPORT_SETUP_HOST") == "1",
		"configure the machine's PostgreSQL (trust auth on loopback in pg_hba.conf, role root, database test) and MariaDB (root over TCP without a password, database test) when they refuse the test URLs (also AUTHPORT_SETUP_HOST=1)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	exports, err := provide(ctx, repo, *setup)
	if err != nil {
		return err
	}
	for _, e := range exports {
		fmt.Printf("export %s='%s'\n", e.name, strings.ReplaceAll(e.value, "'", `'\''`))
	}
	return nil
}

// provide makes the services AUTHPORT_SERVICES names reachable and returns
// the variables that point the tests at them.
func provide(ctx context.Context, repo string, setupHost bool) ([]env, error) {
	started := time.Now()
	s := &services{repo: repo, tmp: tmpDir(), setupHost: setupHost, timeout: 60 * time.Second}
	s.logDir = filepath.Join(s.tmp, "authport-services")
	if v := os.Getenv("AUTHPORT_SERVICES_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v + "s")
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("AUTHPORT_SERVICES_TIMEOUT=%q: want a number of seconds", v)
		}
		s.timeout = d
	}
	var err error
	if s.clusterPorts, s.mongoPort, err = portsFromEnv(); err != nil {
		return nil, err
	}
	if s.table, err = readBackends(repo); err != nil {
		return nil, err
	}
	all := allServices(s.table)
	wanted, err := wantedServices(os.Getenv("AUTHPORT_SERVICES"), all)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		return nil, err
	}
	steps := s.steps()
	for _, b := range s.table {
		if b.Start == startExternal {
			steps[b.Name] = func(context.Context) error { return s.external(b) }
		}
	}
	for _, name := range all {
		if !slices.Contains(wanted, name) {
			continue
		}
		step := steps[name]
		if step == nil {
			return nil, fmt.Errorf("%s starts by scripts/services.sh (start %q in %s) but tools/ci has no step for it: add one to services.steps, or make it %q", name, startServices, tablePath, startExternal)
		}
		if err := s.locked(name, func() error { return step(ctx) }); err != nil {
			return nil, err
		}
	}
	logf("ready in %ds", int(time.Since(started).Seconds()))
	return s.exports, nil
}

// steps are the services this program starts, by name: the table's
// backends whose start is "services", and the programs the tests run.
func (s *services) steps() map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		"postgres": s.postgres, "mysql": s.mysql, "redis": s.redis, "redis-cluster": s.redisCluster,
		"redis-sentinel": s.redisSentinel, "postgres-ha": s.postgresHA, "mongodb": s.mongodb,
		"dex": s.dex, "chromium": s.chromium, "containers": s.containers,
	}
}

// external passes the variable of a backend whose server someone else
// runs through, and says where it is missing.
func (s *services) external(b backend) error {
	if !s.given(b.Env, b.Name) {
		logf("%s: %s is not set: its tests skip, or fail when AUTHPORT_REQUIRE names %s (nothing here starts its server)", b.Name, b.Env, b.Name)
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "services: "+format+"\n", args...)
}

// quiet runs args with their output appended to logDir/LOG.log and no
// stdin, so that a daemon it leaves behind holds none of our pipes.
func (s *services) quiet(ctx context.Context, log string, timeout time.Duration, args ...string) error {
	f, err := os.OpenFile(filepath.Join(s.logDir, log+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	return cmdSpec{args: args, timeout: timeout, stdout: f, stderr: f}.run(ctx)
}

// failLog is an error showing the end of logDir/LOG.log.
func (s *services) failLog(log, msg string) error {
	file := filepath.Join(s.logDir, log+".log")
	if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
		fmt.Fprintf(os.Stderr, "services: last lines of %s:\n", file)
		for _, l := range tailLines(string(b), 15) {
			fmt.Fprintf(os.Stderr, "    %s\n", l)
		}
	}
	return errors.New(msg)
}

// waitFor retries ok every 0.5 s until it holds or the timeout passes.
func (s *services) waitFor(ok func() bool) bool {
	deadline := time.Now().Add(s.timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
	return true
}

// needRoot: starting or setting up the system's database servers needs root.
func needRoot(what string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s needs root: run this script as root, or set its AUTHPORT_*_URL to a server you run", what)
	}
	return nil
}

// aptInstall installs Debian packages (through `sudo -n` unless root),
// running `apt-get update` once per run first.
func (s *services) aptInstall(ctx context.Context, pkgs ...string) error {
	var sudo []string
	if os.Geteuid() != 0 {
		sudo = []string{"sudo", "-n"}
	}
	if !commandExists("apt-get") {
		return fmt.Errorf("cannot install %s: no apt-get on this machine; install it yourself", strings.Join(pkgs, " "))
	}
	if !s.aptUpdated {
		logf("apt-get update")
		if err := s.quiet(ctx, "apt", 600*time.Second, append(sudo, "apt-get", "update", "-q")...); err != nil {
			return s.failLog("apt", "apt-get update failed (needs root or passwordless sudo, and the Debian mirrors)")
		}
		s.aptUpdated = true
	}
	logf("installing %s from Debian's packages", strings.Join(pkgs, " "))
	args := append(sudo, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q",
		"-o", "DPkg::Lock::Timeout=120", "--no-install-recommends")
	if err := s.quiet(ctx, "apt", 900*time.Second, append(args, pkgs...)...); err != nil {
		return s.failLog("apt", "apt-get install "+strings.Join(pkgs, " ")+" failed")
	}
	return nil
}

func fileExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// export queues NAME=VALUE for stdout.
func (s *services) export(name, value, note string) {
	if note != "" {
		logf("ready: %s=%s (%s)", name, value, note)
	} else {
		logf("ready: %s=%s", name, value)
	}
	s.exports = append(s.exports, env{name, value})
}

// given passes a variable the caller set through, and says whether it did.
func (s *services) given(name, service string) bool {
	v := os.Getenv(name)
	if v == "" {
		return false
	}
	s.export(name, v, "set by the caller; "+service+" left alone")
	return true
}

// systemServer provides one of the machine's own servers: the variable the
// caller set, else url once works holds, after start (as root) when it
// does not.
func (s *services) systemServer(service, name, url string, works func() bool, start func() error) error {
	if s.given(name, service) {
		return nil
	}
	if !works() {
		if err := needRoot("starting " + service); err != nil {
			return err
		}
		if err := start(); err != nil {
			return err
		}
	}
	s.export(name, url, "")
	return nil
}
