package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// npmJobs is how many directories install at once. An install mostly
// waits on the registry, but one of them compiles better-sqlite3 from
// source, which wants a core: three keep a 2-core machine busy without
// starving the rest of it.
const npmJobs = 3

// npmKeepOthers is how many cache entries beside the ones this run used
// outlive a run, the most recently used first: other checkouts of the
// repository on the machine (other branches, other lock files) share the
// cache, and would otherwise evict each other's entries run after run.
const npmKeepOthers = 10

// npmStaleTemp is the age after which a temporary directory in the cache
// is a leftover of a run cut short rather than a store under way.
const npmStaleTemp = time.Hour

// npmCI installs the pinned packages of every directory holding a
// package-lock.json (the interop suites run real npm packages), from the
// cache of installs (npmCache) when one of the same lock file, Node.js,
// npm and platform is there, else by `npm ci`, which then fills the cache.
// Without npm those tests skip, unless AUTHPORT_REQUIRE is all or names
// npm.
func (t *testRun) npmCI(ctx context.Context) {
	step("npm ci (interop suites)")
	dirs := lockDirs(t.repo)
	if len(dirs) == 0 {
		return
	}
	if !commandExists("npm") {
		if required("npm") {
			t.fail("npm is not installed (AUTHPORT_REQUIRE=" + os.Getenv("AUTHPORT_REQUIRE") + "): install Node.js 20+ with npm")
		} else {
			fmt.Fprintf(os.Stderr, "  npm is not installed: the interop tests in %s will skip\n", strings.Join(dirs, " "))
		}
		return
	}
	c := &npmCache{root: filepath.Join(cacheDir(), "npm"), install: npmCIInstall}
	env, err := npmEnvironment(ctx)
	if err != nil {
		// No key without the versions: install without the cache.
		fmt.Fprintf(os.Stderr, "  not using the cache of installs: %v\n", err)
	} else {
		c.env = env
	}
	t.npmInstall(ctx, dirs, c)
}

// lockDirs returns the directories under repo, relative to it, that hold
// a package-lock.json, outside node_modules and .git.
func lockDirs(repo string) []string {
	var dirs []string
	_ = filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.Name() == "package-lock.json" {
			rel, _ := filepath.Rel(repo, filepath.Dir(p))
			dirs = append(dirs, rel)
		}
		return nil
	})
	return dirs
}

// npmInstall installs node_modules in each of dirs (relative to the
// repository) through c, npmJobs at once, the largest lock files (the
// longest installs) first. Each directory's output goes to
// logDir/npm-<dir>.log; the console gets one line per directory, in the
// order of dirs, and for a failed one the tail of its output and a
// failure of the run.
func (t *testRun) npmInstall(ctx context.Context, dirs []string, c *npmCache) {
	type result struct {
		how  string
		out  string
		err  error
		took time.Duration
	}
	results := make([]result, len(dirs))
	order := make([]job, len(dirs))
	size := make(map[string]int64, len(dirs))
	for i, d := range dirs {
		order[i] = job{module: d}
		if fi, err := os.Stat(filepath.Join(t.repo, d, "package-lock.json")); err == nil {
			size[d] = fi.Size()
		}
	}
	slices.SortStableFunc(order, func(a, b job) int { return cmp.Compare(size[b.module], size[a.module]) })
	var printMu sync.Mutex
	runSchedule(order, npmJobs, func(j job) {
		i := slices.Index(dirs, j.module)
		start := time.Now()
		var out strings.Builder
		how, err := c.ensure(ctx, filepath.Join(t.repo, j.module), &out, func() {
			printMu.Lock()
			defer printMu.Unlock()
			fmt.Fprintf(os.Stderr, "  %s: npm ci (no cached install of its lock file)\n", j.module)
		})
		if err != nil {
			fmt.Fprintln(&out, err)
		}
		_ = os.WriteFile(filepath.Join(t.logDir, "npm-"+strings.ReplaceAll(j.module, "/", "_")+".log"), []byte(out.String()), 0o644)
		results[i] = result{how: how, out: out.String(), err: err, took: time.Since(start)}
	})
	for i, d := range dirs {
		r := results[i]
		if r.err != nil {
			fmt.Fprintln(os.Stderr, strings.Join(tailLines(r.out, 20), "\n"))
			t.fail("npm ci in " + d)
			continue
		}
		fmt.Fprintf(os.Stderr, "  %-42s %s (%.1fs)\n", d, r.how, r.took.Seconds())
	}
	if c.env != "" {
		keep := make([]string, 0, len(dirs))
		for _, d := range dirs {
			if k, err := c.key(filepath.Join(t.repo, d)); err == nil {
				keep = append(keep, k)
			}
		}
		if err := c.prune(keep, npmKeepOthers, time.Now()); err != nil {
			fmt.Fprintf(os.Stderr, "  could not prune the cache of installs: %v\n", err)
		}
	}
}

