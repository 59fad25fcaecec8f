package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/conformance/provision"
)

// The Redis Cluster failover rows: a cluster of three masters, each with a
// replica, on ports and in a directory of the test's own; a master is
// killed (SIGKILL) under the 8-worker load and its replica takes over
// (cluster-node-timeout 1000 ms). Redis replicates asynchronously, so a
// write the master acknowledged and had not yet sent to its replica is
// undone by the failover; the raw check counts those. The same failover
// runs twice: with the adapter's defaults, and with
// redisadapter.WithReplicaAck(1, ackTimeout), which makes the write wait
// for its replica's acknowledgement (WAIT 1) before the call returns.

const (
	failoverNodeTimeout = 1000 // ms, cluster-node-timeout
	ackTimeout          = 500 * time.Millisecond
)

// failoverFigures marks a failover row and names its adapter option.
type failoverFigures struct {
	option string
	ack    bool
}

// replicatedCluster is the cluster of the failover rows.
type replicatedCluster struct {
	procs []*process
	ports []int
}

func newReplicatedCluster(t *testing.T) *replicatedCluster {
	t.Helper()
	bin := binary(t, provision.BackendRedisCluster, "redis-server")
	cli := binary(t, provision.BackendRedisCluster, "redis-cli")
	dir := tempDir(t, "authport-faults-failover-")
	rc := &replicatedCluster{}
	for range 6 {
		port := freeClusterPort(t, rc.ports)
		rc.ports = append(rc.ports, port)
		nd := filepath.Join(dir, strconv.Itoa(port))
		if err := os.MkdirAll(nd, 0o755); err != nil {
			t.Fatal(err)
		}
		args := append(redisArgs(port, nd), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(failoverNodeTimeout),
			// A replica may always be promoted, however long it was cut off.
			"--cluster-replica-validity-factor", "0")
		p := &process{name: bin, args: args, log: filepath.Join(nd, "stdout.log")}
		startProcess(t, p, redisPing("127.0.0.1:"+strconv.Itoa(port)))
		rc.procs = append(rc.procs, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--cluster", "create"}
	for _, p := range rc.ports {
		args = append(args, "127.0.0.1:"+strconv.Itoa(p))
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if err := run(ctx, cli, args...); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, rc.replicated); err != nil {
		t.Fatalf("the cluster on %v did not get its three masters with one replica each in sync: %v", rc.ports, err)
	}
	return rc
}

func nodeClient(port int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1, ContextTimeoutEnabled: true})
}

// replicated: every slot served, three masters, each with its replica
// online, on every running node.
func (rc *replicatedCluster) replicated(ctx context.Context) error {
	var running []int
	for i, p := range rc.procs {
		if p.exited() == nil {
			running = append(running, rc.ports[i])
		}
	}
	if err := clusterHealthy(ctx, running); err != nil {
		return err
	}
	masters := 0
	for _, port := range running {
		c := nodeClient(port)
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "role:master") {
			continue
		}
		masters++
		if !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=online") {
			return fmt.Errorf("master %d: its replica is not online yet", port)
		}
	}
	if masters != 3 {
		return fmt.Errorf("%d masters, want 3", masters)
	}
	return nil
}

