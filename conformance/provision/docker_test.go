package provision

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDocker puts a docker command on PATH that answers like an engine
// running one container, cid1, whose published port is port, and logs its
// arguments to the returned file. No Docker engine runs on the project's
// machines, so this is how the container path is tested here; the GitHub
// workflow runs it against a real engine.
func fakeDocker(t *testing.T, port string) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
echo "$*" >>"` + log + `"
case "$1" in
version) echo 27.0.0 ;;
run) echo cid1 ;;
logs) echo "Ready to accept connections" ;;
port) echo "127.0.0.1:` + port + `"; echo "[::1]:` + port + `" ;;
exec|rm) ;;
*) echo "unexpected: $*" >&2; exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func TestRunContainerWithTheDockerCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	log := fakeDocker(t, port)

	if err := detectDocker(dockerTimeout); err != nil {
		t.Fatalf("detectDocker with an engine answering: %v", err)
	}
	addr, reaper, err := runContainer(backendFor(BackendRedis))
	if err != nil {
		t.Fatal(err)
	}
	if want := "redis://127.0.0.1:" + port; addr != want {
		t.Errorf("address %q, want %q", addr, want)
	}
	calls, _ := os.ReadFile(log)
	var run string
	for _, line := range strings.Split(string(calls), "\n") {
		if strings.HasPrefix(line, "run ") {
			run = line
		}
	}
	for _, want := range []string{"run --detach --rm", "--publish 127.0.0.1::6379/tcp", "redis:7-alpine"} {
		if !strings.Contains(run, want) {
			t.Errorf("docker %s: missing %q", run, want)
		}
	}
	if strings.Contains(string(calls), "rm --force") {
		t.Fatal("the container was removed while the process still holds it")
	}

	// The reaper removes the container once the pipe closes, as it does
	// when the test process exits.
	reaper.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		calls, _ = os.ReadFile(log)
		if strings.Contains(string(calls), "rm --force cid1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reaper did not remove the container; calls:\n%s", calls)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestDetectDockerWithoutAnEngine(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if err := detectDocker(dockerTimeout); err == nil || !strings.Contains(err.Error(), "Cannot connect") {
		t.Errorf("detectDocker = %v, want the engine's answer", err)
	}
}
