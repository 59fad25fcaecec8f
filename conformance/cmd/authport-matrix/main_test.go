package main

// testdata/ok.json and testdata/failures.json were recorded with
// `go test -short -json -run '^TestConformance$'` on a throwaway module
// shaped like this repository's adapters: a memory package; a bbolt package
// whose adapter lacks getUserByAccount and purgeExpired (skipped as the suite
// skips them); a gorm package whose postgres and mysql backends are skipped
// as unavailable and whose sqlite backend skips one rule in -short mode. In
// failures.json the bbolt rule deleteUser/round_trip fails and a redis
// package does not build.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/authport/authport/core"
)

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
	cells          map[string]map[string]string // row -> backend -> cell
	columns        []string
	rows           []string // the row labels, in order
}

func runWith(t *testing.T, args []string, stdin string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	r := result{code: code, stdout: out.String(), stderr: errOut.String()}
	r.cells, r.columns, r.rows = parseTable(out.String())
	return r
}

// parseTable reads the matrix back from the command's output.
func parseTable(out string) (map[string]map[string]string, []string, []string) {
	cells := map[string]map[string]string{}
	var columns, rows []string
	in := false
	for line := range strings.SplitSeq(out, "\n") {
		fields := strings.Fields(line)
		switch {
		case !in && len(fields) > 0 && fields[0] == "method":
			in, columns = true, fields[1:]
			continue
		case !in:
			continue
		case len(fields) == 0:
			return cells, columns, rows
		case strings.HasPrefix(fields[0], "---"):
			continue
		}
		label, values := fields[0], fields[1:]
		if label == "rules" && len(fields) > 1 {
			label, values = "rules "+fields[1], fields[2:]
		}
		row := map[string]string{}
		for i, c := range columns {
			if i < len(values) {
				row[c] = values[i]
			}
		}
		cells[label] = row
		rows = append(rows, label)
	}
	return cells, columns, rows
}

func (r result) expectCell(t *testing.T, row, backend, want string) {
	t.Helper()
	if got := r.cells[row][backend]; got != want {
		t.Errorf("cell %s × %s = %q, want %q\n%s", row, backend, got, want, r.stdout)
	}
}

func TestRecordedPassingRun(t *testing.T) {
	r := runWith(t, []string{filepath.Join("testdata", "ok.json")}, "")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got, want := strings.Join(r.columns, " "), "memory bbolt sqlite"; got != want {
		t.Errorf("columns %q, want %q", got, want)
	}
	for _, m := range core.Methods() {
		r.expectCell(t, string(m), "memory", "pass")
		r.expectCell(t, string(m), "sqlite", "pass")
		want := "pass"
		if m == core.MethodGetUserByAccount {
			want = "n/i"
		}
		r.expectCell(t, string(m), "bbolt", want)
	}
	r.expectCell(t, "purgeExpired", "bbolt", "n/i")
	r.expectCell(t, "purgeExpired", "memory", "pass")
	r.expectCell(t, "rules passed", "memory", "22")
	r.expectCell(t, "rules skipped", "bbolt", "2")
	r.expectCell(t, "rules skipped", "sqlite", "1") // skipped in -short mode: the cell still passes
	r.expectCell(t, "rules failed", "sqlite", "0")
	for _, want := range []string{
		"postgres  unavailable: no PostgreSQL: set AUTHPORT_POSTGRES_URL or run a Docker engine\n",
		"mysql     unavailable: no MySQL/MariaDB: set AUTHPORT_MYSQL_URL or run a Docker engine\n",
		"legend:",
		"\nrules: 63 passed, 0 failed, 3 skipped\nok\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr of a passing run: %q", r.stderr)
	}
}

