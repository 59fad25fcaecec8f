// Command containers readies this machine for the container path of the
// conformance suite (conformance/backends, which starts its databases
// through testcontainers-go) where no Docker engine and no image registry
// are at hand, only Debian's packages:
//
//  1. installs podman, runc and debootstrap with apt-get when missing;
//  2. writes a containers.conf with `default_ulimits = []` (the machine's
//     limits cannot be raised inside a container here) and hands it to
//     every podman it runs through CONTAINERS_CONF;
//  3. starts podman's Docker-compatible API service on
//     unix:///run/podman/podman.sock (runtime runc, cgroup manager
//     cgroupfs) unless the socket answers already;
//  4. builds localhost/debian:bookworm with debootstrap from the Debian
//     mirror apt uses, unless it exists;
//  5. builds the PostgreSQL, MariaDB and Redis images from Debian's
//     packages, and the MongoDB stand-in's image from the tools/mongostandin
//     binary (-mongostandin, default $AUTHPORT_MONGOSTANDIN_BIN), each tagged
//     with a hash of what went into it and reused while that hash is
//     unchanged;
//
// and prints, one per line, the NAME=VALUE settings the tests need:
// DOCKER_HOST, TESTCONTAINERS_RYUK_DISABLED, TESTCONTAINERS_HOST_OVERRIDE,
// AUTHPORT_{POSTGRES,MYSQL,REDIS,MONGODB}_IMAGE and AUTHPORT_IMAGES_STATUS.
// When all is there it only checks; otherwise the steps run in a process of
// its own while the settings are printed at once (the tags depend only on
// the inputs), and the status file AUTHPORT_IMAGES_STATUS names says
// "building", then "ready" or "failed: ...": conformance/backends waits for
// it, so a cold build overlaps with the rest of the test command. With
// -foreground the steps run before the settings are printed.
// scripts/services.sh runs it (its "containers" service) and turns the
// settings into export lines. Progress and the time of each step go to
// stderr (background.log for a background build); the logs of podman's
// service and of each build are in -state.
//
// It needs root, as the database services of scripts/services.sh do.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// images holds each image's Containerfile and entrypoint, one directory per
// image.
//
//go:embed images
var images embed.FS

// baseImage is the image every other one starts FROM.
const baseImage = "localhost/debian:bookworm"

// image is one database image this program builds.
type image struct {
	name string // directory under images/, and the tag's repository suffix
	env  string // the variable that hands the image's name to the tests
	// extra is a file copied into the build context as mongostandin; "" for none.
	extra string
}

// config is what the flags set.
type config struct {
	state        string
	socket       string
	mongostandin string
	foreground   bool
}

func main() {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	var cfg config
	flag.StringVar(&cfg.state, "state", filepath.Join(cache, "authport", "containers"),
		"`directory` for containers.conf, the status file, build contexts and logs")
	flag.StringVar(&cfg.socket, "socket", "/run/podman/podman.sock", "`path` of the Docker-compatible API socket")
	flag.StringVar(&cfg.mongostandin, "mongostandin", os.Getenv("AUTHPORT_MONGOSTANDIN_BIN"),
		"`path` of the tools/mongostandin binary to put in the MongoDB image")
	flag.BoolVar(&cfg.foreground, "foreground", false,
		"build what is missing before printing, instead of in a process of its own")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "containers: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	settings, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "containers: %v\n", err)
		os.Exit(1)
	}
	for _, s := range settings {
		fmt.Println(s)
	}
}

// logf reports progress on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "containers: "+format+"\n", args...)
}

// timed runs f and reports how long it took.
func timed(what string, f func() error) error {
	start := time.Now()
	err := f()
	if err == nil {
		logf("%s: %s", what, time.Since(start).Round(100*time.Millisecond))
	}
	return err
}

// The status file's contents: what a test waiting for the images reads.
// While building, the builder adds its pid: "building 1234".
const (
	statusBuilding = "building"
	statusReady    = "ready"
	statusFailed   = "failed: " // followed by the error
)

// plan is what run prepares: the images and their tags, which depend only
// on their inputs, so that they are known before anything is built.
type plan struct {
	images []image
	tags   []string
}