// npmCache keeps installed node_modules trees under root, one entry per
// key (npmKey): root/<key>/node_modules, and root/<key>/source saying what
// it was made from. An entry appears only by the rename of a complete
// temporary directory (root/.tmp-*), so a run cut short leaves no half
// entry. Entries are copied in and out, never hard-linked: a test or a
// package that writes into its node_modules cannot change the cache.
type npmCache struct {
	root string
	// env is what besides the directory's package files the installed
	// tree depends on (npmEnvironment); empty: install without the cache.
	env string
	// install installs dir's node_modules from its lock file, its output
	// to out (npmCIInstall; the tests fake it).
	install func(ctx context.Context, dir string, out io.Writer) error
}

// npmCIInstall runs `npm ci` in dir.
func npmCIInstall(ctx context.Context, dir string, out io.Writer) error {
	return cmdSpec{args: []string{"npm", "ci", "--no-audit", "--no-fund"}, dir: dir, stdout: out, stderr: out}.run(ctx)
}

// npmEnvironment describes what an installed node_modules depends on
// beyond the package files: the versions of Node.js (and its module ABI,
// which native addons are built for) and npm, the platform and
// architecture, and the C library the addons link against.
func npmEnvironment(ctx context.Context) (string, error) {
	const script = `[process.version, process.platform, process.arch, "abi" + process.versions.modules, ` +
		`"glibc " + ((process.report && process.report.getReport().header.glibcVersionRuntime) || "none")].join(" ")`
	node, err := cmdSpec{args: []string{"node", "-p", script}, timeout: 30 * time.Second}.output(ctx)
	if err != nil {
		return "", err
	}
	npm, err := cmdSpec{args: []string{"npm", "--version"}, timeout: 30 * time.Second}.output(ctx)
	if err != nil {
		return "", err
	}
	return "node " + node + "\nnpm " + npm, nil
}