func TestRecordedFailingRun(t *testing.T) {
	r := runWith(t, []string{filepath.Join("testdata", "failures.json")}, "")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stdout)
	}
	r.expectCell(t, "deleteUser", "bbolt", "FAIL")
	r.expectCell(t, "deleteUser", "memory", "pass")
	r.expectCell(t, "getUserByAccount", "bbolt", "n/i")
	r.expectCell(t, "rules failed", "bbolt", "1")
	r.expectCell(t, "rules passed", "bbolt", "19")
	for _, want := range []string{
		"did not build (output above, on standard error):\n  github.com/authport/authport/fixture/redis [",
		"\nrules: 62 passed, 1 failed, 3 skipped\nFAIL\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "packages failed") {
		t.Errorf("a package whose failure the matrix shows is listed again:\n%s", r.stdout)
	}
	for _, want := range []string{
		"=== failed: github.com/authport/authport/fixture/bbolt TestConformance/bbolt/deleteUser/round_trip\n",
		`bbolt_test.go:26: got "boom", want nil error`,
		"redis/redis_test.go:5:38: undefined: conformance",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "=== RUN") || strings.Contains(r.stderr, "TestConformance/bbolt/deleteUser (") {
		t.Errorf("stderr carries framing lines or a parent's bare FAIL line:\n%s", r.stderr)
	}
}

// stream builds go test -json lines; each step is "action test [output]".
func stream(pkg string, steps ...string) string {
	var b strings.Builder
	for _, s := range steps {
		action, rest, _ := strings.Cut(s, " ")
		test, output, _ := strings.Cut(rest, " | ")
		e := map[string]any{"Time": "2026-11-21T15:40:44Z", "Action": action, "Package": pkg}
		if test != "" && test != "-" {
			e["Test"] = test
		}
		if action == "output" {
			e["Output"] = output + "\n"
		}
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// rules returns the events of one rule subtest ending in action, with
// optional log lines.
func rule(test, action string, logs ...string) []string {
	steps := []string{"run " + test, "output " + test + " | === RUN   " + test}
	for _, l := range logs {
		steps = append(steps, "output "+test+" |     x_test.go:7: "+l)
	}
	return append(steps, fmt.Sprintf("output %s | --- %s: %s (0.00s)", test, strings.ToUpper(action), test), action+" "+test)
}

func concat(parts ...[]string) []string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

func TestCells(t *testing.T) {
	const b = "TestConformance/memory/"
	tests := []struct {
		name  string
		steps []string
		want  string
		code  int
	}{
		{"pass", concat(rule(b+"getUser/a", "pass"), rule(b+"getUser/b", "pass")), "pass", 0},
		{"one fail", concat(rule(b+"getUser/a", "pass"), rule(b+"getUser/b", "fail", "wrong")), "FAIL", 1},
		{"pass and skip", concat(rule(b+"getUser/a", "pass"), rule(b+"getUser/b", "skip", "slow")), "pass", 0},
		{"not implemented", concat(rule(b+"getUser/a", "skip", "adapter *x.A does not implement [getUser]")), "n/i", 0},
		{"skip", concat(rule(b+"getUser/a", "skip", "needs a clock")), "skip", 0},
		{"group skipped as n/i", rule(b+"getUser", "skip", "adapter *x.A does not implement getUser"), "n/i", 0},
		{"group failed without rules", rule(b+"getUser", "fail", "setup"), "FAIL", 1},
		{"unfinished rule", concat(rule(b+"getUser/a", "pass"), []string{"run " + b + "getUser/b"}), "FAIL", 1},
		{"deeper subtests do not count twice", concat(rule(b+"getUser/a/x", "fail", "no"), rule(b+"getUser/a", "fail")), "FAIL", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := concat(rule(b+"createUser/a", "pass"), tt.steps)
			r := runWith(t, nil, stream("example.com/p", steps...))
			r.expectCell(t, "getUser", "memory", tt.want)
			r.expectCell(t, "createUser", "memory", "pass")
			r.expectCell(t, "updateUser", "memory", "-")
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tt.code, r.stdout)
			}
		})
	}
	r := runWith(t, nil, stream("p", concat(rule(b+"getUser/a/x", "fail"), rule(b+"getUser/a", "fail"))...))
	r.expectCell(t, "rules failed", "memory", "1")
}

