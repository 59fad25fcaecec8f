// Command release releases authport's modules and proves, before any tag
// exists, that a module outside the repository can use every adapter
// through them.
//
//	release modules                 the released modules in dependency order, with their tags
//	release version                 the version the go.mod files require each other at
//	release set-version VERSION     rewrite every in-repo requirement to VERSION
//	release consumers [-keep] [-only DIRS]  the consumer check (see consumer.go)
//	release proxy DIR               serve the working tree as a module proxy in DIR (before tags exist)
//	release tag [-n] VERSION        check the tree, set VERSION, commit, tag every module
//
// The repository root is found from the working directory (git), or given
// with -C DIR before the subcommand. scripts/release.sh and
// scripts/test.sh call this program; CONTRIBUTING.md describes the release
// steps.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run1(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

const usage = `usage: release [-C DIR] modules | version | set-version VERSION | consumers [-keep] [-only DIRS] | proxy DIR | tag [-n] VERSION`

func run1(ctx context.Context, args []string) error {
	global := flag.NewFlagSet("release", flag.ContinueOnError)
	root := global.String("C", "", "the repository root (default: the git top level of the working directory)")
	if err := global.Parse(args); err != nil {
		return err
	}
	args = global.Args()
	if len(args) == 0 {
		return errors.New(usage)
	}
	if *root == "" {
		top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			return fmt.Errorf("finding the repository root (run inside the checkout or pass -C): %w", err)
		}
		*root = strings.TrimSpace(string(top))
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	r, err := loadRepo(abs)
	if err != nil {
		return err
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "modules":
		ordered, err := r.Ordered()
		if err != nil {
			return err
		}
		version, _ := r.Version()
		for _, m := range ordered {
			fmt.Printf("%-48s %s\n", m.Path, m.Tag(version))
		}
		return nil
	case "version":
		v, err := r.Version()
		if err != nil {
			return err
		}
		fmt.Println(v)
		return nil
	case "set-version":
		if len(args) != 1 {
			return errors.New("usage: release set-version VERSION")
		}
		changed, err := r.SetVersion(args[0])
		for _, c := range changed {
			fmt.Println("updated", c)
		}
		return err
	case "consumers":
		fs := flag.NewFlagSet("consumers", flag.ContinueOnError)
		keep := fs.Bool("keep", false, "keep the proxy and the consumer modules (their directory is printed)")
		only := fs.String("only", "", "comma-separated module directories to check (default: every adapter and sign-in module)")
		if err := fs.Parse(args); err != nil {
			return err
		}
		var modules []string
		if *only != "" {
			modules = strings.Split(*only, ",")
		}
		return consumerCheck(ctx, r, os.Stdout, *keep, modules)
	case "proxy":
		if len(args) != 1 {
			return errors.New("usage: release proxy DIR")
		}
		return proxyCommand(r, args[0], os.Stdout, os.Stderr)
	case "tag":
		fs := flag.NewFlagSet("tag", flag.ContinueOnError)
		dryRun := fs.Bool("n", false, "check and print what would be done; change nothing")
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("usage: release tag [-n] VERSION")
		}
		return tagRelease(ctx, r, fs.Arg(0), *dryRun, os.Stdout)
	default:
		return fmt.Errorf("unknown subcommand %q\n%s", cmd, usage)
	}
}
