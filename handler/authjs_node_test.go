package handler

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RunAuthJS runs node on script (with the working directory dir, "" for
// this one) with in as JSON on stdin, and decodes what it prints into out.
// The scripts use Auth.js from ../jwt/interop/node_modules; need is a file
// there, relative to dir, that must exist. Without node or need the test
// skips, or fails when AUTHPORT_REQUIRE is all or names npm. (Exported
// from a test file for the handler_test package.)
func RunAuthJS(t testing.TB, dir, script, need string, in, out any) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		for name := range strings.SplitSeq(os.Getenv("AUTHPORT_REQUIRE"), ",") {
			if name = strings.TrimSpace(name); name == "all" || name == "npm" {
				t.Fatalf("%s (AUTHPORT_REQUIRE=%s)", why, os.Getenv("AUTHPORT_REQUIRE"))
			}
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed: install Node.js 20+, then run npm ci in jwt/interop")
	}
	if _, err := os.Stat(filepath.Join(dir, need)); err != nil {
		missing(filepath.Base(need) + " of Auth.js is not installed: run npm ci in jwt/interop")
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, script)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("%s answered %s (%v)", script, stdout, err)
	}
}
