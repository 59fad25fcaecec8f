// Command ha starts, on loopback ports of their own, the highly available
// deployments the conformance and fault suites run on, or reuses them when
// they already run and are healthy:
//
//	ha sentinel [-dir D] [-ports MASTER,REPLICA] [-sentinels S1,S2,S3] [-name authport]
//	ha pg [-dir D] [-ports MONITOR,NODE1,NODE2]
//
// "sentinel" is Redis Sentinel from the installed redis-server: a master, a
// replica and three sentinels (quorum 2, down-after-milliseconds 1000),
// each daemonized with its files in -dir. It prints
// AUTHPORT_REDIS_SENTINEL_URL, in the form go-redis's ParseFailoverURL
// reads (the first sentinel in the address, the others as addr=, the
// master's name as master_name=).
//
// "pg" is a pg_auto_failover formation (Debian's postgresql-15-auto-failover,
// installed with apt-get when pg_autoctl is missing): a monitor, a primary
// and a synchronous standby, run as the postgres user with trust
// authentication on 127.0.0.1, each `pg_autoctl run` in a session of its
// own with its data and log in -dir. The monitor's health checks are
// shortened so that a failover takes seconds, not the default half-minute.
// It prints AUTHPORT_POSTGRES_HA_URL, the formation's multi-host URI
// (`pg_autoctl show uri --formation default`, with
// target_session_attrs=read-write), whose database is "test".
//
// Both print NAME=VALUE lines on stdout (scripts/services.sh turns them
// into export lines) and their progress on stderr. A deployment whose
// servers answer but is not healthy (say, a sentinel that lost its
// master, a formation with one node) is torn down and started afresh. The
// fault suite (tests/faults) runs this program with private ports and
// directories to get deployments it may kill servers of. It needs root for
// "pg" (the servers run as postgres).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ha sentinel|pg [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "sentinel":
		err = sentinelCmd(os.Args[2:])
	case "pg":
		err = pgCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (want sentinel or pg)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ha:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ha: "+format+"\n", args...)
}

// ports parses a comma-separated list of exactly n port numbers.
func ports(s string, n int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("bad port %q in %q", f, s)
		}
		out = append(out, p)
	}
	if len(out) != n {
		return nil, fmt.Errorf("%q: want %d ports, got %d", s, n, len(out))
	}
	return out, nil
}

// run runs a command bounded to d and returns its trimmed stdout; the
// error carries its stderr.
func run(d time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return strings.TrimSpace(string(out)), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// reuseOrStart keeps a deployment that is already healthy, or else starts
// it (start returns once it is healthy), logging which it did under name:
// the deployment reused, or the error that made healthy fail, what is
// started and how long that took.
func reuseOrStart(name, reused, started string, healthy, start func() error) error {
	err := healthy()
	if err == nil {
		logf("%s: reusing the healthy %s", name, reused)
		return nil
	}
	logf("%s: %v: starting %s", name, err, started)
	began := time.Now()
	if err := start(); err != nil {
		return err
	}
	logf("%s: healthy in %.1fs", name, time.Since(began).Seconds())
	return nil
}

// waitFor retries ok every 250 ms until it returns true or d passes.
func waitFor(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if ok() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func tmpDir() string {
	if d := os.Getenv("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}

// stopPidfiles sends SIGKILL to every process whose pid is in one of the
// files dir/*.pid (a deployment of ours that is not healthy; its data is
// thrown away anyway).
func stopPidfiles(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
		if err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// portFree reports whether nothing accepts connections on 127.0.0.1:port.
func portFree(port int) bool {
	_, err := run(2*time.Second, "bash", "-c", fmt.Sprintf("exec 4<>/dev/tcp/127.0.0.1/%d", port))
	return err != nil
}

var errUnhealthy = errors.New("not healthy")

func contains(list []int, p int) bool { return slices.Contains(list, p) }
