package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be -instructions' child as the bench's
// binary is (runInstructions starts os.Executable()).
func TestMain(m *testing.M) {
	if spec := os.Getenv(instrServeEnv); spec != "" {
		if err := serveInstrSide(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestInstructions runs -instructions on a small scale (where valgrind is
// installed): both children start under callgrind, answer byte for byte
// alike, and every round counts instructions on both sides, within a
// plausible range of a Go HTTP server's request.
func TestInstructions(t *testing.T) {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	if testing.Short() {
		t.Skip("slow: programs under callgrind")
	}
	reachable(t, "postgres")
	t.Setenv("GOGC", "off")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := shortConfig()
	cfg.users, cfg.rounds = 20, 2
	rep := &report{Skipped: map[string]string{}}
	var out bytes.Buffer
	if err := runInstructions(ctx, cfg, []string{"postgres", "jwt"}, 20, []int{2}, t.TempDir(), &out, rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Instructions) != 2 || len(rep.Skipped) != 0 {
		t.Fatalf("rows %+v, skipped %v", rep.Instructions, rep.Skipped)
	}
	for _, r := range rep.Instructions {
		if len(r.Handler) != 2 || len(r.Limit) != 2 {
			t.Errorf("%s: rounds %v and %v, want 2 each", r.Backend, r.Handler, r.Limit)
		}
		for _, v := range append(r.Handler, r.Limit...) {
			if v < 10_000 || v > 5_000_000 {
				t.Errorf("%s: %.0f instructions per request, out of range", r.Backend, v)
			}
		}
		if r.Ratio <= 0 {
			t.Errorf("%s: ratio %v", r.Backend, r.Ratio)
		}
	}
	if !strings.Contains(out.String(), "| postgres ") || !strings.Contains(out.String(), "| jwt ") {
		t.Errorf("table:\n%s", out.String())
	}
}
