package backends

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/mariadb"
	"github.com/testcontainers/testcontainers-go/modules/mongodb"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/authport/authport/conformance/backendtable"
	"github.com/authport/authport/conformance/provision"
)

// requireName is the AUTHPORT_REQUIRE name that makes a missing container
// engine fail these tests ("all" does too).
const requireName = "containers"

// backend is one database the suite runs on through a container.
type backend struct {
	name         string // the conformance suite's backend name, and the subtest's
	adapter      string // the adapter's directory, from the repository root
	urlEnv       string // the variable through which the adapter's tests get the server
	imageEnv     string // the variable naming the image
	defaultImage string // the official image, when imageEnv is unset
	// start starts a container of image and returns the server's address,
	// in the form urlEnv takes. The container ends with t.
	start func(ctx context.Context, t *testing.T, image string) (string, error)
}

// starters start each backend of the table that has a container image
// (conformance/backendtable), by name.
func starters() map[string]func(ctx context.Context, t *testing.T, image string) (string, error) {
	return map[string]func(ctx context.Context, t *testing.T, image string) (string, error){
		"postgres": startPostgres,
		"mysql":    startMariaDB,
		"redis":    startRedis,
		"mongodb":  startMongoDB,
	}
}

// backendsUnderTest returns the backends of the table that have a
// container image, in table order.
func backendsUnderTest() ([]backend, error) {
	table, err := backendtable.Read()
	if err != nil {
		return nil, err
	}
	start := starters()
	var bs []backend
	for _, b := range table {
		if b.Container == nil {
			continue
		}
		s := start[b.Name]
		if s == nil {
			return nil, fmt.Errorf("%s has a container image (%s) in %s but this module has no starter for it: add one to starters", b.Name, b.Container.Image, backendtable.Path)
		}
		bs = append(bs, backend{
			name: b.Name, adapter: b.Module, urlEnv: b.Env,
			imageEnv: b.Container.ImageEnv, defaultImage: b.Container.Image, start: s,
		})
	}
	return bs, nil
}

// localImage reports whether image was built on this machine by
// tools/containers (from Debian's packages) rather than pulled.
func localImage(image string) bool { return strings.HasPrefix(image, "localhost/") }

func startPostgres(ctx context.Context, t *testing.T, image string) (string, error) {
	// The official image starts the server twice (once to initialise, on a
	// Unix socket only), so "ready to accept connections" is logged twice;
	// tools/containers' image starts it once.
	ready := 2
	if localImage(image) {
		ready = 1
	}
	c, err := postgres.Run(ctx, image,
		postgres.WithDatabase("test"), postgres.WithUsername("postgres"), postgres.WithPassword("postgres"),
		testcontainers.WithWaitStrategyAndDeadline(2*time.Minute,
			wait.ForLog("database system is ready to accept connections").WithOccurrence(ready),
			wait.ForListeningPort("5432/tcp")),
	)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		return "", err
	}
	return c.ConnectionString(ctx, "sslmode=disable")
}

func startMariaDB(ctx context.Context, t *testing.T, image string) (string, error) {
	opts := []testcontainers.ContainerCustomizer{
		mariadb.WithUsername("root"), mariadb.WithPassword(""), mariadb.WithDatabase("test"),
	}
	if localImage(image) {
		// Debian's mariadbd does not say "mariadb.org binary distribution",
		// which the module waits for.
		opts = append(opts, testcontainers.WithWaitStrategyAndDeadline(2*time.Minute,
			wait.ForLog("ready for connections"), wait.ForListeningPort("3306/tcp")))
	}
	c, err := mariadb.Run(ctx, image, opts...)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		return "", err
	}
	return c.ConnectionString(ctx, "parseTime=true")
}

func startRedis(ctx context.Context, t *testing.T, image string) (string, error) {
	c, err := redis.Run(ctx, image)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		return "", err
	}
	return c.ConnectionString(ctx)
}