// run does the work of main and returns the NAME=VALUE settings to print.
// When something is missing it builds it in a process of its own (this
// program with -foreground, in a session of its own, its output in
// background.log), unless cfg.foreground: the settings are printed at once,
// and AUTHPORT_IMAGES_STATUS names the file that says "building", "ready" or
// "failed: ...", which conformance/backends waits on. The slow part of a
// cold start (debootstrap, apt-get in each image) then overlaps with the
// rest of the test command.
func run(ctx context.Context, cfg config) ([]string, error) {
	if cfg.mongostandin == "" {
		return nil, errors.New("no MongoDB stand-in binary: set AUTHPORT_MONGOSTANDIN_BIN or -mongostandin (eval \"$(scripts/services.sh)\" builds it from tools/mongostandin)")
	}
	if err := os.MkdirAll(cfg.state, 0o755); err != nil {
		return nil, err
	}
	p, err := newPlan(cfg)
	if err != nil {
		return nil, err
	}
	status := filepath.Join(cfg.state, "status")
	settings := []string{
		"DOCKER_HOST=unix://" + cfg.socket,
		// Ryuk, testcontainers' reaper, is an image from Docker Hub, out of
		// reach here; the tests terminate their containers themselves.
		"TESTCONTAINERS_RYUK_DISABLED=true",
		// Containers are reached only through ports published on 127.0.0.1.
		"TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1",
		"AUTHPORT_IMAGES_STATUS=" + status,
	}
	for i, img := range p.images {
		settings = append(settings, img.env+"="+p.tags[i])
	}
	conf := filepath.Join(cfg.state, "containers.conf")
	if err := os.WriteFile(conf, []byte(containersConf), 0o644); err != nil {
		return nil, err
	}
	// Every podman this process starts, the API service included, reads it.
	if err := os.Setenv("CONTAINERS_CONF", conf); err != nil {
		return nil, err
	}
	if !cfg.foreground {
		if ready(ctx, cfg, p) {
			logf("podman's API service answers on %s and every image is there", cfg.socket)
			return settings, writeStatus(status, statusReady)
		}
		if err := writeStatus(status, statusBuilding); err != nil {
			return nil, err
		}
		if err := spawn(cfg); err != nil {
			return nil, err
		}
		return settings, nil
	}
	// The foreground build, one at a time.
	unlock, err := lock(filepath.Join(cfg.state, "lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The pid lets a waiting test tell a build that died from one that runs.
	if err := writeStatus(status, fmt.Sprintf("%s %d", statusBuilding, os.Getpid())); err != nil {
		return nil, err
	}
	if err := build(ctx, cfg, p); err != nil {
		return nil, errors.Join(err, writeStatus(status, statusFailed+err.Error()))
	}
	return settings, writeStatus(status, statusReady)
}

// newPlan lists the images and computes their tags.
func newPlan(cfg config) (plan, error) {
	p := plan{images: []image{
		{name: "postgres", env: "AUTHPORT_POSTGRES_IMAGE"},
		{name: "mariadb", env: "AUTHPORT_MYSQL_IMAGE"},
		{name: "redis", env: "AUTHPORT_REDIS_IMAGE"},
		{name: "mongodb", env: "AUTHPORT_MONGODB_IMAGE", extra: cfg.mongostandin},
	}}
	base := baseInputs(aptMirror("/etc/apt", "bookworm"))
	for _, img := range p.images {
		hash, err := imageHash(base, img)
		if err != nil {
			return plan{}, err
		}
		p.tags = append(p.tags, "localhost/authport-"+img.name+":"+hash)
	}
	return p, nil
}

// baseInputs describes how the base image is made, for the images' hashes.
func baseInputs(mirror string) string {
	return "debootstrap --variant=minbase bookworm " + mirror
}

// ready reports whether podman's API answers and every image of p exists.
func ready(ctx context.Context, cfg config, p plan) bool {
	if _, err := exec.LookPath("podman"); err != nil || pingSocket(ctx, cfg.socket) != nil {
		return false
	}
	for _, tag := range p.tags {
		if !succeeds(ctx, podman("image", "exists", tag)...) {
			return false
		}
	}
	return true
}

// spawn starts this program with -foreground in a session of its own, its
// output in background.log.
func spawn(cfg config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(cfg.state, "background.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	c := exec.Command(self, "-foreground", "-state", cfg.state, "-socket", cfg.socket, "-mongostandin", cfg.mongostandin)
	c.Stdout, c.Stderr = log, log
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return fmt.Errorf("starting the build in the background: %w", err)
	}
	logf("building what is missing in the background (pid %d, log: %s); the tests wait for it", c.Process.Pid, logPath)
	return c.Process.Release()
}

// writeStatus replaces the status file's contents.
func writeStatus(path, status string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(status+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// lock takes an exclusive lock on path, waiting for another build to end.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// build installs, starts and builds whatever of p is missing.
func build(ctx context.Context, cfg config, p plan) error {
	if err := timed("podman, runc and debootstrap present", func() error { return ensurePackages(ctx) }); err != nil {
		return err
	}
	if err := timed("podman API service answers on "+cfg.socket, func() error { return ensureService(ctx, cfg) }); err != nil {
		return err
	}
	if err := timed(baseImage+" present", func() error { return ensureBase(ctx, cfg.state) }); err != nil {
		return err
	}
	// The builds spend most of their time downloading packages: they run at
	// once.
	errs := make([]error, len(p.images))
	var wg sync.WaitGroup
	for i, img := range p.images {
		wg.Go(func() {
			errs[i] = timed("image "+img.name+" present", func() error {
				return ensureImage(ctx, cfg.state, img, p.tags[i])
			})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// containersConf is podman's configuration for this machine: no default
// ulimits, which a container here may not raise.
const containersConf = `# Written by tools/containers.
[containers]
default_ulimits = []
`

// podman returns the podman command line for args, with the runtime and
// cgroup manager that work here.
func podman(args ...string) []string {
	return append([]string{"podman", "--runtime", "runc", "--cgroup-manager=cgroupfs"}, args...)
}

// command returns cmd[0] with the rest as arguments, its output going to
// log (stderr when nil).
func command(ctx context.Context, log io.Writer, cmd ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Stdin = nil
	if log == nil {
		log = os.Stderr
	}
	c.Stdout, c.Stderr = log, log
	c.WaitDelay = 10 * time.Second
	return c
}

// output runs cmd and returns its standard output; its standard error is
// part of the error.
func output(ctx context.Context, cmd ...string) (string, error) {
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(cmd, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// succeeds reports whether cmd exits with status 0.
func succeeds(ctx context.Context, cmd ...string) bool {
	return exec.CommandContext(ctx, cmd[0], cmd[1:]...).Run() == nil
}

// ensurePackages installs podman, runc and debootstrap from Debian's
// packages when a program of theirs is missing.
func ensurePackages(ctx context.Context) error {
	var missing []string
	for _, p := range []string{"podman", "runc", "debootstrap"} {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s missing, and installing it needs root: run as root, or apt-get install %s", strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	logf("installing %s from Debian's packages", strings.Join(missing, " "))
	if err := command(ctx, nil, "apt-get", "update", "-q", "-o", "DPkg::Lock::Timeout=300").Run(); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	install := append([]string{"apt-get", "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=300", "--no-install-recommends"}, missing...)
	c := command(ctx, nil, install...)
	c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if err := c.Run(); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(missing, " "), err)
	}
	return nil
}

// pingSocket reports whether a Docker-compatible API answers /_ping on the
// Unix socket at path.
func pingSocket(ctx context.Context, path string) error {
	client := &http.Client{
		Timeout: 3 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://podman/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/_ping: %s %q", resp.Status, body)
	}
	return nil
}

// ensureService starts podman's API service on cfg.socket unless something
// answers there. The service outlives this program (it is in a session of
// its own); its log is in cfg.state.
func ensureService(ctx context.Context, cfg config) error {
	if pingSocket(ctx, cfg.socket) == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(cfg.socket), 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(cfg.state, "podman-service.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	logf("starting podman system service on %s (log: %s)", cfg.socket, logPath)
	// Not CommandContext: the service must outlive this program.
	args := podman("system", "service", "--time=0", "unix://"+cfg.socket)
	c := exec.Command(args[0], args[1:]...)
	c.Stdout, c.Stderr = log, log
	// Not the caller's directory (a checkout, often a clean clone that is
	// deleted after its run): the containers' conmon inherits the service's
	// working directory, and once it is gone every container start fails
	// with "write child: broken pipe".
	c.Dir = cfg.state
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return fmt.Errorf("starting podman system service: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := pingSocket(ctx, cfg.socket)
		if err == nil {
			return nil
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("podman system service exited (%v); see %s", werr, logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("podman system service did not answer on %s within 60s (%v); see %s", cfg.socket, err, logPath)
		}
	}
}

// ensureBase builds localhost/debian:bookworm with debootstrap unless it
// exists.
func ensureBase(ctx context.Context, state string) error {
	if succeeds(ctx, podman("image", "exists", baseImage)...) {
		return nil
	}
	mirror := aptMirror("/etc/apt", "bookworm")
	root, err := os.MkdirTemp(state, "debootstrap-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	logPath := filepath.Join(state, "debootstrap.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	logf("building %s: debootstrap --variant=minbase bookworm from %s (log: %s)", baseImage, mirror, logPath)
	if err := command(ctx, log, "debootstrap", "--variant=minbase", "bookworm", root, mirror).Run(); err != nil {
		return fmt.Errorf("debootstrap bookworm from %s: %w; see %s", mirror, err, logPath)
	}
	tar := exec.CommandContext(ctx, "tar", "-C", root, "-c", ".")
	tar.Stderr = log
	imp := command(ctx, log, podman("import", "-", baseImage)...)
	pipe, err := tar.StdoutPipe()
	if err != nil {
		return err
	}
	imp.Stdin = pipe
	if err := tar.Start(); err != nil {
		return err
	}
	ierr := imp.Run()
	terr := tar.Wait()
	if err := errors.Join(ierr, terr); err != nil {
		return fmt.Errorf("importing %s into podman: %w; see %s", baseImage, err, logPath)
	}
	return nil
}

// aptMirror returns the Debian mirror apt uses for suite, read from the
// sources under dir (sources.list, sources.list.d/*.list and *.sources);
// deb.debian.org when none names the suite.
func aptMirror(dir, suite string) string {
	files := []string{filepath.Join(dir, "sources.list")}
	for _, pattern := range []string{"*.list", "*.sources"} {
		m, _ := filepath.Glob(filepath.Join(dir, "sources.list.d", pattern))
		slices.Sort(m)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var uri string
		if strings.HasSuffix(f, ".sources") {
			uri = mirrorIn822(string(data), suite)
		} else {
			uri = mirrorInList(string(data), suite)
		}
		if uri != "" {
			return uri
		}
	}
	return "http://deb.debian.org/debian"
}

// mirrorInList returns the URI of the first `deb` line of a one-line-style
// sources list whose suite is suite.
func mirrorInList(data, suite string) string {
	s := bufio.NewScanner(strings.NewReader(data))
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 3 || fields[0] != "deb" {
			continue
		}
		fields = fields[1:]
		if strings.HasPrefix(fields[0], "[") { // options: [arch=amd64 signed-by=...]
			for len(fields) > 0 && !strings.HasSuffix(fields[0], "]") {
				fields = fields[1:]
			}
			if len(fields) == 0 {
				continue
			}
			fields = fields[1:]
		}
		if len(fields) >= 2 && fields[1] == suite {
			return fields[0]
		}
	}
	return ""
}

// mirrorIn822 returns the first URI of the first stanza of a deb822-style
// .sources file with type deb whose suites include suite.
func mirrorIn822(data, suite string) string {
	for stanza := range strings.SplitSeq(data, "\n\n") {
		fields := map[string]string{}
		for line := range strings.SplitSeq(stanza, "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
				fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
			}
		}
		if enabled := strings.ToLower(fields["enabled"]); enabled == "no" {
			continue
		}
		uris := strings.Fields(fields["uris"])
		if len(uris) > 0 && slices.Contains(strings.Fields(fields["types"]), "deb") &&
			slices.Contains(strings.Fields(fields["suites"]), suite) {
			return uris[0]
		}
	}
	return ""
}

// imageHash returns the hash that names img's build: how the base image is
// made, the files of its directory under images/ and the extra file's
// content.
func imageHash(base string, img image) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "base %s\n", base)
	dir := path.Join("images", img.name)
	entries, err := fs.ReadDir(images, dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		data, err := fs.ReadFile(images, path.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s %d\n", e.Name(), len(data))
		h.Write(data)
	}
	if img.extra != "" {
		f, err := os.Open(img.extra)
		if err != nil {
			return "", fmt.Errorf("image %s: %w", img.name, err)
		}
		defer f.Close()
		fmt.Fprintf(h, "extra\n")
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureImage builds img as tag unless that image exists. Older builds of
// img are removed.
func ensureImage(ctx context.Context, state string, img image, tag string) error {
	if !succeeds(ctx, podman("image", "exists", tag)...) {
		if err := buildImage(ctx, state, img, tag); err != nil {
			return err
		}
	}
	// Older builds go, so that images do not pile up build after build.
	repo, _, _ := strings.Cut(tag, ":")
	list, err := output(ctx, podman("images", "--format", "{{.Repository}}:{{.Tag}}", repo)...)
	if err == nil {
		for old := range strings.FieldsSeq(list) {
			if old != tag {
				_ = command(ctx, io.Discard, podman("image", "rm", old)...).Run()
			}
		}
	}
	return nil
}

// buildImage builds img as tag, from a build context made of its files
// under images/ and its extra file.
func buildImage(ctx context.Context, state string, img image, tag string) error {
	dir, err := os.MkdirTemp(state, "build-"+img.name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := path.Join("images", img.name)
	entries, err := fs.ReadDir(images, src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := fs.ReadFile(images, path.Join(src, e.Name()))
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(e.Name(), ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, mode); err != nil {
			return err
		}
	}
	if img.extra != "" {
		if err := copyFile(img.extra, filepath.Join(dir, "mongostandin")); err != nil {
			return err
		}
	}
	logPath := filepath.Join(state, "build-"+img.name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	logf("building %s (log: %s)", tag, logPath)
	build := podman("build", "--network", "host", "-t", tag, "-f", filepath.Join(dir, "Containerfile"), dir)
	if err := command(ctx, log, build...).Run(); err != nil {
		return fmt.Errorf("podman build of %s: %w; see %s", tag, err, logPath)
	}
	return nil
}

// copyFile copies the executable src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
