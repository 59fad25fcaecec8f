package main

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// consumerPrograms are the programs the consumer check builds: main.go with
// the check of one module (see consumerSpecs).
//
//go:embed testdata/consumers/*.go
var consumerPrograms embed.FS

// consumerSpec is what the consumer check knows of one released module.
type consumerSpec struct {
	// files are the program's files in testdata/consumers, besides main.go.
	files []string
	// program, for an adapter, is the adapter's own file of the program,
	// testdata/consumer.go in its directory, which opens it (func open).
	program string
	// also are other modules of the repository (by directory) the program
	// uses, fetched with the module; core always is.
	also []string
	// env names the variable with the test server's address, and backend
	// its AUTHPORT_REQUIRE name; "" when the program needs no server.
	env, backend string
	// drivers are the module path prefixes of an adapter's own driver,
	// which no consumer of another module may pull in.
	drivers []string
	// unopened are the module path prefixes of the drivers of the
	// module's other backends, which its program does not open
	// (postgres-gorm's MySQL and SQLite drivers for a PostgreSQL
	// program): the program may not build them, though its go.sum may
	// name them (the module's tests open them).
	unopened []string
}

// consumerProgram is where an adapter keeps its file of the consumer
// check's program, from the adapter's directory.
const consumerProgram = "testdata/consumer.go"

// consumerSpecs returns the modules the consumer check covers, by
// directory: the sign-in modules (their main call, no network) and every
// adapter, each a module under adapters/ of the workspace (a round trip
// through core/auth, with the adapter's own testdata/consumer.go, against
// the server of its first backend in the table of backends, whose rows
// also name the drivers).
func consumerSpecs(r *Repo) (map[string]consumerSpec, error) {
	specs := map[string]consumerSpec{
		"jwt":     {files: []string{"jwt.go"}},
		"oauth":   {files: []string{"oauth.go", "memoryauth.go"}, also: []string{"adapters/memory"}},
		"mail":    {files: []string{"mail.go"}},
		"handler": {files: []string{"handler.go", "memoryauth.go"}, also: []string{"adapters/memory"}},
		"passkey": {files: []string{"passkey.go", "memoryauth.go"}, also: []string{"adapters/memory"}},
		"tokens":  {files: []string{"tokens.go"}, also: []string{"adapters/memory"}},
		"totp":    {files: []string{"totp.go"}},
	}
	table, err := readBackends(r.Root)
	if err != nil {
		return nil, err
	}
	for _, m := range r.Modules {
		if !strings.HasPrefix(m.Rel, "adapters/") {
			continue
		}
		spec := consumerSpec{files: []string{"adapter.go"}, program: filepath.Join(m.Dir, filepath.FromSlash(consumerProgram))}
		first := true
		for _, b := range table {
			if b.Module != m.Rel {
				continue
			}
			if first {
				spec.env, spec.backend, first = b.Env, b.Name, false
			} else {
				// The program opens the first backend only: the drivers
				// of the module's other backends may be in its go.sum
				// (its tests open them), never in its build.
				spec.unopened = append(spec.unopened, b.Drivers...)
			}
			spec.drivers = append(spec.drivers, b.Drivers...)
		}
		specs[m.Rel] = spec
	}
	return specs, nil
}

// backendRow is what the consumer check reads of a row of the table of
// backends (conformance/backendtable/backends.json of the checkout).
type backendRow struct {
	Name    string   `json:"name"`
	Module  string   `json:"module"`
	Env     string   `json:"env"`
	Drivers []string `json:"drivers"`
}

// readBackends reads the table of backends of the checkout at root.
func readBackends(root string) ([]backendRow, error) {
	const path = "conformance/backendtable/backends.json"
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return nil, fmt.Errorf("the table of backends: %w", err)
	}
	var file struct{ Backends []backendRow }
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return file.Backends, nil
}

// Module path fragments no consumer may build or list in go.sum: container
// and Docker clients.
func neverInConsumer() []string { return []string{"testcontainers", "docker", "moby", "containerd"} }

// What no consumer may compile: the conformance suite. Its go.sum may still
// name it, because go mod tidy records the checksums of what a
// dependency's own tests import (so that `go test` of the dependency
// works), and every adapter tests itself with the suite.
func neverBuilt() []string { return []string{repoPrefix + "conformance"} }

// consumerResult is one row of the consumer check's table.
type consumerResult struct {
	Module    string   // e.g. adapters/bbolt
	Built     []string // modules whose packages the program compiles, itself excluded
	GoSum     int      // lines of the program's go.sum
	Forbidden []string // forbidden modules found in Built or go.sum
	Output    string   // what the program printed
	Skipped   string   // why the row did not run, when it did not
	Err       error
}