func startMongoDB(ctx context.Context, t *testing.T, image string) (string, error) {
	var opts []testcontainers.ContainerCustomizer
	if localImage(image) {
		// The stand-in logs nothing the module waits for, and has no
		// replica set (nor mongosh to initiate one).
		opts = append(opts, testcontainers.WithWaitStrategyAndDeadline(2*time.Minute, wait.ForListeningPort("27017/tcp")))
	} else {
		opts = append(opts, mongodb.WithReplicaSet("rs0"))
	}
	c, err := mongodb.Run(ctx, image, opts...)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		return "", err
	}
	uri, err := c.ConnectionString(ctx)
	if err != nil {
		return "", err
	}
	return directConnection(uri)
}

// directConnection rewrites a MongoDB URI to talk to its one host directly:
// a replica set's member is named by the container's own address, which
// the tests may not reach; they reach the published port only.
func directConnection(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("MongoDB URI %q: %w", uri, err)
	}
	q := u.Query()
	q.Del("replicaSet")
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// TestConformanceContainers runs the conformance suite of the PostgreSQL,
// MariaDB, Redis and MongoDB adapters, each on a container of its database
// started through testcontainers-go, whatever AUTHPORT_*_URL says: the
// adapters' own runs use those servers, this one proves the container path.
// The four run in parallel.
func TestConformanceContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts containers")
	}
	waitForImages(t)
	engine(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command runs the adapters' tests: %v", err)
	}
	bs, err := backendsUnderTest()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			// The runs wait on their databases more than they compute: at
			// once, they take about as long as the longest.
			t.Parallel()
			image := os.Getenv(b.imageEnv)
			if image == "" {
				image = b.defaultImage
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			started := time.Now()
			addr, err := b.start(ctx, t, image)
			if err != nil {
				t.Fatalf("starting %s (%s=%s): %v", image, b.imageEnv, image, err)
			}
			t.Logf("%s: %s started in %v: %s", b.name, image, time.Since(started).Round(100*time.Millisecond), addr)
			runAdapterSuite(t, gocmd, root, b, addr)
		})
	}
}

// imagesStatusEnv names the status file of tools/containers' build of the
// local images: "building", then "ready" or "failed: <error>".
const imagesStatusEnv = "AUTHPORT_IMAGES_STATUS"

// waitForImages waits, when AUTHPORT_IMAGES_STATUS names a status file, for
// the build of the local images (and podman's API service) that
// tools/containers runs in the background, and fails t if it failed or
// takes over 20 minutes.
func waitForImages(t *testing.T) {
	t.Helper()
	path := os.Getenv(imagesStatusEnv)
	if path == "" {
		return
	}
	started := time.Now()
	deadline := started.Add(20 * time.Minute)
	for {
		status, err := imagesStatus(path)
		switch {
		case err != nil:
			t.Fatalf("%s=%s: %v (eval \"$(scripts/services.sh)\" writes it)", imagesStatusEnv, path, err)
		case status == "ready":
			if waited := time.Since(started); waited > time.Second {
				t.Logf("waited %v for tools/containers to build the images", waited.Round(time.Second))
			}
			return
		case !strings.HasPrefix(status, "building"):
			t.Fatalf("tools/containers could not build the images: %s (logs in %s)", status, filepath.Dir(path))
		case !builderAlive(status):
			t.Fatalf("tools/containers' build (%s) ended without a result; see %s", status, filepath.Join(filepath.Dir(path), "background.log"))
		case time.Now().After(deadline):
			t.Fatalf("tools/containers has been building the images for 20 minutes; see %s", filepath.Join(filepath.Dir(path), "background.log"))
		}
		time.Sleep(2 * time.Second)
	}
}

// builderAlive reports whether the builder a "building <pid>" status names
// still runs; a plain "building" (the builder has not started yet) counts as
// alive.
func builderAlive(status string) bool {
	pid, ok := strings.CutPrefix(status, "building ")
	if _, err := os.Stat("/proc/self"); !ok || err != nil { // no pid, or no /proc to look in
		return true
	}
	_, err := os.Stat(filepath.Join("/proc", strings.TrimSpace(pid)))
	return err == nil
}

// imagesStatus reads a status file of tools/containers.
func imagesStatus(path string) (string, error) {
	data, err := os.ReadFile(path)
	return strings.TrimSpace(string(data)), err
}

