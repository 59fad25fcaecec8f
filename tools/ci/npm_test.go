package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The cache key changes with each of its inputs and with nothing else.
func TestNPMKey(t *testing.T) {
	const env = "node v20.20.2 linux x64 abi115 glibc 2.36\nnpm 11.19.1"
	manifest, lock := []byte(`{"name":"x"}`), []byte(`{"lockfileVersion":3}`)
	base := npmKey(env, manifest, lock)
	if !isNPMKey(base) {
		t.Fatalf("key %q does not have the form of a key", base)
	}
	if again := npmKey(env, slices.Clone(manifest), slices.Clone(lock)); again != base {
		t.Errorf("the same inputs gave %s, then %s", base, again)
	}
	for name, k := range map[string]string{
		"another lock file":     npmKey(env, manifest, []byte(`{"lockfileVersion":2}`)),
		"another package.json":  npmKey(env, []byte(`{"name":"y"}`), lock),
		"another Node.js":       npmKey(strings.Replace(env, "v20.20.2", "v22.1.0", 1), manifest, lock),
		"another npm":           npmKey(strings.Replace(env, "11.19.1", "10.9.0", 1), manifest, lock),
		"another architecture":  npmKey(strings.Replace(env, "x64", "arm64", 1), manifest, lock),
		"bytes moved across":    npmKey(env, []byte(`{"name":"x"}{`), []byte(`"lockfileVersion":3}`)),
		"no package.json":       npmKey(env, nil, lock),
		"the environment empty": npmKey("", manifest, lock),
	} {
		if k == base {
			t.Errorf("%s gave the same key", name)
		}
	}
}

// fakeNPM stands in for npm ci: it writes a small node_modules (a file
// holding the lock file, an executable, a relative symlink to it) and
// counts its runs, the concurrent ones too.
type fakeNPM struct {
	mu                 sync.Mutex
	runs, running, max int
	delay              time.Duration
	// fail: the directories (base names) whose install fails, after
	// writing half a node_modules.
	fail map[string]bool
}

