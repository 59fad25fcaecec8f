package provision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	// dockerTimeout bounds the one question to the Docker engine of a
	// process (is it there?). Without an engine the answer is immediate
	// (no socket); the timeout is for an engine that does not answer.
	dockerTimeout = 5 * time.Second
	// startTimeout bounds pulling, starting and waiting for one container.
	startTimeout = 5 * time.Minute
)

// processCache is the package's only variable, and it is unavoidable: the
// containers are started at most once per test process and shared by every
// test in it, so the once-only results must outlive any one test. It is
// written only through its sync.Once fields.
var processCache cache

// cache remembers, for one process, whether a Docker engine answered and
// the address of each backend's container.
type cache struct {
	docker     sync.Once
	dockerErr  error
	mu         sync.Mutex
	containers map[string]*lazyServer
}

// lazyServer is one backend's container, started on first use.
type lazyServer struct {
	once   sync.Once
	addr   string
	err    error
	reaper *os.File // held open for the life of the process; see reapOnExit
}

// startContainer returns the address of b's container, starting it on the
// first call of the process. It returns a *noDockerError when no Docker
// engine answers.
func startContainer(b backend) (string, error) {
	return processCache.server(b)
}

// server returns b's container address, asking Docker once and starting the
// container once per process.
func (c *cache) server(b backend) (string, error) {
	c.docker.Do(func() { c.dockerErr = detectDocker(dockerTimeout) })
	if c.dockerErr != nil {
		return "", &noDockerError{err: c.dockerErr}
	}
	c.mu.Lock()
	if c.containers == nil {
		c.containers = make(map[string]*lazyServer)
	}
	s := c.containers[b.name]
	if s == nil {
		s = &lazyServer{}
		c.containers[b.name] = s
	}
	c.mu.Unlock()
	s.once.Do(func() { s.addr, s.reaper, s.err = runContainer(b) })
	return s.addr, s.err
}

// detectDocker reports whether a Docker engine answers within timeout,
// asking through the docker command (the engine's own client). A machine
// without the command or without an engine answers at once.
func detectDocker(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := docker(ctx, "version", "--format", "{{.Server.Version}}")
	return err
}

// docker runs the docker command and returns its trimmed standard output;
// an error carries what it printed on standard error.
func docker(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// runContainer starts b's container and returns the address a client of b
// connects to. The container is removed when the test process exits, even
// when it is killed: a small reaper process holds a pipe from this process
// and removes the container when the pipe closes. On an error it removes
// what it started.
//
// The docker command is used rather than a Docker client library so that no
// module requiring this package (every adapter's tests) lists a Docker
// client among its requirements: a program that imports an adapter then has
// none in its go.sum (the consumer check in tools/release proves it).
func runContainer(b backend) (addr string, reaper *os.File, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	spec, ok := containerSpecFor(b.name)
	if !ok {
		return "", nil, fmt.Errorf("no container for backend %s", b.name)
	}
	args := []string{"run", "--detach", "--rm", "--publish", "127.0.0.1::" + spec.port, "--label", "org.authport.test=provision"}
	for _, k := range slices.Sorted(maps.Keys(spec.env)) {
		args = append(args, "--env", k+"="+spec.env[k])
	}
	args = append(append(args, b.image), spec.args...)
	id, err := docker(ctx, args...)
	if err != nil {
		return "", nil, err
	}
	if reaper, err = reapOnExit(id); err != nil {
		_, rmErr := docker(context.Background(), "rm", "--force", id)
		return "", nil, errors.Join(err, rmErr)
	}
	hostPort, err := waitReady(ctx, id, spec)
	if err != nil {
		reaper.Close() // the reaper removes the container
		return "", nil, fmt.Errorf("%s did not become ready: %w", b.image, err)
	}
	return spec.address(hostPort), reaper, nil
}

// reapOnExit starts a process that removes container id once this process
// has exited: it waits for the end of a pipe whose writing end only this
// process holds. The reaper runs in a process group of its own, so an
// interrupt aimed at the test run does not stop it before it has cleaned up.
func reapOnExit(id string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sh", "-c", `cat >/dev/null; docker rm --force "$1" >/dev/null 2>&1`, "authport-reaper", id)
	cmd.Stdin = r
	cmd.SysProcAttr = reaperProcAttr()
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("starting the container reaper: %w", err)
	}
	r.Close()
	// The caller keeps w open until the process exits: its close is the
	// reaper's signal.
	go cmd.Wait() // collect the reaper if it ends first
	return w, nil
}

