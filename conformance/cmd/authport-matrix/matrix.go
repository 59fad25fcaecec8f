package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/authport/authport/conformance/backendtable"
	"github.com/authport/authport/core"
)

// backendOrder is the order of the repository's backends in the matrix,
// the order of the table of backends (conformance/backendtable); others
// follow alphabetically.
func backendOrder() []string {
	table, _ := backendtable.Read() // a broken table fails backendtable's own test
	return table.Names()
}

// Cell values.
const (
	cellPass    = "pass"
	cellFail    = "FAIL"
	cellNotImpl = "n/i"
	cellSkip    = "skip"
	cellNone    = "-"
)

// counts are rule results.
type counts struct {
	pass, fail, skip int
	notImpl          int // of skip: skipped because a method is not implemented
}

func (c counts) total() int { return c.pass + c.fail + c.skip }

// group is one backend's results for one spec method (or other group).
type group struct {
	rules counts
	own   string // the result of the group's own subtest: pass, fail, skip, unfinished or ""
	ownNI bool   // the group itself was skipped as not implemented
}

// cell is the group's matrix cell.
func (g *group) cell() string {
	switch {
	case g == nil:
		return cellNone
	case g.rules.fail > 0 || g.own == "fail" || g.own == "unfinished":
		return cellFail
	case g.rules.pass > 0:
		return cellPass
	case g.rules.notImpl > 0:
		return cellNotImpl
	case g.rules.skip > 0:
		return cellSkip
	case g.own == "pass": // a group without rule subtests
		return cellPass
	case g.own == "skip" && g.ownNI:
		return cellNotImpl
	case g.own == "skip":
		return cellSkip
	}
	return cellNone
}

// backend is one backend's results.
type backend struct {
	name        string
	groups      map[string]*group
	rules       counts
	own         string         // the result of TestConformance/<backend>
	ownMessage  string         // what that test logged itself
	skipReasons map[string]int // the messages of rules skipped for reasons other than n/i
}

// unavailable returns the reason a backend ran nothing, and whether it
// did: its own test was skipped, or every rule was skipped for the same
// kind of reason that is not a missing method (a harness that provisions
// the database in each test rather than once).
func (b *backend) unavailable() (string, bool) {
	if b.rules.pass > 0 || b.rules.fail > 0 || b.own == "fail" || b.own == "unfinished" {
		return "", false
	}
	if b.own == "skip" && b.rules.total() == 0 {
		return firstNonEmpty(b.ownMessage, "skipped, no reason given"), true
	}
	if b.rules.skip > 0 && b.rules.notImpl < b.rules.skip {
		reason, most := "", 0
		for r, n := range b.skipReasons {
			if n > most || (n == most && r < reason) {
				reason, most = r, n
			}
		}
		return firstNonEmpty(reason, "skipped, no reason given"), true
	}
	return "", false
}

// failedEarly returns why a backend failed before any rule ran, and
// whether it did.
func (b *backend) failedEarly() (string, bool) {
	if (b.own == "fail" || b.own == "unfinished") && b.rules.total() == 0 && len(b.groups) == 0 {
		return firstNonEmpty(b.ownMessage, "failed, no message"), true
	}
	return "", false
}

// matrix is everything read from the input.
type matrix struct {
	sawSuite       bool
	backends       map[string]*backend
	suiteFailed    []string // packages whose TestConformance itself failed
	broken         []string // packages that did not build, and FAIL lines outside events
	failedPackages []string // packages that failed with no failed test to say why
	otherFailed    []string // failed tests outside TestConformance
}

func newMatrix() *matrix { return &matrix{backends: make(map[string]*backend)} }

// hasBroken reports whether the package is recorded as not built.
func (m *matrix) hasBroken(pkg string) bool {
	for _, b := range m.broken {
		if b == pkg || strings.HasPrefix(b, pkg+" [") {
			return true
		}
	}
	return false
}

// result records the end of the test TestConformance/<path...> with
// action pass, fail, skip or unfinished.
func (m *matrix) result(pkg string, path []string, action string, output []string) {
	if len(path) == 0 {
		if action == "fail" || action == "unfinished" {
			m.suiteFailed = append(m.suiteFailed, pkg)
		}
		return
	}
	b := m.backends[path[0]]
	if b == nil {
		b = &backend{name: path[0], groups: make(map[string]*group), skipReasons: make(map[string]int)}
		m.backends[path[0]] = b
	}
	if len(path) == 1 {
		b.own, b.ownMessage = action, message(output)
		return
	}
	g := b.groups[path[1]]
	if g == nil {
		g = &group{}
		b.groups[path[1]] = g
	}
	switch len(path) {
	case 2:
		g.own = action
		g.ownNI = action == "skip" && notImplemented(output)
	case 3:
		for _, c := range []*counts{&g.rules, &b.rules} {
			switch action {
			case "pass":
				c.pass++
			case "fail", "unfinished":
				c.fail++
			case "skip":
				c.skip++
				if notImplemented(output) {
					c.notImpl++
				}
			}
		}
		if action == "skip" && !notImplemented(output) {
			b.skipReasons[message(output)]++
		}
	}
	// Deeper subtests are parts of a rule, whose own result counts.
}

