package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/mod/semver"
)

// tagRelease releases every module at version: it checks that the work tree
// is clean and that no module has a tag at or above version, rewrites the
// in-repo requirements to version, checks that `go mod tidy` would change
// nothing, runs the consumer check against the result, commits the go.mod
// changes (if any) and creates one annotated tag per module in dependency
// order. It pushes nothing; it prints the push command. With dryRun it stops
// before writing anything.
func tagRelease(ctx context.Context, r *Repo, version string, dryRun bool, w io.Writer) error {
	if err := checkVersion(version); err != nil {
		return err
	}
	git := func(args ...string) (string, error) { return run(ctx, r.Root, os.Environ(), "git", args...) }
	status, err := git("status", "--porcelain")
	if err != nil {
		return err
	}
	if strings.TrimSpace(status) != "" {
		return fmt.Errorf("the work tree has changes; commit or stash them first:\n%s", status)
	}
	ordered, err := r.Ordered()
	if err != nil {
		return err
	}
	var tags []string
	for _, m := range ordered {
		existing, err := git("tag", "--list", m.Rel+"/v*")
		if err != nil {
			return err
		}
		for _, t := range strings.Fields(existing) {
			if v := strings.TrimPrefix(t, m.Rel+"/"); semver.IsValid(v) && semver.Compare(v, version) >= 0 {
				return fmt.Errorf("%s already has the tag %s; a release must be newer than every existing one", m.Rel, t)
			}
		}
		tags = append(tags, m.Tag(version))
	}
	if dryRun {
		current, _ := r.Version()
		fmt.Fprintf(w, "would set the in-repo requirements from %s to %s, run the consumer check, commit, and tag in this order:\n", current, version)
		for _, t := range tags {
			fmt.Fprintln(w, "  "+t)
		}
		return nil
	}
	changed, err := r.SetVersion(version)
	if err != nil {
		return err
	}
	restore := func() {
		if len(changed) > 0 {
			git(append([]string{"checkout", "--"}, changed...)...)
		}
	}
	for _, m := range r.Modules {
		env := append(os.Environ(), "GOWORK=off")
		if _, err := run(ctx, m.Dir, env, "go", "mod", "tidy", "-diff"); err != nil {
			restore()
			return fmt.Errorf("go mod tidy would change %s at %s: %w", m.Rel, version, err)
		}
	}
	if err := consumerCheck(ctx, r, w, false, nil); err != nil {
		restore()
		return err
	}
	if len(changed) > 0 {
		if _, err := git(append([]string{"commit", "-m", "release " + version, "--"}, changed...)...); err != nil {
			restore()
			return err
		}
	}
	for i, m := range ordered {
		if _, err := git("tag", "-a", tags[i], "-m", m.Path+" "+version); err != nil {
			return fmt.Errorf("tagging %s (tags made so far: %s): %w", tags[i], strings.Join(tags[:i], " "), err)
		}
	}
	fmt.Fprintf(w, "tagged %d modules at %s. Nothing was pushed; to publish, push the commit and then the tags, core first:\n", len(tags), version)
	fmt.Fprintf(w, "  git push origin HEAD %s\n", strings.Join(tags, " "))
	return nil
}
