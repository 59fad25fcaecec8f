package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ensureBase builds localhost/debian:bookworm with debootstrap unless it
// exists.
func ensureBase(ctx context.Context, state string) error {
	if succeeds(ctx, podman("image", "exists", baseImage)...) {
		return nil
	}
	mirror := aptMirror("/etc/apt", "bookworm")
	root, err := os.MkdirTemp(state, "debootstrap-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	logPath := filepath.Join(state, "debootstrap.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	logf("building %s: debootstrap --variant=minbase bookworm from %s (log: %s)", baseImage, mirror, logPath)
	if err := command(ctx, log, "debootstrap", "--variant=minbase", "bookworm", root, mirror).Run(); err != nil {
		return fmt.Errorf("debootstrap bookworm from %s: %w; see %s", mirror, err, logPath)
	}
	tar := exec.CommandContext(ctx, "tar", "-C", root, "-c", ".")
	tar.Stderr = log
	imp := command(ctx, log, podman("import", "-", baseImage)...)
	pipe, err := tar.StdoutPipe()
	if err != nil {
		return err
	}
	imp.Stdin = pipe
	if err := tar.Start(); err != nil {
		return err
	}
	ierr := imp.Run()
	terr := tar.Wait()
	if err := errors.Join(ierr, terr); err != nil {
		return fmt.Errorf("importing %s into podman: %w; see %s", baseImage, err, logPath)
	}
	return nil
}

// aptMirror returns the Debian mirror apt uses for suite, read from the
// sources under dir (sources.list, sources.list.d/*.list and *.sources);
// deb.debian.org when none names the suite.
func aptMirror(dir, suite string) string {
	files := []string{filepath.Join(dir, "sources.list")}
	for _, pattern := range []string{"*.list", "*.sources"} {
		m, _ := filepath.Glob(filepath.Join(dir, "sources.list.d", pattern))
		slices.Sort(m)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var uri string
		if strings.HasSuffix(f, ".sources") {
			uri = mirrorIn822(string(data), suite)
		} else {
			uri = mirrorInList(string(data), suite)
		}
		if uri != "" {
			return uri
		}
	}
	return "http://deb.debian.org/debian"
}

// mirrorInList returns the URI of the first `deb` line of a one-line-style
// sources list whose suite is suite.
func mirrorInList(data, suite string) string {
	s := bufio.NewScanner(strings.NewReader(data))
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 3 || fields[0] != "deb" {
			continue
		}
		fields = fields[1:]
		if strings.HasPrefix(fields[0], "[") { // options: [arch=amd64 signed-by=...]
			for len(fields) > 0 && !strings.HasSuffix(fields[0], "]") {
				fields = fields[1:]
			}
			if len(fields) == 0 {
				continue
			}
			fields = fields[1:]
		}
		if len(fields) >= 2 && fields[1] == suite {
			return fields[0]
		}
	}
	return ""
}

// mirrorIn822 returns the first URI of the first stanza of a deb822-style
// .sources file with type deb whose suites include suite.
func mirrorIn822(data, suite string) string {
	for stanza := range strings.SplitSeq(data, "\n\n") {
		fields := map[string]string{}
		for line := range strings.SplitSeq(stanza, "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
				fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
			}
		}
		if enabled := strings.ToLower(fields["enabled"]); enabled == "no" {
			continue
		}
		uris := strings.Fields(fields["uris"])
		if len(uris) > 0 && slices.Contains(strings.Fields(fields["types"]), "deb") &&
			slices.Contains(strings.Fields(fields["suites"]), suite) {
			return uris[0]
		}
	}
	return ""
}

// imageHash returns the hash that names img's build: how the base image is
// made, the files of its directory under images/ and the extra file's
// content.
func imageHash(base string, img image) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "base %s\n", base)
	dir := path.Join("images", img.name)
	entries, err := fs.ReadDir(images, dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		data, err := fs.ReadFile(images, path.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s %d\n", e.Name(), len(data))
		h.Write(data)
	}
	if img.extra != "" {
		f, err := os.Open(img.extra)
		if err != nil {
			return "", fmt.Errorf("image %s: %w", img.name, err)
		}
		defer f.Close()
		fmt.Fprintf(h, "extra\n")
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureImage builds img as tag unless that image exists. Older builds of
// img are removed.
func ensureImage(ctx context.Context, state string, img image, tag string) error {
	if !succeeds(ctx, podman("image", "exists", tag)...) {
		if err := buildImage(ctx, state, img, tag); err != nil {
			return err
		}
	}
	// Older builds go, so that images do not pile up build after build.
	repo, _, _ := strings.Cut(tag, ":")
	list, err := output(ctx, podman("images", "--format", "{{.Repository}}:{{.Tag}}", repo)...)
	if err == nil {
		for old := range strings.FieldsSeq(list) {
			if old != tag {
				_ = command(ctx, io.Discard, podman("image", "rm", old)...).Run()
			}
		}
	}
	return nil
}

// buildImage builds img as tag, from a build context made of its files
// under images/ and its extra file.
func buildImage(ctx context.Context, state string, img image, tag string) error {
	dir, err := os.MkdirTemp(state, "build-"+img.name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := path.Join("images", img.name)
	entries, err := fs.ReadDir(images, src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := fs.ReadFile(images, path.Join(src, e.Name()))
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(e.Name(), ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, mode); err != nil {
			return err
		}
	}
	if img.extra != "" {
		if err := copyFile(img.extra, filepath.Join(dir, "mongostandin")); err != nil {
			return err
		}
	}
	logPath := filepath.Join(state, "build-"+img.name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	logf("building %s (log: %s)", tag, logPath)
	build := podman("build", "--network", "host", "-t", tag, "-f", filepath.Join(dir, "Containerfile"), dir)
	if err := command(ctx, log, build...).Run(); err != nil {
		return fmt.Errorf("podman build of %s: %w; see %s", tag, err, logPath)
	}
	return nil
}

// copyFile copies the executable src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