func TestOrder(t *testing.T) {
	var steps []string
	for _, backend := range []string{"zeta", "mongodb", "memory", "alpha", "redis-cluster"} {
		for _, g := range []string{"flows", "createUser", "listAuthenticatorsByUserId", "bulk"} {
			steps = append(steps, rule("TestConformance/"+backend+"/"+g+"/r", "pass")...)
		}
	}
	r := runWith(t, nil, stream("p", steps...))
	if got, want := strings.Join(r.columns, " "), "memory redis-cluster mongodb alpha zeta"; got != want {
		t.Errorf("columns %q, want %q", got, want)
	}
	rows := r.rows
	want := make([]string, 0, 24)
	for _, m := range core.Methods() {
		want = append(want, string(m))
	}
	want = append(want, "bulk", "flows", "rules passed", "rules failed", "rules skipped")
	if strings.Join(rows, " ") != strings.Join(want, " ") {
		t.Errorf("rows\n%q, want\n%q", rows, want)
	}
}

func TestUnavailableBackends(t *testing.T) {
	steps := concat(
		rule("TestConformance/memory/createUser/a", "pass"),
		rule("TestConformance/postgres", "skip", "no PostgreSQL: set AUTHPORT_POSTGRES_URL or run a Docker engine"),
		// A harness that provisions in every rule: each rule skips alike.
		rule("TestConformance/redis/createUser/a", "skip", "no Redis: set AUTHPORT_REDIS_URL or run a Docker engine"),
		rule("TestConformance/redis/getUser/a", "skip", "no Redis: set AUTHPORT_REDIS_URL or run a Docker engine"),
		rule("TestConformance/redis", "pass"),
		// An adapter that implements nothing is not unavailable.
		rule("TestConformance/sqlite/createUser/a", "skip", "adapter *x.A does not implement [createUser]"),
	)
	r := runWith(t, nil, stream("p", steps...))
	if r.code != 0 {
		t.Errorf("exit %d, want 0", r.code)
	}
	for _, want := range []string{
		"\nredis     unavailable: no Redis: set AUTHPORT_REDIS_URL or run a Docker engine\n",
		"\npostgres  unavailable: no PostgreSQL: set AUTHPORT_POSTGRES_URL or run a Docker engine\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if got := strings.Join(r.columns, " "); got != "memory sqlite" {
		t.Errorf("columns %q, want memory sqlite", got)
	}
	r.expectCell(t, "createUser", "sqlite", "n/i")
}

func TestBackendFailedBeforeAnyRule(t *testing.T) {
	steps := concat(
		rule("TestConformance/memory/createUser/a", "pass"),
		rule("TestConformance/postgres", "fail",
			"no PostgreSQL: set AUTHPORT_POSTGRES_URL or run a Docker engine (AUTHPORT_REQUIRE requires postgres)"),
		rule("TestConformance", "fail"),
	)
	r := runWith(t, nil, stream("p", steps...))
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	want := "postgres  FAILED before any rule ran: no PostgreSQL: set AUTHPORT_POSTGRES_URL or run a Docker engine (AUTHPORT_REQUIRE requires postgres)\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, r.stdout)
	}
	if !strings.Contains(r.stderr, "AUTHPORT_REQUIRE requires postgres") {
		t.Errorf("stderr lacks the failure:\n%s", r.stderr)
	}
}

