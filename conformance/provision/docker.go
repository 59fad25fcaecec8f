package provision

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
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
	once sync.Once
	addr string
	err  error
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
	s.once.Do(func() { s.addr, s.err = runContainer(b) })
	return s.addr, s.err
}

// detectDocker reports whether a Docker engine answers within timeout. It
// asks from a goroutine so that a call that ignores its context cannot hold
// the test past the timeout, and turns a panic of the Docker libraries into
// an error.
func detectDocker(timeout time.Duration) error {
	done := make(chan error, 1) // buffered: a late answer must not block the goroutine
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("docker detection panicked: %v", r)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		p, err := testcontainers.NewDockerProvider()
		if err != nil {
			done <- err
			return
		}
		done <- p.Health(ctx) // Health closes p
	}()
	timer := time.NewTimer(timeout + time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("no answer within %v", timeout)
	}
}

// runContainer starts b's container and returns the address a client of b
// connects to. On an error it removes what it started.
func runContainer(b backend) (addr string, err error) {
	defer func() {
		if r := recover(); r != nil {
			addr, err = "", fmt.Errorf("testcontainers panicked: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	spec, ok := containerSpecFor(b.name)
	if !ok {
		return "", fmt.Errorf("no container for backend %s", b.name)
	}
	c, err := testcontainers.Run(ctx, b.image,
		testcontainers.WithExposedPorts(spec.port),
		testcontainers.WithEnv(spec.env),
		testcontainers.WithCmdArgs(spec.args...),
		testcontainers.WithWaitStrategyAndDeadline(startTimeout, spec.wait...),
	)
	if err != nil {
		return "", errors.Join(err, testcontainers.TerminateContainer(c))
	}
	hostPort, err := c.PortEndpoint(ctx, spec.port, "")
	if err != nil {
		return "", errors.Join(err, testcontainers.TerminateContainer(c))
	}
	return spec.address(hostPort), nil
}

// containerSpec is how one backend's container is started and reached.
type containerSpec struct {
	port    string            // the exposed port, e.g. "5432/tcp"
	env     map[string]string // the container's environment
	args    []string          // arguments to the image's command
	wait    []wait.Strategy   // when the server is ready, in order
	address func(hostPort string) string
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
			wait: []wait.Strategy{
				// The image's first start runs a temporary server for
				// initialisation: the second "ready" is the real one.
				wait.ForLog("database system is ready to accept connections").WithOccurrence(2),
				wait.ForListeningPort("5432/tcp"),
			},
			address: func(hp string) string { return "postgres://postgres:postgres@" + hp + "/test?sslmode=disable" },
		}, true
	case BackendMySQL:
		return containerSpec{
			port: "3306/tcp",
			env:  map[string]string{"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD": "1", "MARIADB_DATABASE": "test"},
			wait: []wait.Strategy{
				// The initialisation server listens on port 0; the real
				// one announces port 3306.
				wait.ForLog("port: 3306"),
				wait.ForListeningPort("3306/tcp"),
			},
			address: func(hp string) string { return "root@tcp(" + hp + ")/test" },
		}, true
	case BackendRedis:
		return containerSpec{
			port: "6379/tcp",
			wait: []wait.Strategy{
				wait.ForLog("Ready to accept connections"),
				wait.ForListeningPort("6379/tcp"),
			},
			address: func(hp string) string { return "redis://" + hp },
		}, true
	case BackendMongoDB:
		return containerSpec{
			port: "27017/tcp",
			args: []string{"--replSet", "rs0", "--bind_ip_all"},
			wait: []wait.Strategy{
				wait.ForLog("Waiting for connections"),
				wait.ForListeningPort("27017/tcp"),
				wait.ForExec([]string{"mongosh", "--quiet", "--eval", mongoInitScript}).
					WithPollInterval(500 * time.Millisecond).
					WithStartupTimeout(2 * time.Minute),
			},
			// The replica set's member is named localhost:27017, which
			// means nothing outside the container: connect directly.
			address: func(hp string) string { return "mongodb://" + hp + "/?directConnection=true" },
		}, true
	}
	return containerSpec{}, false
}
