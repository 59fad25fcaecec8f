// Command authport-matrix reads the `go test -json` output of the
// conformance runs and prints which adapter passes which spec method.
//
// Usage:
//
//	go test -json -run '^TestConformance$' ./... | authport-matrix
//	authport-matrix results.json [more.json ...]
//
// With -progress it writes a line to standard error as each backend starts
// and as it ends (with its rules passed, failed and skipped, and its time).
//
// It reads the named files in turn, or standard input when there are none
// (or for "-"). Every TestConformance/<backend>/<group>/<rule> subtest
// counts; a group is one of the 19 spec methods of core.Methods() or a rule
// group beyond them (such as purgeExpired), shown after them alphabetically.
//
// The matrix has a row per group and a column per backend: the 19 method
// names are up to 26 characters wide and the backends at most 13, so 19
// columns of methods would not fit a terminal, while 8 columns of backends
// fit in about 100. A cell is
//
//	pass  at least one rule passed and none failed
//	FAIL  a rule, or the group itself, failed
//	n/i   not implemented: every rule was skipped because the adapter does
//	      not implement a method it needs
//	skip  every rule was skipped, for another reason
//	-     the backend ran no rule of this group
//
// Below the table are each backend's totals of rules passed, failed and
// skipped, and one row for each backend whose database was unavailable
// (TestConformance/<backend> itself skipped: "unavailable: <reason>").
//
// The output of every failed test, and the compiler's output for a package
// that did not build, goes to standard error as it arrives, so that a user
// sees why. The exit status is 0 when nothing failed, 1 when a rule, test
// or package failed, a package did not build, or the input held no
// TestConformance result at all (an empty matrix is never a success), and
// 2 when the input could not be read.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the command with its arguments and streams; it returns the exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	progress := false
	var files []string
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			fmt.Fprintln(stdout, usage)
			return 0
		case "-progress":
			progress = true
		default:
			files = append(files, a)
		}
	}
	args = files
	if len(args) == 0 {
		args = []string{"-"}
	}
	c := newCollector(stderr)
	if progress {
		c.progress = stderr
	}
	for _, name := range args {
		if err := readInput(c, name, stdin); err != nil {
			fmt.Fprintf(stderr, "authport-matrix: %v\n", err)
			return 2
		}
	}
	m := c.finish()
	m.render(stdout)
	if m.failed() {
		return 1
	}
	return 0
}

const usage = `usage: go test -json -run '^TestConformance$' ./... | authport-matrix [-progress]
       authport-matrix [-progress] [file.json ...]

-progress writes a line to standard error as each backend starts and ends.

Prints the conformance matrix (spec method x backend) of go test -json
output; exits 1 when anything failed or no conformance result was found.`

// readInput feeds the file called name (or stdin for "-") to c.
func readInput(c *collector, name string, stdin io.Reader) error {
	if name == "-" {
		return c.read(stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := c.read(f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
