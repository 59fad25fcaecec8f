package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

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
