// Package jwttest runs Auth.js's own code in Node for interop tests:
// [RunNode] runs a script that reads JSON on stdin and prints JSON, and
// [AuthJS] sends [Request]s to interop/authjs.mjs, the jwt module's
// harness of @auth/core/jwt (pinned in interop/package.json, installed
// with npm ci there). Without node or Auth.js a test skips, or fails when
// AUTHPORT_REQUIRE is "all" or names npm. The package uses the standard
// library only and is meant for tests.
package jwttest

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Request is one request to interop/authjs.mjs.
type Request struct {
	Op         string         `json:"op"`
	Secret     any            `json:"secret,omitempty"` // a string or a list
	Salt       string         `json:"salt,omitempty"`
	Claims     map[string]any `json:"claims,omitempty"`
	MaxAge     *int           `json:"maxAge,omitempty"` // seconds; nil: Auth.js's default
	Token      string         `json:"token,omitempty"`
	CookieName string         `json:"cookieName,omitempty"`
	Cookie     string         `json:"cookie,omitempty"`
	Value      string         `json:"value,omitempty"`
}

// Result is interop/authjs.mjs's answer to one [Request].
type Result struct {
	Token   string
	Claims  map[string]any
	Cookies []struct{ Name, Value string }
	Error   string // Auth.js's error, if the request failed
	Code    string // that error's code
}

// AuthJS runs reqs through Auth.js in one Node process: interop/authjs.mjs
// in the directory interop (the jwt module's interop folder, relative to
// the test's working directory). It returns one result a request, failing
// t otherwise; a request Auth.js refused has its Error set.
func AuthJS(t testing.TB, interop string, reqs ...Request) []Result {
	t.Helper()
	var res []Result
	RunNode(t, interop, "authjs.mjs", filepath.Join("node_modules", "@auth", "core", "jwt.js"), reqs, &res)
	if len(res) != len(reqs) {
		t.Fatalf("authjs.mjs answered %d results to %d requests", len(res), len(reqs))
	}
	return res
}

// AuthCoreEnv is the environment variable through which [RunNode] tells
// a script where Auth.js's @auth/core is installed: the directory
// [AuthCore] returns, as a file: URL ending in "/", for the script to
// import from by name instead of by a path into another module.
const AuthCoreEnv = "AUTHPORT_AUTHJS_CORE"

// AuthCore returns the directory of Auth.js's @auth/core that npm ci
// installed in the jwt module's interop folder (pinned in its
// package.json and lock file), found from this package's own source, so
// that a test of another module reaches it by package rather than by a
// relative path. The directory may not exist (npm ci not run); RunNode
// then skips.
func AuthCore() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("jwt", "interop", "node_modules", "@auth", "core")
	}
	return filepath.Join(filepath.Dir(file), "..", "interop", "node_modules", "@auth", "core")
}

// RunNode runs node on script (with the working directory dir, "" for the
// test's own) with in as JSON on stdin, and decodes what it prints into
// out. need is a file, relative to dir (or absolute), that must exist (a
// module the script imports). The script finds Auth.js's @auth/core
// through the AuthCoreEnv variable. Without node or need t skips, or fails when
// AUTHPORT_REQUIRE is all or names npm.
func RunNode(t testing.TB, dir, script, need string, in, out any) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		for name := range strings.SplitSeq(os.Getenv("AUTHPORT_REQUIRE"), ",") {
			// Compared without regard to case, as conformance/provision
			// reads AUTHPORT_REQUIRE.
			if name = strings.ToLower(strings.TrimSpace(name)); name == "all" || name == "npm" {
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
	core, err := filepath.Abs(AuthCore())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), AuthCoreEnv+"="+(&url.URL{Scheme: "file", Path: filepath.ToSlash(core) + "/"}).String())
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