func (f *fakeNPM) install(ctx context.Context, dir string, out io.Writer) error {
	f.mu.Lock()
	f.runs++
	f.running++
	f.max = max(f.max, f.running)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	time.Sleep(f.delay)
	io.WriteString(out, "fake npm ci in "+dir+"\n")
	nm := filepath.Join(dir, "node_modules")
	if err := os.RemoveAll(nm); err != nil {
		return err
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(nm, "pkg", "bin"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(nm, "pkg", "lock.json"), lock, 0o644); err != nil {
		return err
	}
	if f.fail[filepath.Base(dir)] {
		io.WriteString(out, "npm error the reason it failed\n")
		return errors.New("exit status 1")
	}
	if err := os.WriteFile(filepath.Join(nm, "pkg", "bin", "tool.js"), []byte("#!/usr/bin/env node\n"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(nm, ".bin"), 0o755); err != nil {
		return err
	}
	return os.Symlink("../pkg/bin/tool.js", filepath.Join(nm, ".bin", "tool"))
}

// lockDir writes a directory with a package.json and a package-lock.json
// of the given content.
func lockDir(t *testing.T, dir, lock string) {
	t.Helper()
	writeFiles(t, dir, map[string]string{"package.json": `{"name":"` + filepath.Base(dir) + `"}`, "package-lock.json": lock})
}

// checkInstalled fails unless dir's node_modules is the fake install of
// lock: its file, its executable and its symlink, and nothing else at the
// top.
func checkInstalled(t *testing.T, dir, lock string) {
	t.Helper()
	nm := filepath.Join(dir, "node_modules")
	if b, err := os.ReadFile(filepath.Join(nm, "pkg", "lock.json")); err != nil || string(b) != lock {
		t.Errorf("%s: pkg/lock.json = %q, %v; want %q", nm, b, err, lock)
	}
	if fi, err := os.Stat(filepath.Join(nm, "pkg", "bin", "tool.js")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("%s: pkg/bin/tool.js is not executable: %v, %v", nm, fi, err)
	}
	if target, err := os.Readlink(filepath.Join(nm, ".bin", "tool")); err != nil || target != "../pkg/bin/tool.js" {
		t.Errorf("%s: .bin/tool links to %q, %v", nm, target, err)
	}
	des, _ := os.ReadDir(nm)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if !slices.Equal(names, []string{".bin", "pkg"}) {
		t.Errorf("%s holds %q, want .bin and pkg", nm, names)
	}
}

// entries returns the names in the cache root.
func entries(t *testing.T, root string) []string {
	t.Helper()
	des, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// A miss installs and stores the install under its key; the next
// directory with the same package files gets a copy, without an install,
// whatever its node_modules held; a change in the lock file is a miss.
// The restored tree is a copy: writing into it leaves the cache as it was.
func TestNPMCacheStoreRestore(t *testing.T) {
	root, work := t.TempDir(), t.TempDir()
	f := &fakeNPM{}
	c := &npmCache{root: root, env: "node test", install: f.install}
	ctx := context.Background()
	const lock = `{"lockfileVersion":3,"packages":{}}`
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	lockDir(t, a, lock)
	lockDir(t, b, lock)
	// Same package.json in both, for one key.
	writeFiles(t, b, map[string]string{"package.json": `{"name":"a"}`})
	// b's old tree: replaced whole by the restore.
	writeFiles(t, b, map[string]string{"node_modules/stale/index.js": "old"})

	var out strings.Builder
	misses := 0
	how, err := c.ensure(ctx, a, &out, func() { misses++ })
	if err != nil || how != "installed and cached" || misses != 1 || f.runs != 1 {
		t.Fatalf("first ensure: %q, %v, %d misses, %d installs; output:\n%s", how, err, misses, f.runs, out.String())
	}
	key, err := c.key(a)
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, root); !slices.Equal(got, []string{key}) {
		t.Fatalf("the cache holds %q, want only the entry %s", got, key)
	}
	checkInstalled(t, filepath.Join(root, key), lock)

	out.Reset()
	how, err = c.ensure(ctx, b, &out, func() { misses++ })
	if err != nil || how != "restored from the cache" || misses != 1 || f.runs != 1 {
		t.Fatalf("second ensure: %q, %v, %d misses, %d installs; output:\n%s", how, err, misses, f.runs, out.String())
	}
	checkInstalled(t, b, lock)
	if leftovers, _ := filepath.Glob(filepath.Join(b, ".node_modules-restore-*")); len(leftovers) > 0 {
		t.Errorf("the restore left %q", leftovers)
	}

	// A test writing into the restored tree does not reach the cache.
	if err := os.WriteFile(filepath.Join(b, "node_modules", "pkg", "lock.json"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkInstalled(t, filepath.Join(root, key), lock)

	// Another lock file: another key, another install.
	lockDir(t, b, lock+" ")
	writeFiles(t, b, map[string]string{"package.json": `{"name":"a"}`})
	if how, err := c.ensure(ctx, b, io.Discard, func() { misses++ }); err != nil || how != "installed and cached" || f.runs != 2 {
		t.Fatalf("after a change of the lock file: %q, %v, %d installs", how, err, f.runs)
	}
	checkInstalled(t, b, lock+" ")
	if got := entries(t, root); len(got) != 2 {
		t.Errorf("the cache holds %q, want two entries", got)
	}
}

// A failed install or one cut short stores nothing, and the next run
// installs again; a temporary directory a killed store left is no entry.
func TestNPMCacheNoHalfEntry(t *testing.T) {
	root, dir := t.TempDir(), filepath.Join(t.TempDir(), "d")
	lockDir(t, dir, "{}")
	f := &fakeNPM{fail: map[string]bool{"d": true}}
	c := &npmCache{root: root, env: "node test", install: f.install}
	key, err := c.key(dir)
	if err != nil {
		t.Fatal(err)
	}
	// What a store killed before its rename leaves: a whole tree, but in
	// a temporary directory.
	writeFiles(t, root, map[string]string{".tmp-1/node_modules/pkg/lock.json": "{}", ".tmp-1/source": "x"})

	var out strings.Builder
	if _, err := c.ensure(context.Background(), dir, &out, func() {}); err == nil {
		t.Fatal("a failed install succeeded")
	}
	if !strings.Contains(out.String(), "the reason it failed") {
		t.Errorf("the output lacks the install's: %q", out.String())
	}
	if f.runs != 1 {
		t.Errorf("%d installs, want 1 (the temporary directory is no entry)", f.runs)
	}
	if got := entries(t, root); !slices.Equal(got, []string{".tmp-1"}) {
		t.Errorf("the cache holds %q after a failed install", got)
	}

	// Cut short: the context ends during the install.
	ctx, cancel := context.WithCancel(context.Background())
	c.install = func(ctx context.Context, dir string, out io.Writer) error {
		cancel()
		if err := (&fakeNPM{}).install(ctx, dir, out); err != nil {
			return err
		}
		return ctx.Err()
	}
	if _, err := c.ensure(ctx, dir, io.Discard, func() {}); !errors.Is(err, context.Canceled) {
		t.Errorf("ensure cut short returned %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, key)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an install cut short left the entry %s: %v", key, err)
	}

	f.fail = nil
	c.install = f.install
	if how, err := c.ensure(context.Background(), dir, io.Discard, func() {}); err != nil || how != "installed and cached" || f.runs != 2 {
		t.Errorf("the install after them: %q, %v, %d installs", how, err, f.runs)
	}
	checkInstalled(t, filepath.Join(root, key), "{}")
}

// An entry that cannot be copied (here it holds a named pipe) means an
// install, which replaces the entry; the directory's node_modules stays
// as it was until then, without a half copy beside it.
func TestNPMCacheBadEntry(t *testing.T) {
	root, dir := t.TempDir(), filepath.Join(t.TempDir(), "d")
	lockDir(t, dir, "{}")
	f := &fakeNPM{}
	c := &npmCache{root: root, env: "node test", install: f.install}
	key, err := c.key(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{key + "/node_modules/a/index.js": "x"})
	if err := syscall.Mkfifo(filepath.Join(root, key, "node_modules", "a", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	how, err := c.ensure(context.Background(), dir, &out, func() {})
	if err != nil || how != "installed and cached" || f.runs != 1 {
		t.Fatalf("ensure: %q, %v, %d installs; output:\n%s", how, err, f.runs, out.String())
	}
	if !strings.Contains(out.String(), "could not restore") {
		t.Errorf("the output does not say why it installed: %q", out.String())
	}
	checkInstalled(t, dir, "{}")
	checkInstalled(t, filepath.Join(root, key), "{}")
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".node_modules-restore-*")); len(leftovers) > 0 {
		t.Errorf("the failed restore left %q", leftovers)
	}
}

// prune keeps the entries in use and the most recently used others, and
// removes the rest and the stale temporary directories; a young temporary
// directory (a store under way) and names of no entry stay.
func TestNPMCachePrune(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	key := func(i int) string { return npmKey("env", nil, []byte{byte(i)}) }
	age := map[string]time.Duration{
		key(0):       72 * time.Hour, // in use, however old
		key(1):       time.Minute,
		key(2):       time.Hour,
		key(3):       2 * time.Hour,
		key(4):       3 * time.Hour,
		".tmp-old":   2 * time.Hour,
		".tmp-young": time.Minute,
		"other":      100 * time.Hour,
	}
	for name, a := range age {
		writeFiles(t, root, map[string]string{name + "/node_modules/x": "x"})
		if err := os.Chtimes(filepath.Join(root, name), now.Add(-a), now.Add(-a)); err != nil {
			t.Fatal(err)
		}
	}
	c := &npmCache{root: root, env: "env"}
	if err := c.prune([]string{key(0)}, 2, now); err != nil {
		t.Fatal(err)
	}
	got := entries(t, root)
	want := []string{".tmp-young", key(0), key(1), key(2), "other"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after prune the cache holds %q, want %q", got, want)
	}
	if err := (&npmCache{root: filepath.Join(root, "none")}).prune(nil, 2, now); err != nil {
		t.Errorf("prune of a missing cache: %v", err)
	}
}

// The step installs the misses three at once, writes every directory's
// log, fails the run once per failed directory, and on the next run
// restores every directory that installed without an install.
func TestNPMInstallStep(t *testing.T) {
	repo := t.TempDir()
	var dirs []string
	for _, d := range []string{"a", "b/interop", "c", "d", "e", "f"} {
		lockDir(t, filepath.Join(repo, d), `{"name":"`+d+`"}`)
		dirs = append(dirs, d)
	}
	writeFiles(t, repo, map[string]string{"a/node_modules/x/package-lock.json": "{}", ".git/package-lock.json": "{}"})
	if got := lockDirs(repo); !slices.Equal(got, dirs) {
		t.Fatalf("lockDirs = %q, want %q", got, dirs)
	}
	f := &fakeNPM{delay: 100 * time.Millisecond, fail: map[string]bool{"c": true}}
	c := &npmCache{root: filepath.Join(t.TempDir(), "npm"), env: "node test", install: f.install}
	run := &testRun{repo: repo, logDir: t.TempDir()}
	run.npmInstall(context.Background(), dirs, c)
	if f.runs != len(dirs) || f.max != 3 {
		t.Errorf("%d installs, at most %d at once; want %d, 3", f.runs, f.max, len(dirs))
	}
	if !slices.Equal(run.failures, []string{"npm ci in c"}) {
		t.Errorf("failures %q, want npm ci in c", run.failures)
	}
	for _, d := range dirs {
		log, err := os.ReadFile(filepath.Join(run.logDir, "npm-"+strings.ReplaceAll(d, "/", "_")+".log"))
		if err != nil || !strings.Contains(string(log), "fake npm ci in "+filepath.Join(repo, d)) {
			t.Errorf("the log of %s: %q, %v", d, log, err)
		}
	}

	if log, _ := os.ReadFile(filepath.Join(run.logDir, "npm-c.log")); !strings.Contains(string(log), "the reason it failed\nexit status 1") {
		t.Errorf("c's log lacks the install's output and error: %q", log)
	}

	run = &testRun{repo: repo, logDir: t.TempDir()}
	f.fail = nil
	run.npmInstall(context.Background(), dirs, c)
	if f.runs != len(dirs)+1 || len(run.failures) != 0 {
		t.Errorf("the second run: %d installs in all (want %d: only c again), failures %q", f.runs, len(dirs)+1, run.failures)
	}
	for _, d := range dirs {
		checkInstalled(t, filepath.Join(repo, d), `{"name":"`+d+`"}`)
	}
	log, _ := os.ReadFile(filepath.Join(run.logDir, "npm-a.log"))
	if !strings.Contains(string(log), "restored from the cache of installs") {
		t.Errorf("a's log on a hit: %q", log)
	}

	// Without the environment (node did not answer), nothing is cached.
	c2 := &npmCache{root: filepath.Join(t.TempDir(), "npm"), install: f.install}
	run = &testRun{repo: repo, logDir: t.TempDir()}
	run.npmInstall(context.Background(), dirs[:1], c2)
	if f.runs != len(dirs)+2 || len(run.failures) != 0 || len(entries(t, c2.root)) != 0 {
		t.Errorf("without a key: %d installs, failures %q, cache %q", f.runs, run.failures, entries(t, c2.root))
	}
}