// engine skips t, or fails it when AUTHPORT_REQUIRE asks for containers,
// unless a container engine answers.
func engine(t *testing.T) {
	t.Helper()
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		p, err := testcontainers.ProviderDefault.GetProvider()
		if err != nil {
			return err
		}
		defer p.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := p.Health(ctx); err != nil {
			return err
		}
		// Every container start makes a provider of its own (the
		// default one: podman's when DOCKER_HOST names podman.sock), and
		// each creates testcontainers' default network when it finds
		// none: the parallel subtests raced to create it, and podman
		// answers the loser with an error testcontainers does not take
		// for "already exists" (a CI run failed so). GetGatewayIP creates
		// it once here, with the same kind of provider, before the
		// subtests; its own answer is not needed.
		if dp, ok := p.(*testcontainers.DockerProvider); ok {
			if _, err := dp.GetGatewayIP(ctx); err != nil {
				t.Logf("the default network of testcontainers (its gateway: %v)", err)
			}
		}
		return nil
	}()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("no container engine answers (%v): run Docker, or podman's API service with DOCKER_HOST set "+
		"(eval \"$(scripts/services.sh)\" starts one and builds the images; see conformance/README.md)", err)
	if provision.Required(requireName) {
		t.Fatalf("%s (%s=%s)", msg, provision.RequireEnv, os.Getenv(provision.RequireEnv))
	}
	t.Skip(msg)
}

// ruleLine matches the result line of one rule of the suite on a backend:
// --- PASS: TestConformance/<backend>/<method>/<rule> (0.01s).
var ruleLine = regexp.MustCompile(`--- (PASS|FAIL|SKIP): TestConformance/([^/ ]+)/[^/ ]+/\S+`)

// runAdapterSuite runs the TestConformance of b's adapter on b's subtest
// only, with the server at addr, and fails t unless every rule ran and none
// failed. The whole output goes to $AUTHPORT_LOG_DIR/containers-<name>.txt
// when AUTHPORT_LOG_DIR is set.
func runAdapterSuite(t *testing.T, gocmd, root string, b backend, addr string) {
	args := []string{"test", "-count=1", "-v", "-timeout=10m"}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "-run", "^TestConformance$/^"+regexp.QuoteMeta(b.name)+"$", ".")
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gocmd, args...)
	cmd.Dir = filepath.Join(root, filepath.FromSlash(b.adapter))
	// The backend is required: its server is right there, so a skip of the
	// whole backend is a failure.
	// The adapter's tests run as the test command runs them, in the
	// workspace: this module's own GOWORK=off is not passed on.
	cmd.Env = append(withoutGOWORK(os.Environ()), b.urlEnv+"="+addr, provision.RequireEnv+"="+b.name)
	started := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(started).Round(100 * time.Millisecond)

	if dir := os.Getenv("AUTHPORT_LOG_DIR"); dir != "" {
		log := filepath.Join(dir, "containers-"+b.name+".txt")
		if werr := os.WriteFile(log, out, 0o644); werr != nil {
			t.Errorf("saving the output: %v", werr)
		} else {
			t.Logf("output of go test %s: %s", strings.Join(args[1:], " "), log)
		}
	}
	counts, failures := summarize(out, b.name)
	t.Logf("%s through testcontainers: %d rules passed, %d failed, %d skipped, in %v (%s in %s)",
		b.name, counts["PASS"], counts["FAIL"], counts["SKIP"], took, "TestConformance/"+b.name, b.adapter)
	if err != nil || !succeeded(counts) {
		t.Errorf("go test %s in %s with %s=%s: %v\n%s", strings.Join(args[1:], " "), b.adapter, b.urlEnv, addr, err,
			tail(failures, out))
	}
}

// withoutGOWORK returns env without its GOWORK setting.
func withoutGOWORK(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "GOWORK=") })
}

// summarize counts the rules of backend passed, failed and skipped (keys
// PASS, FAIL, SKIP) in the output of go test -v, and returns the lines that
// say what failed: results of failed tests, panics and test log lines.
func summarize(out []byte, backend string) (map[string]int, []string) {
	counts := map[string]int{}
	var failures []string
	s := bufio.NewScanner(bytes.NewReader(out))
	s.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for s.Scan() {
		line := s.Text()
		if m := ruleLine.FindStringSubmatch(line); m != nil && m[2] == backend {
			counts[m[1]]++
		}
		if len(failures) < 60 && (strings.Contains(line, "--- FAIL") || strings.Contains(line, "panic:") ||
			strings.Contains(line, "_test.go:")) {
			failures = append(failures, line)
		}
	}
	return counts, failures
}