// consumerEnv is the environment of the go commands a consumer runs: a
// module outside any workspace, the repository's modules from the local
// proxy, everything else from the machine's module cache (read as a proxy,
// so nothing is downloaded twice) and then the usual proxy, and a module
// cache of its own, so the next run never sees a stale copy of a local
// module.
func consumerEnv(proxyDir, modCache string) ([]string, error) {
	shared, err := goEnv("GOMODCACHE")
	if err != nil {
		return nil, err
	}
	upstream, err := goEnv("GOPROXY")
	if err != nil {
		return nil, err
	}
	goproxy := "file://" + filepath.ToSlash(proxyDir) + ",file://" + filepath.ToSlash(filepath.Join(shared, "cache", "download"))
	if upstream != "" && upstream != "off" {
		goproxy += "," + upstream
	}
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOWORK", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOMODCACHE":
		default:
			env = append(env, kv)
		}
	}
	return append(env,
		"GOWORK=off",
		// -trimpath keeps the build cache's keys free of the module
		// cache's location, which is new on every run: the second run
		// compiles nothing that did not change.
		"GOFLAGS=-mod=mod -trimpath",
		"GOPROXY="+goproxy,
		"GONOSUMDB="+strings.TrimSuffix(repoPrefix, "/"), // not published yet: no checksum database entry
		"GOMODCACHE="+modCache,
	), nil
}

// runConsumer makes a module outside the repository that uses the adapter
// module m at version, builds and runs its program, and measures what the
// module pulled in.
func runConsumer(ctx context.Context, m *Module, specs map[string]consumerSpec, version, workDir string, env []string, required func(string) bool) consumerResult {
	spec := specs[m.Rel]
	res := consumerResult{Module: m.Rel}
	needs := spec
	if needs.env != "" && os.Getenv(needs.env) == "" {
		res.Skipped = needs.env + " is not set"
		if required(needs.backend) {
			res.Err = fmt.Errorf("%s is not set and AUTHPORT_REQUIRE names %s: start the server (scripts/services.sh does)", needs.env, needs.backend)
		}
		return res
	}
	dir := filepath.Join(workDir, strings.ReplaceAll(m.Rel, "/", "_"))
	if err := writeConsumer(dir, m.Rel, spec); err != nil {
		res.Err = err
		return res
	}
	goCmd := func(args ...string) (string, error) { return run(ctx, dir, env, "go", args...) }
	get := []string{"get", m.Path + "@" + version, repoPrefix + "core@" + version}
	for _, rel := range spec.also {
		get = append(get, repoPrefix+rel+"@"+version)
	}
	steps := [][]string{
		get,
		{"mod", "tidy"},
		{"build", "-tags", "authport_consumer", "-o", "consumer", "."},
	}
	for _, args := range steps {
		if _, err := goCmd(args...); err != nil {
			res.Err = err
			return res
		}
	}
	out, err := run(ctx, dir, env, filepath.Join(dir, "consumer"))
	res.Output = strings.TrimSpace(out)
	if err != nil {
		res.Err = err
		return res
	}
	list, err := goCmd("list", "-tags", "authport_consumer", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", ".")
	if err != nil {
		res.Err = err
		return res
	}
	for _, p := range strings.Fields(list) {
		if !slices.Contains(res.Built, p) {
			res.Built = append(res.Built, p)
		}
	}
	slices.Sort(res.Built)
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		res.Err = err
		return res
	}
	var sumModules []string
	sc := bufio.NewScanner(bytes.NewReader(sum))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 {
			res.GoSum++
			sumModules = append(sumModules, f[0])
		}
	}
	// Another adapter's driver may not appear anywhere; another adapter's
	// module may appear in go.sum (a module's tests may sign in through
	// adapters/memory) but never in the build.
	forbidden, unbuilt := neverInConsumer(), neverBuilt()
	for other, o := range specs {
		if other != m.Rel && !slices.Contains(spec.also, other) && strings.HasPrefix(other, "adapters/") {
			forbidden = append(forbidden, o.drivers...)
			unbuilt = append(unbuilt, repoPrefix+other)
		}
	}
	flag := func(mods, fragments []string) {
		for _, mod := range mods {
			for _, f := range fragments {
				if strings.Contains(mod, f) && !slices.Contains(res.Forbidden, mod) {
					res.Forbidden = append(res.Forbidden, mod)
				}
			}
		}
	}
	flag(slices.Concat(res.Built, sumModules), forbidden)
	flag(res.Built, unbuilt)
	flag(res.Built, spec.unopened)
	if len(res.Forbidden) > 0 {
		res.Err = fmt.Errorf("a consumer of %s pulls in %s", m.Rel, strings.Join(res.Forbidden, ", "))
	}
	return res
}

