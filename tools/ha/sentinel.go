package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sentinelSetup is one Redis Sentinel deployment.
type sentinelSetup struct {
	dir       string
	name      string // the master's name the sentinels monitor
	data      []int  // the master's and the replica's ports (roles swap in a failover)
	sentinels []int
}

func sentinelCmd(args []string) error {
	fs := flag.NewFlagSet("sentinel", flag.ContinueOnError)
	dir := fs.String("dir", filepath.Join(tmpDir(), "authport-redis-sentinel"), "directory of the servers' files")
	data := fs.String("ports", "6390,6391", "the master's and the replica's ports")
	sent := fs.String("sentinels", "26390,26391,26392", "the three sentinels' ports")
	name := fs.String("name", "authport", "the master's name")
	wait := fs.Duration("timeout", 60*time.Second, "how long to wait for the deployment to be healthy")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s := sentinelSetup{dir: *dir, name: *name}
	var err error
	if s.data, err = ports(*data, 2); err != nil {
		return err
	}
	if s.sentinels, err = ports(*sent, 3); err != nil {
		return err
	}
	if err := reuseOrStart("sentinel", fmt.Sprintf("deployment (sentinels %v)", s.sentinels),
		"a master, a replica and three sentinels in "+s.dir, s.healthy, func() error {
			if err := s.start(); err != nil {
				return err
			}
			var last error
			if !waitFor(*wait, func() bool { last = s.healthy(); return last == nil }) {
				return fmt.Errorf("sentinel: not healthy after %v: %w (logs in %s)", *wait, last, s.dir)
			}
			return nil
		}); err != nil {
		return err
	}
	fmt.Printf("AUTHPORT_REDIS_SENTINEL_URL=%s\n", s.url())
	return nil
}

// url is the deployment in go-redis's ParseFailoverURL form.
func (s sentinelSetup) url() string {
	u := fmt.Sprintf("redis://127.0.0.1:%d/0?master_name=%s", s.sentinels[0], s.name)
	for _, p := range s.sentinels[1:] {
		u += fmt.Sprintf("&addr=127.0.0.1:%d", p)
	}
	return u
}

func cli(port int, args ...string) (string, error) {
	return run(5*time.Second, "redis-cli", append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)...)
}

// fields parses redis-cli's output of a flat key/value array reply.
func fields(out string) map[string]string {
	lines := strings.Split(out, "\n")
	m := map[string]string{}
	for i := 0; i+1 < len(lines); i += 2 {
		m[strings.TrimSpace(lines[i])] = strings.TrimSpace(lines[i+1])
	}
	return m
}

// healthy: every sentinel sees the same master, one of our two servers,
// with the two other sentinels, and that master has its replica online.
func (s sentinelSetup) healthy() error {
	master := ""
	for _, p := range s.sentinels {
		out, err := cli(p, "sentinel", "master", s.name)
		if err != nil {
			return fmt.Errorf("sentinel on %d: %w", p, err)
		}
		f := fields(out)
		addr := f["ip"] + ":" + f["port"]
		port, _ := strconv.Atoi(f["port"])
		switch {
		case f["flags"] != "master":
			return fmt.Errorf("sentinel on %d: master flags %q", p, f["flags"])
		case f["ip"] != "127.0.0.1" || !contains(s.data, port):
			return fmt.Errorf("sentinel on %d: master %s is not ours", p, addr)
		case master != "" && addr != master:
			return fmt.Errorf("sentinels disagree: %s and %s", master, addr)
		case f["num-other-sentinels"] != "2":
			return fmt.Errorf("sentinel on %d knows %s other sentinels, want 2", p, f["num-other-sentinels"])
		}
		master = addr
	}
	port, _ := strconv.Atoi(master[strings.LastIndex(master, ":")+1:])
	info, err := cli(port, "info", "replication")
	if err != nil {
		return fmt.Errorf("master %s: %w", master, err)
	}
	if !strings.Contains(info, "role:master") || !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=online") {
		return fmt.Errorf("master %s has no replica online", master)
	}
	return nil
}

// start throws away whatever runs on the ports and in the directory and
// starts the deployment afresh.
func (s sentinelSetup) start() error {
	stopPidfiles(s.dir)
	for _, p := range append(append([]int{}, s.data...), s.sentinels...) {
		if out, err := cli(p, "ping"); err == nil && out == "PONG" {
			_, _ = cli(p, "shutdown", "nosave")
		}
		if !waitFor(10*time.Second, func() bool { return portFree(p) }) {
			return fmt.Errorf("port %d is held by something that is not a Redis we could shut down; free it or pass other ports", p)
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	for i, p := range s.data {
		args := []string{
			"--port", strconv.Itoa(p), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--daemonize", "yes", "--dir", s.dir,
			"--pidfile", filepath.Join(s.dir, fmt.Sprintf("redis-%d.pid", p)),
			"--logfile", filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", p)),
			"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
		}
		if i == 1 {
			args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(s.data[0]))
		}
		if _, err := run(10*time.Second, "redis-server", args...); err != nil {
			return err
		}
	}
	for _, p := range s.sentinels {
		conf := filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.conf", p))
		text := fmt.Sprintf(`port %d
bind 127.0.0.1
daemonize yes
dir %s
pidfile %s
logfile %s
sentinel monitor %s 127.0.0.1 %d 2
sentinel down-after-milliseconds %s 1000
sentinel failover-timeout %s 10000
sentinel parallel-syncs %s 1
`, p, s.dir, filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.pid", p)), filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.log", p)),
			s.name, s.data[0], s.name, s.name, s.name)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return err
		}
		if _, err := run(10*time.Second, "redis-server", conf, "--sentinel"); err != nil {
			return err
		}
	}
	return nil
}
