package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// buildProxy writes a module proxy (the GOPROXY file layout:
// <escaped path>/@v/{list,V.info,V.mod,V.zip}) into dir that serves every
// module of r at version, made from the working tree as git sees it:
// tracked and untracked files, less what .gitignore excludes and less
// nested modules. The zips are made by golang.org/x/mod/zip, which applies
// the rules the public proxy applies, so a file the proxy would refuse
// fails here too.
func buildProxy(r *Repo, version, dir string) error {
	now := time.Now().UTC().Format(time.RFC3339)
	for _, m := range r.Modules {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
		if err != nil {
			return err
		}
		info, err := json.Marshal(struct{ Version, Time string }{version, now})
		if err != nil {
			return err
		}
		files, err := moduleFiles(m.Dir)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Rel, err)
		}
		var zip bytes.Buffer
		if err := modzip.Create(&zip, module.Version{Path: m.Path, Version: version}, files); err != nil {
			return fmt.Errorf("zipping %s: %w", m.Rel, err)
		}
		for name, data := range map[string][]byte{
			"list":            []byte(version + "\n"),
			version + ".info": info,
			version + ".mod":  gomod,
			version + ".zip":  zip.Bytes(),
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleFiles lists the files of the module in dir as a release would ship
// them: what git tracks or would track there, without files of nested
// modules and without files deleted from the working tree.
func moduleFiles(dir string) ([]modzip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	names := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	nested := map[string]bool{} // directories (relative) holding another go.mod
	for _, n := range names {
		if path.Base(n) == "go.mod" && n != "go.mod" {
			nested[path.Dir(n)] = true
		}
	}
	var files []modzip.File
	for _, n := range names {
		if n == "" || inNested(n, nested) {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(n))
		fi, err := os.Lstat(full)
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			return nil, err
		}
		files = append(files, diskFile{rel: n, full: full, info: fi})
	}
	return files, nil
}

func inNested(name string, nested map[string]bool) bool {
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

// diskFile is a file of the working tree, as golang.org/x/mod/zip wants it.
type diskFile struct {
	rel, full string
	info      os.FileInfo
}

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return f.info, nil }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.full) }

// proxyCommand writes a module proxy of the working tree into dir (see
// [buildProxy]) at the version the modules require each other at, and
// prints the environment an application outside the repository uses to
// `go get` authport's modules from it before they are tagged: GOPROXY
// with dir first, and GONOSUMDB for the repository's modules (they are not
// in the checksum database until published). The export lines go to
// stdout, for eval; what to do next goes to stderr.
func proxyCommand(r *Repo, dir string, stdout, stderr io.Writer) error {
	version, err := r.Version()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := buildProxy(r, version, abs); err != nil {
		return fmt.Errorf("building the proxy in %s: %w", abs, err)
	}
	upstream, err := goEnv("GOPROXY")
	if err != nil {
		return err
	}
	goproxy := "file://" + filepath.ToSlash(abs)
	if upstream != "" && upstream != "off" {
		goproxy += "," + upstream
	}
	fmt.Fprintf(stdout, "export GOPROXY=%s\nexport GONOSUMDB=%s\n", goproxy, strings.TrimSuffix(repoPrefix, "/"))
	fmt.Fprintf(stderr, "authport %s from %s is served from %s; with the variables above, in your module:\n"+
		"  go get %shandler@%s %sadapters/bbolt@%s\n"+
		"The module cache keeps the first copy of %s it fetches: to follow a clone that changes, use replace directives instead (README, Install).\n",
		version, r.Root, abs, repoPrefix, version, repoPrefix, version, version)
	return nil
}
