package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mongoBinary is the stand-in's binary; the build tag leaves FerretDB's
// PostgreSQL backend out: a smaller, faster build.
func (s *services) mongoBinary(ctx context.Context) (string, error) {
	return s.toolBinary(ctx, "mongostandin", "ferretdb_no_postgresql", ".")
}

func (s *services) mongodb(ctx context.Context) error {
	// The binary is exported too, for tests that start private stand-ins
	// of their own (tests/faults), even when the server comes from the caller.
	bin, err := s.mongoBinary(ctx)
	if err != nil {
		return err
	}
	s.export("AUTHPORT_MONGOSTANDIN_BIN", bin, "")
	if s.given("AUTHPORT_MONGODB_URL", "mongodb") {
		return nil
	}
	ping := func(port int) bool { return succeeds(ctx, bin, "-ping", "-listen", fmt.Sprintf("127.0.0.1:%d", port)) }
	// Reuse a MongoDB server that answers on the first port; else start on
	// the first free port, skipping ports something else holds.
	for port := s.mongoPort; port < s.mongoPort+10; port++ {
		if err := s.stopOldStandin(port, bin); err != nil {
			return err
		}
		if ping(port) {
			logf("mongodb: reusing the server on 127.0.0.1:%d", port)
		} else if portFree(port) {
			logf("mongodb: starting the stand-in on 127.0.0.1:%d", port)
			if err := s.startStandin(bin, port); err != nil {
				return err
			}
			if !s.waitFor(func() bool { return ping(port) }) {
				return s.failLog(fmt.Sprintf("mongostandin-%d", port), fmt.Sprintf("the MongoDB stand-in did not answer on 127.0.0.1:%d within %s", port, s.timeout))
			}
		} else {
			logf("mongodb: port %d is taken by something else; trying the next", port)
			continue
		}
		s.export("AUTHPORT_MONGODB_URL", mongoURL(port), "")
		return nil
	}
	return fmt.Errorf("no free port for the MongoDB stand-in in %d-%d", s.mongoPort, s.mongoPort+9)
}