// failed reports whether the exit status must say failure.
func (m *matrix) failed() bool {
	if !m.sawSuite || len(m.backends) == 0 || len(m.suiteFailed) > 0 || len(m.broken) > 0 ||
		len(m.failedPackages) > 0 || len(m.otherFailed) > 0 {
		return true
	}
	for _, b := range m.backends {
		if b.rules.fail > 0 || b.own == "fail" || b.own == "unfinished" {
			return true
		}
		for _, g := range b.groups {
			if g.cell() == cellFail {
				return true
			}
		}
	}
	return false
}

// sortedBackends returns the backends in the matrix's order.
func (m *matrix) sortedBackends() []*backend {
	order := backendOrder()
	var bs []*backend
	for _, b := range m.backends {
		bs = append(bs, b)
	}
	rank := func(name string) int {
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(bs, func(a, b *backend) int {
		if ra, rb := rank(a.name), rank(b.name); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.name, b.name)
	})
	return bs
}

// groupNames returns the rows: the spec methods in spec order, then every
// other group seen, alphabetically.
func (m *matrix) groupNames() []string {
	var names []string
	for _, meth := range core.Methods() {
		names = append(names, string(meth))
	}
	var others []string
	for _, b := range m.backends {
		for name := range b.groups {
			if !slices.Contains(names, name) && !slices.Contains(others, name) {
				others = append(others, name)
			}
		}
	}
	slices.Sort(others)
	return append(names, others...)
}

const legend = `legend: pass = no rule failed and at least one passed; FAIL = a rule failed;
        n/i = not implemented (rules skipped: the adapter lacks a method they need);
        skip = rules skipped for another reason; - = no rule of this method ran`

// render prints the matrix.
func (m *matrix) render(w io.Writer) {
	if !m.sawSuite {
		fmt.Fprintln(w, "authport-matrix: no TestConformance results in the input: nothing ran, or the input is not `go test -json` output")
		m.renderProblems(w)
		fmt.Fprintln(w, "FAIL")
		return
	}
	var columns []*backend
	type note struct{ name, text string }
	var notes []note
	for _, b := range m.sortedBackends() {
		if reason, ok := b.failedEarly(); ok {
			notes = append(notes, note{b.name, "FAILED before any rule ran: " + reason})
			continue
		}
		if reason, ok := b.unavailable(); ok {
			notes = append(notes, note{b.name, "unavailable: " + reason})
			continue
		}
		columns = append(columns, b)
	}

	fmt.Fprintln(w, "authport conformance matrix: spec method x backend")
	fmt.Fprintln(w)
	if len(columns) == 0 {
		fmt.Fprintln(w, "no backend ran any rule")
	} else {
		rows := m.groupNames()
		first := len("rules skipped")
		for _, r := range rows {
			first = max(first, len(r))
		}
		widths := make([]int, len(columns))
		for i, b := range columns {
			widths[i] = max(len(b.name), len(cellPass))
		}
		line := func(label string, cells []string) {
			var sb strings.Builder
			fmt.Fprintf(&sb, "%-*s", first, label)
			for i, c := range cells {
				fmt.Fprintf(&sb, "  %-*s", widths[i], c)
			}
			fmt.Fprintln(w, strings.TrimRight(sb.String(), " "))
		}
		cells := func(f func(b *backend) string) []string {
			out := make([]string, len(columns))
			for i, b := range columns {
				out[i] = f(b)
			}
			return out
		}
		line("method", cells(func(b *backend) string { return b.name }))
		line(strings.Repeat("-", first), cells(func(b *backend) string { return strings.Repeat("-", len(b.name)) }))
		for _, r := range rows {
			line(r, cells(func(b *backend) string { return b.groups[r].cell() }))
		}
		line(strings.Repeat("-", first), cells(func(b *backend) string { return strings.Repeat("-", len(b.name)) }))
		line("rules passed", cells(func(b *backend) string { return fmt.Sprint(b.rules.pass) }))
		line("rules failed", cells(func(b *backend) string { return fmt.Sprint(b.rules.fail) }))
		line("rules skipped", cells(func(b *backend) string { return fmt.Sprint(b.rules.skip) }))
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		width := 0
		for _, n := range notes {
			width = max(width, len(n.name))
		}
		for _, n := range notes {
			fmt.Fprintf(w, "%-*s  %s\n", width, n.name, n.text)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, legend)
	m.renderProblems(w)

	var total counts
	for _, b := range m.backends {
		total.pass += b.rules.pass
		total.fail += b.rules.fail
		total.skip += b.rules.skip
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "rules: %d passed, %d failed, %d skipped\n", total.pass, total.fail, total.skip)
	if m.failed() {
		fmt.Fprintln(w, "FAIL")
	} else {
		fmt.Fprintln(w, "ok")
	}
}

// renderProblems lists what failed outside the matrix's cells.
func (m *matrix) renderProblems(w io.Writer) {
	list := func(title string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(w, "\n%s:\n  %s\n", title, strings.Join(items, "\n  "))
		}
	}
	list("did not build (output above, on standard error)", m.broken)
	list("tests outside TestConformance failed", m.otherFailed)
	var pkgs []string
	for _, p := range m.failedPackages {
		if !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	list("packages failed outside any test (output above, on standard error)", pkgs)
}
