// Command containers readies this machine for the container path of the
// conformance suite (tests/backends, which starts its databases
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
// "building", then "ready" or "failed: ...": tests/backends waits for
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
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// "failed: ...", which tests/backends waits on. The slow part of a
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
