package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// toolBinary returns the path of the binary built from the module
// tools/NAME (pkg is "." for its own main package, or a tool of its
// go.mod), building it first when the Go version, the build tags, or the
// module's go.mod, go.sum, top-level non-test Go files or images/ (what
// tools/containers embeds) changed since the cached build. Builds live in
// cacheDir(), one file per build named after a hash of its inputs. Other
// builds of NAME unused for a day are removed: a run of another tree (a
// worktree, a clone) may be using a newer one. The build log is
// logDir/NAME-build.log.
func (s *services) toolBinary(ctx context.Context, name, tags, pkg string) (string, error) {
	src := filepath.Join(s.repo, "tools", name)
	if !commandExists("go") {
		return "", fmt.Errorf("%s: building tools/%s needs Go on PATH (https://go.dev/dl/)", name, name)
	}
	goVersion, err := cmdSpec{args: []string{"go", "env", "GOVERSION"}, dir: src, env: []string{"GOWORK=off"}}.output(ctx)
	if err != nil {
		return "", err
	}
	hash, err := sourceHash(src, goVersion, tags)
	if err != nil {
		return "", err
	}
	cache := cacheDir()
	bin := filepath.Join(cache, name+"-"+hash)
	if fileExecutable(bin) {
		now := time.Now()
		_ = os.Chtimes(bin, now, now) // used: kept another day
		return bin, nil
	}
	logf("%s: building tools/%s (the first build takes a few minutes)", name, name)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	// Build beside the target and rename, so a half-written binary is never used.
	tmp := fmt.Sprintf("%s.tmp.%d", bin, os.Getpid())
	args := []string{"go", "build"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	f, err := os.OpenFile(filepath.Join(s.logDir, name+"-build.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return "", err
	}
	defer f.Close()
	build := cmdSpec{args: append(args, "-o", tmp, pkg), dir: src, env: []string{"GOWORK=off"}, timeout: 20 * time.Minute, stdout: f, stderr: f}
	if err := build.run(ctx); err != nil {
		return "", s.failLog(name+"-build", fmt.Sprintf("go build of tools/%s failed: %v", name, err))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(cache, name+"-*"))
	for _, o := range old {
		if st, err := os.Stat(o); err == nil && o != bin && time.Since(st.ModTime()) > 24*time.Hour {
			_ = os.Remove(o)
		}
	}
	return bin, nil
}

// sourceHash is the first 16 hex digits of the SHA-256 of what goes into a
// build of the module in dir (the same bytes for the same inputs as the
// shell version of this function hashed, so cached builds stay valid).
func sourceHash(dir, goVersion, tags string) (string, error) {
	files := []string{"go.mod", "go.sum"}
	top, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var names []string
	for _, f := range top {
		if !strings.HasSuffix(f, "_test.go") {
			names = append(names, "./"+filepath.Base(f))
		}
	}
	slices.Sort(names)
	var images []string
	_ = filepath.WalkDir(filepath.Join(dir, "images"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			images = append(images, "./"+rel)
		}
		return nil
	})
	slices.Sort(images)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", goVersion, tags)
	for _, f := range slices.Concat(files, names, images) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if os.IsNotExist(err) {
			continue // a module without requirements has no go.sum
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "== %s\n", f)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
