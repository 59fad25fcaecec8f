package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplicationFromClone is the README's "before the first release" path:
// `release proxy DIR` serves this working tree, and an application module
// outside the repository (GOWORK=off, no replace lines) gets handler, core
// and the bbolt adapter with `go get`, tidies its go.mod and builds the
// README's quickstart program (examples/quickstart/main.go) unchanged.
func TestApplicationFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an application from a local proxy")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r, err := loadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	proxyDir := filepath.Join(work, "proxy")
	var stdout, stderr bytes.Buffer
	if err := proxyCommand(r, proxyDir, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "export GOPROXY=file://"+filepath.ToSlash(proxyDir)) ||
		!strings.Contains(stdout.String(), "export GONOSUMDB=github.com/authport/authport\n") {
		t.Fatalf("release proxy printed:\n%s", stdout.String())
	}
	t.Log(stderr.String())

	// The same variables, with a module cache of the test's own so that
	// this tree's v0.1.0 never lands in the shared one.
	modCache := filepath.Join(work, "modcache")
	env, err := consumerEnv(proxyDir, modCache)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		run(context.Background(), work, []string{"GOMODCACHE=" + modCache, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, "go", "clean", "-modcache")
	})
	app := filepath.Join(work, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	version, _ := r.Version()
	ctx := t.Context()
	for _, args := range [][]string{
		{"mod", "init", "example.com/app"},
		{"get", repoPrefix + "handler@" + version, repoPrefix + "core@" + version, repoPrefix + "adapters/bbolt@" + version},
		{"mod", "tidy"},
		{"build", "-o", filepath.Join(work, "app.bin"), "."},
	} {
		if out, err := run(ctx, app, env, "go", args...); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	gomod, _ := os.ReadFile(filepath.Join(app, "go.mod"))
	if strings.Contains(string(gomod), "replace") || !strings.Contains(string(gomod), repoPrefix+"handler "+version) {
		t.Errorf("the application's go.mod:\n%s", gomod)
	}
}