// stopOldStandin stops a stand-in this program started on port from an
// older build (its pid file says "PID BINARY").
func (s *services) stopOldStandin(port int, bin string) error {
	b, err := os.ReadFile(filepath.Join(s.logDir, fmt.Sprintf("mongostandin-%d.pid", port)))
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[1] == bin {
		return nil
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		return nil
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.HasPrefix(string(cmdline), f[1]+"\x00") {
		return nil
	}
	logf("mongodb: stopping the stand-in from an older build on 127.0.0.1:%d (pid %d)", port, pid)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if !s.waitFor(func() bool { return portFree(port) }) {
		return fmt.Errorf("the old stand-in (pid %d) did not stop", pid)
	}
	return nil
}

// startStandin starts the stand-in in a session of its own, with its data
// in $TMPDIR/authport-mongostandin-PORT, and writes its pid file.
func (s *services) startStandin(bin string, port int) error {
	data := filepath.Join(s.tmp, fmt.Sprintf("authport-mongostandin-%d", port))
	_ = os.RemoveAll(data)
	log, err := os.OpenFile(filepath.Join(s.logDir, fmt.Sprintf("mongostandin-%d.log", port)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(bin, "-listen", fmt.Sprintf("127.0.0.1:%d", port), "-data", data)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the MongoDB stand-in: %w", err)
	}
	pidfile := filepath.Join(s.logDir, fmt.Sprintf("mongostandin-%d.pid", port))
	err = os.WriteFile(pidfile, fmt.Appendf(nil, "%d %s\n", cmd.Process.Pid, bin), 0o644)
	_ = cmd.Process.Release()
	return err
}

// dex, the OpenID provider of the sign-in tests, built from the pins in
// tools/dex. Nothing is started: each test runs a dex of its own.
func (s *services) dex(ctx context.Context) error {
	if s.given("AUTHPORT_DEX_BIN", "dex") {
		return nil
	}
	bin, err := s.toolBinary(ctx, "dex", "", "github.com/dexidp/dex/cmd/dex")
	if err != nil {
		return err
	}
	s.export("AUTHPORT_DEX_BIN", bin, "")
	return nil
}

// chromium is Debian's chromium, the browser of the end-to-end tests.
// Nothing is started: each test runs a headless browser of its own.
func (s *services) chromium(ctx context.Context) error {
	if s.given("AUTHPORT_CHROMIUM_BIN", "chromium") {
		return nil
	}
	const bin = "/usr/bin/chromium"
	if !fileExecutable(bin) {
		if err := s.aptInstall(ctx, "chromium"); err != nil {
			return err
		}
	}
	if !fileExecutable(bin) {
		return fmt.Errorf("chromium: apt-get installed chromium but %s is missing; set AUTHPORT_CHROMIUM_BIN to a Chromium binary", bin)
	}
	s.export("AUTHPORT_CHROMIUM_BIN", bin, "")
	return nil
}

// ensureHABin builds tools/ha and exports its path once (the fault suite
// starts private deployments with it, even when the caller gave the URLs).
func (s *services) ensureHABin(ctx context.Context) error {
	if s.haBin != "" {
		return nil
	}
	bin, err := s.toolBinary(ctx, "ha", "", ".")
	if err != nil {
		return err
	}
	s.haBin = bin
	s.export("AUTHPORT_HA_BIN", bin, "")
	return nil
}

// haService runs `tools/ha COMMAND`, which starts the deployment or reuses
// a healthy one and prints VAR=VALUE.
func (s *services) haService(ctx context.Context, command, name, want string) error {
	log, err := os.OpenFile(filepath.Join(s.logDir, "ha-"+command+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	out, err := cmdSpec{args: []string{s.haBin, command}, timeout: 10 * time.Minute, stderr: log}.output(ctx)
	if err != nil {
		return s.failLog("ha-"+command, "tools/ha "+command+" failed")
	}
	value, ok := strings.CutPrefix(out, name+"=")
	if !ok {
		return fmt.Errorf("tools/ha %s printed '%s', not %s=...", command, out, name)
	}
	note := ""
	if value != want {
		note = "tools/ha's, not the default " + want
	}
	s.export(name, value, note)
	return nil
}

func (s *services) redisSentinel(ctx context.Context) error {
	if err := s.ensureHABin(ctx); err != nil {
		return err
	}
	if s.given("AUTHPORT_REDIS_SENTINEL_URL", "redis-sentinel") {
		return nil
	}
	if err := s.redisInstalled(ctx); err != nil {
		return err
	}
	return s.haService(ctx, "sentinel", "AUTHPORT_REDIS_SENTINEL_URL", s.url("redis-sentinel"))
}

func (s *services) postgresHA(ctx context.Context) error {
	if err := s.ensureHABin(ctx); err != nil {
		return err
	}
	if s.given("AUTHPORT_POSTGRES_HA_URL", "postgres-ha") {
		return nil
	}
	if err := needRoot("running PostgreSQL HA (pg_auto_failover, as user postgres)"); err != nil {
		return err
	}
	if !commandExists("pg_autoctl") {
		if err := s.aptInstall(ctx, "postgresql-"+orDefault(postgresVersion(), "15")+"-auto-failover"); err != nil {
			return err
		}
	}
	return s.haService(ctx, "pg", "AUTHPORT_POSTGRES_HA_URL", s.url("postgres-ha"))
}

// containers readies podman's API service and the images of the container
// path, from tools/containers, which prints NAME=VALUE lines (DOCKER_HOST,
// TESTCONTAINERS_*, AUTHPORT_*_IMAGE, AUTHPORT_IMAGES_STATUS) at once and
// builds what is missing in the background. Skipped where the caller set
// another DOCKER_HOST or a Docker engine's socket exists.
func (s *services) containers(ctx context.Context) error {
	const podmanHost = "unix:///run/podman/podman.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" && h != podmanHost {
		s.given("DOCKER_HOST", "containers")
		return nil
	}
	if os.Getenv("DOCKER_HOST") == "" {
		if st, err := os.Stat("/var/run/docker.sock"); err == nil && st.Mode()&os.ModeSocket != 0 {
			logf("containers: a Docker engine's socket is at /var/run/docker.sock; testcontainers-go uses it")
			return nil
		}
	}
	bin, err := s.toolBinary(ctx, "containers", "", ".")
	if err != nil {
		return err
	}
	standin, err := s.mongoBinary(ctx)
	if err != nil {
		return err
	}
	out, err := cmdSpec{args: []string{bin, "-socket", strings.TrimPrefix(podmanHost, "unix://")},
		env: []string{"AUTHPORT_MONGOSTANDIN_BIN=" + standin}, timeout: 30 * time.Minute, stderr: os.Stderr}.output(ctx)
	if err != nil {
		return fmt.Errorf("containers: tools/containers failed (its output is above): %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), "="); ok {
			s.export(name, value, "")
		}
	}
	return nil
}
