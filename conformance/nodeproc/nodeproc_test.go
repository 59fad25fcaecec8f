package nodeproc_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
)

// echo.mjs answers {"op":"echo","value":v} with v after a delay that makes
// replies come back out of order, {"op":"fail"} with an error and a code,
// {"op":"junk"} with a line that is not JSON and {"op":"exit"} by exiting.
const echo = `import { createInterface } from "node:readline"
const write = (m) => process.stdout.write(JSON.stringify(m) + "\n")
createInterface({ input: process.stdin }).on("line", (line) => {
  const req = JSON.parse(line)
  switch (req.op) {
    case "echo":
      setTimeout(() => write({ id: req.id, result: req.value }), (req.value % 5) * 3)
      break
    case "fail":
      write({ id: req.id, error: "it failed", code: "E_FAIL" })
      break
    case "junk":
      process.stdout.write("not json\n")
      break
    case "exit":
      process.stderr.write("bye from node\n")
      process.exit(0)
  }
})
`

func start(t *testing.T) *nodeproc.Proc {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.mjs"), []byte(echo), 0o600); err != nil {
		t.Fatal(err)
	}
	return nodeproc.Start(t, nodeproc.Config{Dir: dir, Script: "echo.mjs"})
}

func TestConcurrentCalls(t *testing.T) {
	p := start(t)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			var got int
			if err := p.Do(map[string]any{"op": "echo", "value": i}, &got); err != nil {
				t.Error(err)
			} else if got != i {
				t.Errorf("call %d: got %d", i, got)
			}
		})
	}
	wg.Wait()
}

func TestErrorReply(t *testing.T) {
	p := start(t)
	err := p.Do(map[string]any{"op": "fail"}, nil)
	var e *nodeproc.Error
	if !errors.As(err, &e) || e.Message != "it failed" || e.Code != "E_FAIL" {
		t.Fatalf("got %v, want the script's error with its code", err)
	}
	// The process still answers after an error.
	var got int
	if err := p.Do(map[string]any{"op": "echo", "value": 7}, &got); err != nil || got != 7 {
		t.Fatalf("echo after an error: %d, %v", got, err)
	}
}

func TestDecodeError(t *testing.T) {
	p := start(t)
	var s struct{ X int }
	if err := p.Do(map[string]any{"op": "echo", "value": 3}, &s); err == nil {
		t.Fatal("decoding 3 into a struct succeeded")
	}
}

func TestJunkLineEndsCalls(t *testing.T) {
	p := start(t)
	pending := p.Send(map[string]any{"op": "junk"})
	if _, err := p.Wait(pending); err == nil || !strings.Contains(err.Error(), `"not json"`) {
		t.Fatalf("got %v, want an error quoting the line", err)
	}
	if err := p.Do(map[string]any{"op": "echo", "value": 1}, nil); err == nil {
		t.Fatal("a call after a protocol error succeeded")
	}
}

func TestExitShowsStderr(t *testing.T) {
	p := start(t)
	_, err := p.Wait(p.Send(map[string]any{"op": "exit"}))
	if err == nil || !strings.Contains(err.Error(), "echo.mjs ended") {
		t.Fatalf("got %v, want an error saying the script ended", err)
	}
	if err := p.Do(map[string]any{"op": "echo", "value": 1}, nil); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Fatalf("a call after the exit: %v", err)
	}
	// stderr is copied by its own goroutine: it may land just after stdout
	// closes, so wait for it (bounded; this is not a timing test).
	for i := 0; !strings.Contains(p.Stderr(), "bye from node"); i++ {
		if i == 500 {
			t.Fatalf("stderr %q lacks the script's message", p.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCheckSkipsWhenMissing(t *testing.T) {
	if provision.Required("npm") {
		// Check would fail the test, by design; that path is the same call.
		t.Setenv(provision.RequireEnv, "")
	}
	dir := t.TempDir()
	var skipped bool
	t.Run("missing package", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		nodeproc.Check(t, dir, "@auth/core/jwt.js")
		t.Error("Check returned although node_modules is missing")
	})
	if !skipped {
		t.Fatal("Check did not skip")
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@auth", "core"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", "@auth", "core", "jwt.js"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("present", func(t *testing.T) {
		if node := nodeproc.Check(t, dir, "@auth/core/jwt.js"); node == "" {
			t.Error("no node path")
		}
	})
}