// waitReady waits until the container's log shows spec.log spec.logCount
// times, its published port takes a connection and spec.ready (if any)
// exits 0 inside it, polling every 250ms; it returns the published
// host:port.
func waitReady(ctx context.Context, id string, spec containerSpec) (string, error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		hostPort, err := containerReady(ctx, id, spec)
		if err == nil {
			return hostPort, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// containerReady is one readiness check of waitReady.
func containerReady(ctx context.Context, id string, spec containerSpec) (string, error) {
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "logs", id)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker logs: %w", err)
	}
	if n := strings.Count(logs.String(), spec.log); n < spec.logCount {
		return "", fmt.Errorf("log line %q seen %d of %d times", spec.log, n, spec.logCount)
	}
	published, err := docker(ctx, "port", id, spec.port)
	if err != nil {
		return "", err
	}
	hostPort, _, _ := strings.Cut(published, "\n") // one line per address family
	conn, err := net.DialTimeout("tcp", hostPort, time.Second)
	if err != nil {
		return "", err
	}
	conn.Close()
	if len(spec.ready) > 0 {
		if _, err := docker(ctx, append([]string{"exec", id}, spec.ready...)...); err != nil {
			return "", err
		}
	}
	return hostPort, nil
}

// containerSpec is how one backend's container is started and reached.
type containerSpec struct {
	port     string            // the exposed port, e.g. "5432/tcp"
	env      map[string]string // the container's environment
	args     []string          // arguments to the image's command
	log      string            // the log line that says the server is ready …
	logCount int               // … and how many times it must appear
	ready    []string          // a command run in the container that exits 0 once ready, if any
	address  func(hostPort string) string
}

// mongoInitScript initiates the single-node replica set rs0 unless it is
// initiated already, and exits 0 only once this node is the writable
// primary, so that it serves both to initiate and to wait.
const mongoInitScript = `try { rs.status() } catch (e) {
  rs.initiate({_id: "rs0", members: [{_id: 0, host: "localhost:27017"}]})
}
quit(db.hello().isWritablePrimary ? 0 : 1)`

// containerSpecFor returns how to start the container of the backend named
// name, and false for a backend that has none.
func containerSpecFor(name string) (containerSpec, bool) {
	switch name {
	case BackendPostgres:
		return containerSpec{
			port: "5432/tcp",
			env:  map[string]string{"POSTGRES_USER": "postgres", "POSTGRES_PASSWORD": "postgres", "POSTGRES_DB": "test"},
			// The image's first start runs a temporary server for
			// initialisation: the second "ready" is the real one.
			log: "database system is ready to accept connections", logCount: 2,
			address: func(hp string) string { return "postgres://postgres:postgres@" + hp + "/test?sslmode=disable" },
		}, true
	case BackendMySQL:
		return containerSpec{
			port: "3306/tcp",
			env:  map[string]string{"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD": "1", "MARIADB_DATABASE": "test"},
			// The initialisation server listens on port 0; the real one
			// announces port 3306.
			log: "port: 3306", logCount: 1,
			address: func(hp string) string { return "root@tcp(" + hp + ")/test" },
		}, true
	case BackendRedis:
		return containerSpec{
			port: "6379/tcp",
			log:  "Ready to accept connections", logCount: 1,
			address: func(hp string) string { return "redis://" + hp },
		}, true
	case BackendMongoDB:
		return containerSpec{
			port: "27017/tcp",
			args: []string{"--replSet", "rs0", "--bind_ip_all"},
			log:  "Waiting for connections", logCount: 1,
			ready: []string{"mongosh", "--quiet", "--eval", mongoInitScript},
			// The replica set's member is named localhost:27017, which
			// means nothing outside the container: connect directly.
			address: func(hp string) string { return "mongodb://" + hp + "/?directConnection=true" },
		}, true
	}
	return containerSpec{}, false
}
