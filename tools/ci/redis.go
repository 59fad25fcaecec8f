package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// portFree reports whether nothing accepts connections on 127.0.0.1:port.
func portFree(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// redisCommand sends one inline command to the Redis on port and returns
// its reply: a status, an integer or a bulk string (an error reply is an
// error).
func redisCommand(port int, command string) (string, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\r\n", command); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case line == "":
		return "", errors.New("empty reply")
	case line[0] == '-':
		return "", errors.New(line[1:])
	case line[0] == '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("bad bulk reply %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	default:
		return line[1:], nil
	}
}

func redisPong(port int) bool {
	out, err := redisCommand(port, "PING")
	return err == nil && out == "PONG"
}

func (s *services) redisInstalled(ctx context.Context) error {
	if !commandExists("redis-server") || !commandExists("redis-cli") {
		return s.aptInstall(ctx, "redis-server")
	}
	return nil
}

func (s *services) redis(ctx context.Context) error {
	works := func() bool { return redisPong(6379) }
	return s.systemServer("redis", "AUTHPORT_REDIS_URL", s.url("redis"), works, func() error { return s.startRedis(ctx) })
}

// startRedis installs or starts the machine's Redis.
func (s *services) startRedis(ctx context.Context) error {
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