// aMaster returns the index of a node that is a master now.
func (rc *replicatedCluster) aMaster(ctx context.Context) (int, error) {
	for i, port := range rc.ports {
		c := nodeClient(port)
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		if err == nil && strings.Contains(info, "role:master") {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no master answers among %v", rc.ports)
}

// failover kills a master (SIGKILL) and counts the service back when the
// survivors flag it as failed and serve every slot again (its replica
// promoted). It then starts the killed node again, which rejoins as the
// replica of the node that replaced it.
//
// With freeze, the master is stopped (SIGSTOP) instead, and continued
// (SIGCONT) once its replica has been promoted: the classic way Redis
// Cluster loses acknowledged writes. The old master wakes up with the
// commands the clients sent it while it was frozen, runs and acknowledges
// them before it learns that it was replaced, and then, turned into a
// replica, drops them.
func (rc *replicatedCluster) failover(t *testing.T, freeze bool) fault {
	name := "SIGKILL of a master, its replica promoted"
	if freeze {
		name = "SIGSTOP of a master until its replica is promoted, then SIGCONT"
	}
	return fault{name: name, crash: true, failover: true,
		inject: func(ctx context.Context) (time.Time, time.Time, error) {
			i, err := rc.aMaster(ctx)
			if err != nil {
				return time.Now(), time.Now(), err
			}
			victim := rc.procs[i]
			var survivors []int
			for j, p := range rc.ports {
				if j != i {
					survivors = append(survivors, p)
				}
			}
			vc := nodeClient(rc.ports[i])
			id, err := vc.ClusterMyID(ctx).Result()
			vc.Close()
			if err != nil {
				return time.Now(), time.Now(), err
			}
			began := time.Now()
			if freeze {
				err = victim.signal(syscall.SIGSTOP)
			} else {
				err = victim.kill()
			}
			if err != nil {
				return began, began, err
			}
			promoted := func(ctx context.Context) error {
				if err := failedOn(ctx, id, survivors); err != nil {
					return err
				}
				return clusterHealthy(ctx, survivors)
			}
			if err := waitFor(ctx, promoted); err != nil {
				if freeze {
					_ = victim.signal(syscall.SIGCONT)
				}
				return began, began, fmt.Errorf("waiting for the replica of %d to take over: %w", rc.ports[i], err)
			}
			back := time.Now()
			t.Logf("%s: master %d, its replica serving its slots after %v", name, rc.ports[i], back.Sub(began).Round(time.Millisecond))
			if freeze {
				if err := victim.signal(syscall.SIGCONT); err != nil {
					return began, back, err
				}
			} else if err := victim.start(); err != nil {
				return began, back, fmt.Errorf("starting the old master again: %w", err)
			}
			return began, back, nil
		}}
}

// failedOn: every node in ports flags node id as failed (FAIL, agreed by
// the majority, not PFAIL): its slots are then served by its promoted
// replica once the cluster is healthy again.
func failedOn(ctx context.Context, id string, ports []int) error {
	for _, port := range ports {
		c := nodeClient(port)
		nodes, err := c.ClusterNodes(ctx).Result()
		c.Close()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(nodes, "\n") {
			f := strings.Fields(line)
			if len(f) > 2 && f[0] == id && !slices.Contains(strings.Split(f[2], ","), "fail") {
				return fmt.Errorf("node %d does not see %s as failed yet (%s)", port, id, f[2])
			}
		}
	}
	return nil
}

func runFailover(t *testing.T, _ *toxiproxy.ApiServer, add func(row)) {
	rc := newReplicatedCluster(t)
	var seeds []string
	for _, p := range rc.ports {
		seeds = append(seeds, "127.0.0.1:"+strconv.Itoa(p))
	}
	client := func() *redis.ClusterClient {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds, ContextTimeoutEnabled: true, MaxRetries: -1}) // see redisOptions
	}
	plain := newRedisAdapter(t, client())
	acked := newRedisAdapter(t, client(), redisadapter.WithReplicaAck(1, ackTimeout))
	rawClient := client()
	t.Cleanup(func() { _ = rawClient.Close() })
	plainFig := failoverFigures{option: "defaults (asynchronous replication)"}
	ackFig := failoverFigures{option: fmt.Sprintf("WithReplicaAck(1, %v)", ackTimeout), ack: true}
	for i, s := range []struct {
		a      *redisadapter.Adapter
		fig    failoverFigures
		freeze bool
	}{
		{plain, plainFig, false},
		{acked, ackFig, false},
		{plain, plainFig, true},
		{acked, ackFig, true},
	} {
		// Each failover starts from a cluster with every master replicated
		// and in sync (the node killed before has rejoined as a replica).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := waitFor(ctx, rc.replicated)
		cancel()
		if err != nil {
			t.Fatalf("before failover %d: %v", i+1, err)
		}
		r, err := runScenario(t, "redis-cluster (3 + 3 replicas)", false, s.a, redisRaw{c: rawClient}, rc.failover(t, s.freeze), fmt.Sprintf("fo%d%s", i, randomHex(3)))
		if err != nil {
			t.Fatal(err)
		}
		r.failover = &s.fig
		add(r)
	}
}

// judgeFailover fails t for what a failover row must never show: a panic,
// a hung call, no success after the failover, too little load to check,
// and, with replica acknowledgement on, an acknowledged token use undone,
// a revoked session readable again or a rotated refresh token accepted
// again.
// The other losses are what asynchronous replication allows: reported.
func judgeFailover(t *testing.T, r row) {
	t.Helper()
	where := r.backend + "/" + r.fault + "/" + r.failover.option
	if r.panics > 0 {
		t.Errorf("%s: %d panic(s)", where, r.panics)
	}
	if r.hung > 0 {
		t.Errorf("%s: %d call(s) returned more than %v after their %v deadline while the process was running", where, r.hung, grace, callTimeout)
	}
	if r.recovery < 0 {
		t.Errorf("%s: no call succeeded after the failover; errors after it: %q", where, r.slowRecovery)
	}
	if r.acked < 50 {
		t.Errorf("%s: only %d acknowledged writes to check", where, r.acked)
	}
	if r.failover.ack && r.tokensBack > 0 {
		t.Errorf("%s: %d verification token(s) whose use was acknowledged by a replica came back after the failover", where, r.tokensBack)
	}
	if r.failover.ack && r.revokedBack+r.rotationsBack > 0 {
		t.Errorf("%s: after the failover, %d session(s) revoked with a replica's acknowledgement are readable again and %d refresh token(s) rotated with one are accepted again",
			where, r.revokedBack, r.rotationsBack)
	}
	if r.lost > 0 || r.partial > 0 {
		t.Logf("%s: %d acknowledged write(s) undone by the failover, %d deleted user(s) with records left (asynchronous replication: reported, not failed)", where, r.lost, r.partial)
	}
	logDetails(t, where, r.details)
}

// firstSuccess is the time from the fault to the first successful call
// after the service was back, or "never".
func (r row) firstSuccess() string {
	if r.recovery < 0 {
		return "never"
	}
	return ms(r.down + r.recovery)
}

func formatFailoverTable(rows []row) string {
	var b strings.Builder
	for _, r := range rows {
		if r.failover == nil {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "Redis Cluster failover (3 masters + 3 replicas, cluster-node-timeout %d ms), under the same load:\n", failoverNodeTimeout)
			b.WriteString("| fault | adapter option | ops | failed calls | fault → replica serving | fault → first success after it | acked checked | token uses back | deleted users back | deleted sessions back | acked sessions lost | revoked sessions readable again | rotated refresh tokens accepted twice | acked writes lost (all kinds) | panics | hung |\n")
			b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %d | %d | %d | %d | %d | %s | %d | %d | %d |\n",
			r.fault, r.failover.option, r.ops, r.errFault+r.errOther, ms(r.down), r.firstSuccess(), r.acked,
			r.tokensBack, r.deletedBack, r.sessionsBack, r.sessionsLost, r.sessionOpsCells(), r.lost+r.partial, r.panics, r.hung)
	}
	return b.String()
}
