package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// repoPrefix is the module path every released module of the repository
// starts with.
const repoPrefix = "github.com/authport/authport/"

// Module is one released module of the repository: a directory listed in
// go.work.
type Module struct {
	// Path is the module path, e.g. github.com/authport/authport/core.
	Path string
	// Rel is the module's directory relative to the repository root, with
	// forward slashes: the prefix of its tags (Rel + "/" + version).
	Rel string
	// Dir is the module's absolute directory.
	Dir string
	// File is the parsed go.mod.
	File *modfile.File
}

// Tag is the git tag that releases m at version.
func (m *Module) Tag(version string) string { return m.Rel + "/" + version }

// Repo is the repository's set of released modules.
type Repo struct {
	Root    string
	Modules []*Module // in go.work order
	byPath  map[string]*Module
}

// loadRepo reads root/go.work and the go.mod of every module it uses.
func loadRepo(root string) (*Repo, error) {
	workPath := filepath.Join(root, "go.work")
	data, err := os.ReadFile(workPath)
	if err != nil {
		return nil, fmt.Errorf("reading the workspace: %w", err)
	}
	work, err := modfile.ParseWork(workPath, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing go.work: %w", err)
	}
	r := &Repo{Root: root, byPath: map[string]*Module{}}
	for _, u := range work.Use {
		rel := filepath.ToSlash(filepath.Clean(u.Path))
		if rel == "." || strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("go.work uses %q: every released module must be a subdirectory of the repository", u.Path)
		}
		dir := filepath.Join(root, filepath.FromSlash(rel))
		gomod := filepath.Join(dir, "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", gomod, err)
		}
		f, err := modfile.Parse(gomod, data, nil)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", gomod, err)
		}
		if f.Module == nil {
			return nil, fmt.Errorf("%s has no module line", gomod)
		}
		m := &Module{Path: f.Module.Mod.Path, Rel: rel, Dir: dir, File: f}
		if want := repoPrefix + rel; m.Path != want {
			return nil, fmt.Errorf("%s declares module %s; a module in %s must be %s so that its tags (%s/vX.Y.Z) resolve", gomod, m.Path, rel, want, rel)
		}
		r.Modules = append(r.Modules, m)
		r.byPath[m.Path] = m
	}
	if len(r.Modules) == 0 {
		return nil, errors.New("go.work uses no module")
	}
	return r, nil
}

// inRepoRequires lists m's requirements on other modules of the
// repository.
func (r *Repo) inRepoRequires(m *Module) []*modfile.Require {
	var out []*modfile.Require
	for _, req := range m.File.Require {
		if _, ok := r.byPath[req.Mod.Path]; ok {
			out = append(out, req)
		}
	}
	return out
}

// Ordered returns the modules in dependency order: every module after the
// modules it requires (core first), ties broken by path.
func (r *Repo) Ordered() ([]*Module, error) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*Module]int{}
	var out []*Module
	var visit func(m *Module, chain []string) error
	visit = func(m *Module, chain []string) error {
		switch state[m] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("modules require each other in a cycle: %s", strings.Join(append(chain, m.Rel), " -> "))
		}
		state[m] = visiting
		reqs := r.inRepoRequires(m)
		slices.SortFunc(reqs, func(a, b *modfile.Require) int { return strings.Compare(a.Mod.Path, b.Mod.Path) })
		for _, req := range reqs {
			if err := visit(r.byPath[req.Mod.Path], append(chain, m.Rel)); err != nil {
				return err
			}
		}
		state[m] = done
		out = append(out, m)
		return nil
	}
	sorted := slices.Clone(r.Modules)
	slices.SortFunc(sorted, func(a, b *Module) int { return strings.Compare(a.Path, b.Path) })
	for _, m := range sorted {
		if err := visit(m, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Version returns the one version that every in-repo requirement names:
// the release the go.mod files are at. It fails on a pseudo-version, on an
// invalid version and when two requirements disagree.
func (r *Repo) Version() (string, error) {
	seen := map[string][]string{}
	for _, m := range r.Modules {
		for _, req := range r.inRepoRequires(m) {
			v := req.Mod.Version
			if module.IsPseudoVersion(v) {
				return "", fmt.Errorf("%s/go.mod requires %s at the pseudo-version %s; run scripts/release.sh set-version vX.Y.Z", m.Rel, req.Mod.Path, v)
			}
			seen[v] = append(seen[v], m.Rel+" -> "+strings.TrimPrefix(req.Mod.Path, repoPrefix))
		}
	}
	switch len(seen) {
	case 0:
		return "", errors.New("no module requires another module of the repository; nothing tells the release version")
	case 1:
		for v := range seen {
			if err := checkVersion(v); err != nil {
				return "", err
			}
			return v, nil
		}
	}
	var lines []string
	for v, where := range seen {
		lines = append(lines, fmt.Sprintf("%s (%s)", v, strings.Join(where, ", ")))
	}
	slices.Sort(lines)
	return "", fmt.Errorf("the in-repo requirements name different versions: %s; run scripts/release.sh set-version vX.Y.Z", strings.Join(lines, "; "))
}

// checkVersion accepts a canonical semantic version below v2: the module
// paths carry no /vN suffix, so v2 and later would need new paths.
func checkVersion(v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("version %q is not a canonical semantic version such as v0.2.0 or v1.0.0-rc.1", v)
	}
	if semver.Build(v) != "" {
		return fmt.Errorf("version %q has build metadata, which Go module versions do not allow", v)
	}
	if module.IsPseudoVersion(v) {
		return fmt.Errorf("version %q is a pseudo-version; name a release", v)
	}
	if major := semver.Major(v); major != "v0" && major != "v1" {
		return fmt.Errorf("version %q is %s: the module paths would need a /%s suffix first", v, major, major)
	}
	return nil
}

// SetVersion rewrites every in-repo requirement to version and returns the
// go.mod files it changed. It writes nothing when it fails.
func (r *Repo) SetVersion(version string) ([]string, error) {
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	type change struct {
		path string
		data []byte
	}
	var changes []change
	for _, m := range r.Modules {
		reqs := r.inRepoRequires(m)
		if len(reqs) == 0 {
			continue
		}
		for _, req := range reqs {
			if err := m.File.AddRequire(req.Mod.Path, version); err != nil {
				return nil, fmt.Errorf("%s/go.mod: %w", m.Rel, err)
			}
		}
		m.File.Cleanup()
		data, err := m.File.Format()
		if err != nil {
			return nil, fmt.Errorf("%s/go.mod: %w", m.Rel, err)
		}
		path := filepath.Join(m.Dir, "go.mod")
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if string(old) != string(data) {
			changes = append(changes, change{path, data})
		}
	}
	var changed []string
	for _, c := range changes {
		if err := os.WriteFile(c.path, c.data, 0o644); err != nil {
			return changed, fmt.Errorf("writing %s: %w", c.path, err)
		}
		rel, _ := filepath.Rel(r.Root, c.path)
		changed = append(changed, filepath.ToSlash(rel))
	}
	return changed, nil
}