// npmKey is the cache key of an install: a hash of env (npmEnvironment)
// and of the directory's package.json and package-lock.json, each length-
// prefixed so that no two different inputs run together into one.
func npmKey(env string, manifest, lock []byte) string {
	h := sha256.New()
	for _, f := range []struct {
		name string
		b    []byte
	}{{"format", []byte("authport npm cache 1")}, {"environment", []byte(env)}, {"package.json", manifest}, {"package-lock.json", lock}} {
		fmt.Fprintf(h, "%s %d\n", f.name, len(f.b))
		h.Write(f.b)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// key returns the cache key of dir's install.
func (c *npmCache) key(dir string) (string, error) {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", err
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return npmKey(c.env, manifest, lock), nil
}

// ensure gives dir a node_modules installed from its lock file: a copy of
// the cache's entry when there is one, else an install (announced by
// calling miss), which it then stores. It returns how, for the console;
// out gets the install's output and what ensure did. An entry that cannot
// be copied (another run pruning it, say) means an install, not a failure;
// a failure to store is reported in out and leaves the install in place.
func (c *npmCache) ensure(ctx context.Context, dir string, out io.Writer, miss func()) (string, error) {
	removeMatches(filepath.Join(dir, ".node_modules-restore-*"))
	if c.env == "" {
		miss()
		return "installed, not cached", c.install(ctx, dir, out)
	}
	key, err := c.key(dir)
	if err != nil {
		return "", err
	}
	entry := filepath.Join(c.root, key)
	if fi, err := os.Stat(filepath.Join(entry, "node_modules")); err == nil && fi.IsDir() {
		err := c.restore(entry, dir)
		if err == nil {
			now := time.Now()
			_ = os.Chtimes(entry, now, now) // its last use, for prune
			fmt.Fprintf(out, "node_modules restored from the cache of installs: %s\n", entry)
			return "restored from the cache", nil
		}
		// Whatever is wrong with the entry, the install replaces it.
		fmt.Fprintf(out, "could not restore node_modules from %s, installing instead: %v\n", entry, err)
		if err := c.discard(key); err != nil {
			fmt.Fprintf(out, "could not remove it: %v\n", err)
		}
	}
	miss()
	if err := c.install(ctx, dir, out); err != nil {
		return "", err
	}
	if err := c.store(dir, key); err != nil {
		fmt.Fprintf(out, "installed, but could not store node_modules in the cache of installs: %v\n", err)
		return "installed, not cached", nil
	}
	fmt.Fprintf(out, "node_modules stored in the cache of installs: %s\n", entry)
	return "installed and cached", nil
}

// restore replaces dir/node_modules with a copy of entry/node_modules. The
// copy is made beside it and renamed into place, so that a restore cut
// short leaves the old tree or none, never part of one.
func (c *npmCache) restore(entry, dir string) error {
	tmp, err := os.MkdirTemp(dir, ".node_modules-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(filepath.Join(tmp, "node_modules"), os.DirFS(filepath.Join(entry, "node_modules"))); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
		return err
	}
	return os.Rename(filepath.Join(tmp, "node_modules"), filepath.Join(dir, "node_modules"))
}

// store copies dir/node_modules into the cache as the entry key: into a
// temporary directory of the cache first, renamed to the entry when whole.
// When another run stored the same key meanwhile, its entry stays.
func (c *npmCache) store(dir, key string) error {
	if err := os.MkdirAll(c.root, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(c.root, ".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone after the rename
	if err := os.CopyFS(filepath.Join(tmp, "node_modules"), os.DirFS(filepath.Join(dir, "node_modules"))); err != nil {
		return err
	}
	source := fmt.Sprintf("installed by npm ci in %s at %s\n%s\n", dir, time.Now().UTC().Format(time.RFC3339), c.env)
	if err := os.WriteFile(filepath.Join(tmp, "source"), []byte(source), 0o644); err != nil {
		return err
	}
	err = os.Rename(tmp, filepath.Join(c.root, key))
	if err != nil {
		if fi, serr := os.Stat(filepath.Join(c.root, key, "node_modules")); serr == nil && fi.IsDir() {
			return nil // another run stored it first
		}
	}
	return err
}

// prune bounds the cache: it keeps the entries keep names and the keepOthers
// other entries used most recently, and removes the rest, and temporary
// directories older than npmStaleTemp (leftovers of runs cut short; a
// younger one may be another run's store under way). Names that
// are neither entries nor temporary directories are left alone.
func (c *npmCache) prune(keep []string, keepOthers int, now time.Time) error {
	des, err := os.ReadDir(c.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	type entry struct {
		name string
		used time.Time
	}
	var others []entry
	var errs []error
	for _, de := range des {
		fi, err := de.Info()
		if err != nil || !de.IsDir() {
			continue
		}
		switch name := de.Name(); {
		case strings.HasPrefix(name, ".tmp-"):
			if now.Sub(fi.ModTime()) > npmStaleTemp {
				errs = append(errs, os.RemoveAll(filepath.Join(c.root, name)))
			}
		case isNPMKey(name) && !slices.Contains(keep, name):
			others = append(others, entry{name, fi.ModTime()})
		}
	}
	slices.SortFunc(others, func(a, b entry) int { return b.used.Compare(a.used) })
	for _, e := range others[min(keepOthers, len(others)):] {
		errs = append(errs, c.discard(e.name))
	}
	return errors.Join(errs...)
}

// discard removes the entry key, renaming it into a temporary directory
// first so that no one finds half of it.
func (c *npmCache) discard(key string) error {
	tmp, err := os.MkdirTemp(c.root, ".tmp-")
	if err != nil {
		return err
	}
	err = os.Rename(filepath.Join(c.root, key), filepath.Join(tmp, key))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, os.RemoveAll(tmp))
}

// isNPMKey reports whether name has the form of npmKey's keys.
func isNPMKey(name string) bool {
	if len(name) != 32 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil && strings.ToLower(name) == name
}

// removeMatches removes what matches pattern (leftovers of runs cut short).
func removeMatches(pattern string) {
	matches, _ := filepath.Glob(pattern)
	for _, m := range matches {
		_ = os.RemoveAll(m)
	}
}