// writeConsumer writes into dir the consumer module of the module in
// directory rel: main.go, the spec's program files and, for an adapter,
// its own file.
func writeConsumer(dir, rel string, spec consumerSpec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{"go.mod": "module example.com/authport-consumer/" + rel + "\n\ngo 1.26\n"}
	for _, f := range append([]string{"main.go"}, spec.files...) {
		data, err := consumerPrograms.ReadFile("testdata/consumers/" + f)
		if err != nil {
			return fmt.Errorf("consumer program %s: %w", f, err)
		}
		files[f] = string(data)
	}
	if spec.program != "" {
		data, err := os.ReadFile(spec.program)
		if err != nil {
			return fmt.Errorf("no consumer program: write %s/%s, whose func open opens the adapter (see CONTRIBUTING.md, \"Adding a backend\"): %w", rel, consumerProgram, err)
		}
		files["open.go"] = string(data)
	}
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// consumerCheck builds the local proxy for the repository at its current
// version and runs a consumer of every adapter module; it prints the table
// to w and fails if any row failed.
func consumerCheck(ctx context.Context, r *Repo, w io.Writer, keep bool, only []string) error {
	version, err := r.Version()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "authport-consumers")
	if err != nil {
		return err
	}
	modCache := filepath.Join(work, "modcache")
	defer func() {
		if keep {
			fmt.Fprintf(w, "kept %s\n", work)
			return
		}
		// The module cache is read-only; go clean knows how to remove it.
		run(context.Background(), work, []string{"GOMODCACHE=" + modCache, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, "go", "clean", "-modcache")
		os.RemoveAll(work)
	}()
	proxyDir := filepath.Join(work, "proxy")
	if err := buildProxy(r, version, proxyDir); err != nil {
		return err
	}
	env, err := consumerEnv(proxyDir, modCache)
	if err != nil {
		return err
	}
	required := requiredBackends(os.Getenv("AUTHPORT_REQUIRE"))
	fmt.Fprintf(w, "consumer check: every adapter and sign-in module at %s from a local proxy of the working tree, in a module outside the repository (GOWORK=off)\n", version)
	fmt.Fprintf(w, "  %-24s %13s %12s  %-9s %s\n", "module", "modules built", "go.sum lines", "forbidden", "result")
	var failed []string
	specs, err := consumerSpecs(r)
	if err != nil {
		return err
	}
	for _, m := range r.Modules {
		if _, ok := specs[m.Rel]; !ok || (len(only) > 0 && !slices.Contains(only, m.Rel)) {
			continue // core, conformance: used by every consumer, or by tests only
		}
		start := time.Now()
		res := runConsumer(ctx, m, specs, version, work, env, required)
		forbidden := "none"
		if len(res.Forbidden) > 0 {
			forbidden = strings.Join(res.Forbidden, ",")
		}
		result := fmt.Sprintf("ok (%.0fs)", time.Since(start).Seconds())
		switch {
		case res.Err != nil:
			result = "FAILED: " + res.Err.Error()
			failed = append(failed, m.Rel)
		case res.Skipped != "":
			result = "skipped: " + res.Skipped
		}
		if res.Skipped != "" || (res.Err != nil && res.Built == nil) {
			fmt.Fprintf(w, "  %-24s %13s %12s  %-9s %s\n", res.Module, "-", "-", "-", result)
		} else {
			fmt.Fprintf(w, "  %-24s %13d %12d  %-9s %s\n", res.Module, len(res.Built), res.GoSum, forbidden, result)
		}
		if res.Output != "" {
			fmt.Fprintf(w, "  %-24s %s\n", "", firstLine(res.Output))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("the consumer check failed for %s", strings.Join(failed, ", "))
	}
	return nil
}

// requiredBackends reads AUTHPORT_REQUIRE (a comma list of backend names,
// or "all").
func requiredBackends(v string) func(string) bool {
	names := strings.Split(v, ",")
	for i := range names {
		names[i] = strings.ToLower(strings.TrimSpace(names[i])) // as conformance/provision reads them
	}
	return func(b string) bool {
		return slices.Contains(names, "all") || slices.Contains(names, strings.ToLower(b))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// goEnv returns one value of `go env`.
func goEnv(key string) (string, error) {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", key, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// run runs name with args in dir and returns its standard output; an error
// carries the command and the end of what it printed.
func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String() + "\n" + stdout.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, msg)
	}
	return stdout.String(), nil
}
