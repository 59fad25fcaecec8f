package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// writeRepo makes a repository of three modules in a temporary directory:
// c (no requirement), b (requires c) and a (requires b and c), listed in
// go.work in the order a, b, c.
func writeRepo(t *testing.T, version string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.work":          "go 1.26\n\nuse (\n\t./a\n\t./b\n\t./sub/c\n)\n",
		"a/go.mod":         "module github.com/authport/authport/a\n\ngo 1.26\n\nrequire (\n\tgithub.com/authport/authport/b " + version + "\n\tgithub.com/authport/authport/sub/c " + version + "\n\tgolang.org/x/mod v0.42.0\n)\n\nreplace github.com/authport/authport/b => ../b\n",
		"a/a.go":           "package a\n",
		"b/go.mod":         "module github.com/authport/authport/b\n\ngo 1.26\n\nrequire github.com/authport/authport/sub/c " + version + "\n",
		"b/b.go":           "package b\n",
		"b/nested/go.mod":  "module github.com/authport/authport/b/nested\n\ngo 1.26\n",
		"b/nested/n.go":    "package nested\n",
		"b/ignored.log":    "ignored\n",
		".gitignore":       "*.log\n",
		"sub/c/go.mod":     "module github.com/authport/authport/sub/c\n\ngo 1.26\n",
		"sub/c/c.go":       "package c\n",
		"sub/c/x/deep.txt": "deep\n",
	}
	for name, data := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}

func TestOrderedPutsDependenciesFirst(t *testing.T) {
	r, err := loadRepo(writeRepo(t, "v0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	ordered, err := r.Ordered()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, m := range ordered {
		tags = append(tags, m.Tag("v0.1.0"))
	}
	if want := []string{"sub/c/v0.1.0", "b/v0.1.0", "a/v0.1.0"}; !slices.Equal(tags, want) {
		t.Errorf("tags in order %v, want %v", tags, want)
	}
}

func TestOrderedRejectsACycle(t *testing.T) {
	root := writeRepo(t, "v0.1.0")
	gomod := filepath.Join(root, "sub/c/go.mod")
	if err := os.WriteFile(gomod, []byte("module github.com/authport/authport/sub/c\n\ngo 1.26\n\nrequire github.com/authport/authport/a v0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := loadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Ordered(); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("Ordered of a cycle = %v, want a cycle error", err)
	}
}

func TestVersion(t *testing.T) {
	r, err := loadRepo(writeRepo(t, "v0.3.1"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Version(); v != "v0.3.1" || err != nil {
		t.Errorf("Version = %q, %v; want v0.3.1", v, err)
	}

	r, err = loadRepo(writeRepo(t, "v0.0.0-00010101000000-000000000000"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Version(); err == nil || !strings.Contains(err.Error(), "pseudo-version") {
		t.Errorf("Version with a pseudo-version = %v, want an error naming it", err)
	}

	root := writeRepo(t, "v0.1.0")
	gomod := filepath.Join(root, "b/go.mod")
	if err := os.WriteFile(gomod, []byte("module github.com/authport/authport/b\n\ngo 1.26\n\nrequire github.com/authport/authport/sub/c v0.2.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err = loadRepo(root); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Version(); err == nil || !strings.Contains(err.Error(), "different versions") {
		t.Errorf("Version with two versions = %v, want an error", err)
	}
}

func TestLoadRepoRejectsAPathThatDoesNotMatchItsDirectory(t *testing.T) {
	root := writeRepo(t, "v0.1.0")
	if err := os.WriteFile(filepath.Join(root, "b/go.mod"), []byte("module example.com/b\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadRepo(root); err == nil || !strings.Contains(err.Error(), "github.com/authport/authport/b") {
		t.Errorf("loadRepo = %v, want an error naming the expected path", err)
	}
}

func TestSetVersion(t *testing.T) {
	root := writeRepo(t, "v0.1.0")
	r, err := loadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := r.SetVersion("v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/go.mod", "b/go.mod"}; !slices.Equal(changed, want) {
		t.Errorf("changed %v, want %v", changed, want)
	}
	data, err := os.ReadFile(filepath.Join(root, "a/go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, req := range f.Require {
		got[req.Mod.Path] = req.Mod.Version
	}
	want := map[string]string{
		"github.com/authport/authport/b":     "v0.2.0",
		"github.com/authport/authport/sub/c": "v0.2.0",
		"golang.org/x/mod":                   "v0.42.0", // not ours: untouched
	}
	for p, v := range want {
		if got[p] != v {
			t.Errorf("a/go.mod requires %s %s, want %s", p, got[p], v)
		}
	}
	if len(f.Replace) != 1 {
		t.Errorf("a/go.mod has %d replaces, want the one it had", len(f.Replace))
	}
	if r2, err := loadRepo(root); err != nil {
		t.Fatal(err)
	} else if v, err := r2.Version(); v != "v0.2.0" || err != nil {
		t.Errorf("Version after SetVersion = %q, %v", v, err)
	}
}

func TestSetVersionRefusesBadVersionsAndWritesNothing(t *testing.T) {
	for _, v := range []string{"0.2.0", "v0.2", "v2.0.0", "v0.2.0+meta", "v0.0.0-20260101000000-abcdefabcdef", ""} {
		root := writeRepo(t, "v0.1.0")
		r, err := loadRepo(root)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.SetVersion(v); err == nil {
			t.Errorf("SetVersion(%q) succeeded", v)
		}
		r2, _ := loadRepo(root)
		if got, _ := r2.Version(); got != "v0.1.0" {
			t.Errorf("after a refused SetVersion(%q) the version is %q", v, got)
		}
	}
}

func TestModuleFiles(t *testing.T) {
	root := writeRepo(t, "v0.1.0")
	if err := os.WriteFile(filepath.Join(root, "b/untracked.go"), []byte("package b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := moduleFiles(filepath.Join(root, "b"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Path())
	}
	slices.Sort(names)
	// nested/ is a module of its own, ignored.log is ignored by git, and
	// an untracked file is part of the working tree.
	if want := []string{"b.go", "go.mod", "untracked.go"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
}

func TestBuildProxy(t *testing.T) {
	root := writeRepo(t, "v0.1.0")
	r, err := loadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := buildProxy(r, "v0.1.0", dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"list", "v0.1.0.info", "v0.1.0.mod", "v0.1.0.zip"} {
		if _, err := os.Stat(filepath.Join(dir, "github.com/authport/authport/sub/c/@v", f)); err != nil {
			t.Error(err)
		}
	}
	mod, err := os.ReadFile(filepath.Join(dir, "github.com/authport/authport/b/@v/v0.1.0.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/authport/authport/b\n") {
		t.Errorf("b's .mod = %q, %v", mod, err)
	}
}

func TestRequiredBackends(t *testing.T) {
	req := requiredBackends("postgres, redis")
	if !req("postgres") || !req("redis") || req("mongodb") {
		t.Error("a comma list names exactly its backends")
	}
	if all := requiredBackends("all"); !all("mongodb") {
		t.Error("all names every backend")
	}
	if mixed := requiredBackends(" Postgres,ALL"); !mixed("postgres") || !mixed("mongodb") {
		t.Error("names are compared without regard to case, as conformance/provision compares them")
	}
	if none := requiredBackends(""); none("postgres") {
		t.Error("an empty list names none")
	}
}