// succeeded reports whether a run with these counts passed: some rule
// passed and none failed. (A run where the backend itself was skipped has
// no rule at all.)
func succeeded(counts map[string]int) bool { return counts["PASS"] > 0 && counts["FAIL"] == 0 }

// tail returns the failure lines, or the end of the output when there are
// none.
func tail(failures []string, out []byte) string {
	if len(failures) > 0 {
		return strings.Join(failures, "\n")
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// TestBackendsUnderTest: every backend of the table with a container image
// has a starter here, and every starter a row.
func TestBackendsUnderTest(t *testing.T) {
	bs, err := backendsUnderTest()
	if err != nil {
		t.Fatal(err)
	}
	start := starters()
	for _, b := range bs {
		delete(start, b.name)
	}
	for name := range start {
		t.Errorf("starter %s has no row with a container image in %s", name, backendtable.Path)
	}
	if len(bs) == 0 {
		t.Error("no backend has a container image")
	}
}

func TestDirectConnection(t *testing.T) {
	for in, want := range map[string]string{
		"mongodb://127.0.0.1:32768/?replicaSet=rs0": "mongodb://127.0.0.1:32768/?directConnection=true",
		"mongodb://127.0.0.1:32768/":                "mongodb://127.0.0.1:32768/?directConnection=true",
		"mongodb://u:p@h:1/?replicaSet=rs0&w=1":     "mongodb://u:p@h:1/?directConnection=true&w=1",
	} {
		if got, err := directConnection(in); err != nil || got != want {
			t.Errorf("directConnection(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := directConnection("mongodb://[::1"); err == nil {
		t.Error("directConnection of a broken URI: no error")
	}
}

func TestSummarize(t *testing.T) {
	out := []byte(`=== RUN   TestConformance/redis/createUser/a
--- PASS: TestConformance/redis/createUser/a (0.01s)
        --- PASS: TestConformance/redis/getUser/b (0.00s)
        --- SKIP: TestConformance/redis/purgeExpired/c (0.00s)
        --- FAIL: TestConformance/redis/linkAccount/d (0.00s)
            rules_account.go:10: want x
        --- PASS: TestConformance/redis-cluster/getUser/b (0.00s)
--- FAIL: TestConformance/redis (0.02s)
`)
	counts, failures := summarize(out, "redis")
	if counts["PASS"] != 2 || counts["SKIP"] != 1 || counts["FAIL"] != 1 {
		t.Errorf("counts = %v, want 2 passed, 1 skipped, 1 failed (redis-cluster's not counted)", counts)
	}
	if len(failures) != 2 || !strings.Contains(failures[0], "linkAccount") {
		t.Errorf("failures = %q", failures)
	}
	if succeeded(counts) {
		t.Error("a run with a failed rule succeeded")
	}
	skipped, _ := summarize([]byte("--- SKIP: TestConformance/redis (0.00s)\n"), "redis")
	if succeeded(skipped) {
		t.Error("a run with the backend skipped succeeded")
	}
	if !succeeded(map[string]int{"PASS": 3, "SKIP": 1}) {
		t.Error("a run with passes and skips failed")
	}
}

func TestImagesStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	for status, want := range map[string]string{
		"ready\n":    "",
		"building\n": "", // not waited for here
		"failed: podman build of x: exit status 1\n": "failed: podman build of x",
	} {
		if err := os.WriteFile(path, []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := imagesStatus(path)
		if err != nil || (want != "" && !strings.HasPrefix(got, want)) || got != strings.TrimSpace(status) {
			t.Errorf("imagesStatus of %q = %q, %v", status, got, err)
		}
	}
	if _, err := imagesStatus(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing status file: no error")
	}
	if !builderAlive("building") || !builderAlive(fmt.Sprintf("building %d", os.Getpid())) {
		t.Error("a running builder counted as dead")
	}
	if builderAlive("building 2147483647") {
		t.Error("a builder that does not exist counted as alive")
	}
}