func TestNothingToShow(t *testing.T) {
	tests := []struct {
		name, input string
	}{
		{"empty", ""},
		{"not json", "hello\nworld\n"},
		{"other tests only", stream("p", rule("TestOther", "pass")...)},
		{"no backend", stream("p", rule("TestConformance", "pass")...)},
		{"build failure only", `{"ImportPath":"x [x.test]","Action":"build-output","Output":"x.go:1: oops\n"}
{"ImportPath":"x [x.test]","Action":"build-fail"}
{"Action":"start","Package":"x"}
{"Action":"output","Package":"x","Output":"FAIL\tx [build failed]\n"}
{"Action":"fail","Package":"x","Elapsed":0,"FailedBuild":"x [x.test]"}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runWith(t, nil, tt.input)
			if r.code != 1 {
				t.Errorf("exit %d, want 1\n%s", r.code, r.stdout)
			}
			if !strings.Contains(r.stdout, "no TestConformance results") && !strings.Contains(r.stdout, "no backend ran any rule") {
				t.Errorf("output does not say that nothing ran:\n%s", r.stdout)
			}
		})
	}
}

func TestFailuresOutsideTheMatrix(t *testing.T) {
	ok := stream("p", rule("TestConformance/memory/createUser/a", "pass")...)
	tests := []struct {
		name, input, stdout, stderr string
		code                        int
	}{
		{name: "clean", input: ok, code: 0},
		{
			name: "text FAIL line", input: "FAIL\texample.com/q [setup failed]\n" + ok, code: 1,
			stdout: "did not build", stderr: "example.com/q [setup failed]",
		},
		{name: "harmless text line", input: "go: downloading example.com/m v1.0.0\n" + ok, code: 0, stderr: "go: downloading"},
		{
			name: "old go build failure", code: 1, stdout: "example.com/q",
			input: ok + stream("example.com/q", "start -", "output - | FAIL\texample.com/q [build failed]", "fail -"),
		},
		{
			name: "package failed outside tests", code: 1, stdout: "packages failed outside any test", stderr: "TestMain: no database",
			input: ok + stream("example.com/q", "start -", "output - | TestMain: no database", "output - | FAIL\texample.com/q\t0.01s", "fail -"),
		},
		{
			name: "other test failed", code: 1, stdout: "tests outside TestConformance failed:\n  p TestOther", stderr: "bad",
			input: ok + stream("p", rule("TestOther", "fail", "bad")...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runWith(t, nil, tt.input)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tt.code, r.stdout)
			}
			if !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stdout lacks %q or stderr lacks %q\nstdout:\n%s\nstderr:\n%s", tt.stdout, tt.stderr, r.stdout, r.stderr)
			}
			r.expectCell(t, "createUser", "memory", "pass")
		})
	}
}

func TestArguments(t *testing.T) {
	if r := runWith(t, []string{filepath.Join("testdata", "missing.json")}, ""); r.code != 2 || !strings.Contains(r.stderr, "missing.json") {
		t.Errorf("missing file: exit %d, stderr %q; want 2 and the file named", r.code, r.stderr)
	}
	if r := runWith(t, []string{"-h"}, ""); r.code != 0 || !strings.Contains(r.stdout, "usage:") {
		t.Errorf("-h: exit %d, stdout %q", r.code, r.stdout)
	}
	// Two inputs merge; "-" is standard input.
	stdin := stream("p", rule("TestConformance/redis/createUser/a", "pass")...)
	r := runWith(t, []string{filepath.Join("testdata", "ok.json"), "-"}, stdin)
	if r.code != 0 || strings.Join(r.columns, " ") != "memory bbolt redis sqlite" {
		t.Errorf("exit %d, columns %q", r.code, r.columns)
	}
}

func TestStripFileLine(t *testing.T) {
	for in, want := range map[string]string{
		"x_test.go:12: no PostgreSQL: set it": "no PostgreSQL: set it",
		"provision.go:7: a":                   "a",
		"no file: here":                       "no file: here",
		"a b.go:1: c":                         "a b.go:1: c",
		"x.go:1a: c":                          "x.go:1a: c",
		".go:1: c":                            ".go:1: c",
	} {
		if got := stripFileLine(in); got != want {
			t.Errorf("stripFileLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// -progress says as each backend starts and ends, with its counts; without
// it the same run writes no progress.
func TestProgress(t *testing.T) {
	r := runWith(t, []string{"-progress", filepath.Join("testdata", "ok.json")}, "")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, b := range []string{"memory", "bbolt", "sqlite"} {
		if !regexp.MustCompile(`(?m)^  `+b+` +running$`).MatchString(r.stderr) ||
			!regexp.MustCompile(`(?m)^  `+b+` +pass in [0-9.]+s: [1-9][0-9]* rules passed, 0 failed, [0-9]+ skipped$`).MatchString(r.stderr) {
			t.Errorf("no progress lines for %s:\n%s", b, r.stderr)
		}
	}
	if quiet := runWith(t, []string{filepath.Join("testdata", "ok.json")}, ""); strings.Contains(quiet.stderr, "running") {
		t.Errorf("progress without -progress:\n%s", quiet.stderr)
	}
}
