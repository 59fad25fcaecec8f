// Command bench measures every adapter whose database is reachable beside a
// raw baseline on the same database and driver: see README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/authport/authport/conformance/backendtable"
)

// benched reports whether the bench has an opener for the backend name
// (see open): the others of the table of backends (redis-sentinel,
// postgres-ha) are reached through the same drivers as a plain server.
func benched(name string) bool {
	switch name {
	case "memory", "bbolt", "sqlite", "postgres", "mysql", "redis", "redis-cluster", "mongodb":
		return true
	}
	return false
}

// allBackends returns the backends of the adapter rows: those of the table
// of backends (conformance/backendtable) the bench opens, in table order.
func allBackends() (backendtable.Table, error) {
	table, err := backendtable.Read()
	if err != nil {
		return nil, err
	}
	var out backendtable.Table
	for _, b := range table {
		if benched(b.Name) {
			out = append(out, b)
		}
	}
	return out, nil
}

// report is the JSON the bench writes with -json.
type report struct {
	Started time.Time         `json:"started"`
	Machine string            `json:"machine"`
	Config  map[string]any    `json:"config"`
	Results []result          `json:"results"`
	Skipped map[string]string `json:"skipped,omitempty"`
	Extra   []string          `json:"notes,omitempty"`
	Scale   []scaleResult     `json:"scale,omitempty"`
	HTTP    []httpResult      `json:"http,omitempty"`
	Handler []handlerResult   `json:"handler,omitempty"` // handler GET /session beside getSessionAndUser, in process
	Burst   []burstResult     `json:"burst,omitempty"`   // writes of a burst of requests on one due session
	Limit   []limitResult     `json:"limit,omitempty"`   // the handler beside the hand-written limit server
	// Instructions are the -instructions rows: the servers' instructions
	// per request, the handler's beside the limit server's.
	Instructions []instrResult `json:"instructions,omitempty"`
	Duration     string        `json:"duration"`
}

func main() {
	if spec := os.Getenv(instrServeEnv); spec != "" {
		// A child of -instructions, serving one side under callgrind.
		if err := serveInstrSide(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	short := flag.Bool("short", false, "a quick run (the one the tests make): few users, few calls")
	scale := flag.Bool("scale", false, "the scale and purge run instead (slow: seeds -scale-users users and sessions per backend)")
	scaleUsers := flag.Int("scale-users", 1_000_000, "users and sessions to seed in -scale mode")
	purgeSessions := flag.Int("purge-sessions", 500_000, "expired sessions PurgeExpired removes in -scale mode")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file (- for standard output)")
	all, err := allBackends()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	only := flag.String("backends", strings.Join(all.Names(), ","), "comma-separated backends of the adapter rows, or none")
	services := flag.Bool("services", false, "print the scripts/services.sh services the adapter rows need (AUTHPORT_SERVICES) and exit")
	httpNames := flag.String("http", strings.Join(allHTTPBackends, ","), "comma-separated backends of the HTTP rows (authport's handler beside Auth.js's), or none")
	limitNames := flag.String("limit", strings.Join(readPathBackends, ","), "comma-separated backends of the limit rows (the handler beside the hand-written server), or none")
	onlyOps := flag.String("ops", "", "comma-separated operations of the adapter rows to run (empty: all), e.g. getSessionAndUser,getUserByAccount")
	rounds := flag.Int("rounds", 0, "alternated adapter/raw rounds per row (0: 6, or 2 with -short)")
	instructions := flag.Bool("instructions", false, "instead of the timed rows, count the instructions per GET /auth/session of the handler's server and of the limit server with valgrind's callgrind, for the backends of -limit (README.md, \"Instructions per request\")")
	instrCalls := flag.Int("instr-calls", 1000, "requests per round of each side in -instructions mode")
	instrLevels := flag.String("instr-concurrency", "32", "comma-separated concurrencies of -instructions mode")
	instrDir := flag.String("instr-dir", "", "keep callgrind's files of -instructions mode in this directory (default: a temporary one, removed)")
	flag.Parse()
	if *services {
		fmt.Println(strings.Join(all.Started(backendtable.StartServices).Names(), " "))
		return
	}

	cfg := fullConfig()
	if *short {
		cfg = shortConfig()
	}
	if *rounds > 0 {
		cfg.rounds = *rounds
	}
	if *onlyOps != "" {
		cfg.ops = strings.Split(*onlyOps, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	names := strings.Split(*only, ",")
	if *only == "none" {
		names = nil
	}
	var rep *report
	if *instructions {
		var levels []int
		for _, f := range strings.Split(*instrLevels, ",") {
			c, cerr := strconv.Atoi(strings.TrimSpace(f))
			if cerr != nil || c < 1 {
				fmt.Fprintf(os.Stderr, "bench: -instr-concurrency %q: want positive integers\n", *instrLevels)
				os.Exit(2)
			}
			levels = append(levels, c)
		}
		if *rounds == 0 {
			cfg.rounds = 3
		}
		rep = &report{Started: time.Now().UTC(), Machine: machine(), Skipped: map[string]string{}, Config: map[string]any{
			"rounds": cfg.rounds, "calls": *instrCalls, "concurrency": levels, "users": cfg.users, "pool": limitPoolSize}}
		fmt.Fprintf(os.Stdout, "authport bench -instructions: %s\n", rep.Machine)
		err = runInstructions(ctx, cfg, strings.Split(*limitNames, ","), *instrCalls, levels, *instrDir, os.Stdout, rep)
		rep.Duration = time.Since(rep.Started).Round(time.Millisecond).String()
	} else if *scale {
		rep, err = runScale(ctx, names, *scaleUsers, *purgeSessions, os.Stdout)
	} else {
		rep, err = run(ctx, cfg, names, os.Stdout)
		if err == nil && *httpNames != "none" {
			err = runHTTP(ctx, cfg, strings.Split(*httpNames, ","), os.Stdout, rep)
		}
		if err == nil && *limitNames != "none" {
			err = runLimit(ctx, cfg, strings.Split(*limitNames, ","), os.Stdout, rep)
		}
		if rep != nil {
			rep.Duration = time.Since(rep.Started).Round(time.Millisecond).String()
		}
	}
	if rep != nil && *jsonOut != "" {
		if werr := writeJSON(*jsonOut, rep); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func writeJSON(path string, rep *report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func fullConfig() config {
	return config{rounds: 6, calls: 200, callsPerConc: 20, concurrency: []int{1, 32}, users: 10_000, timeout: 10 * time.Second, minRound: 250 * time.Millisecond}
}

func shortConfig() config {
	return config{rounds: 2, calls: 20, callsPerConc: 2, concurrency: []int{1, 32}, users: 100, timeout: 10 * time.Second}
}

// machine describes where the bench runs: CPUs, the Go version and the
// load average when it started.
func machine() string {
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1]) + ", "
				break
			}
		}
	}
	return fmt.Sprintf("%s%d CPUs (GOMAXPROCS %d), %s/%s, %s, load average %s", model, runtime.NumCPU(),
		runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version(), load)
}

// env returns the value of the environment variable v, or an error that
// says how to set it.
func env(v string) (string, error) {
	s := os.Getenv(v)
	if s == "" {
		return "", fmt.Errorf("%s is not set (eval \"$(scripts/services.sh)\" sets it)", v)
	}
	return s, nil
}

// openSQLNamed opens the SQL backend name ("sqlite", "postgres" or
// "mysql"), the servers' at their URLs from the environment.
func openSQLNamed(ctx context.Context, name string) (*sqlStore, error) {
	var u string
	var err error
	switch name {
	case "sqlite":
		return openSQLite("", nil)
	case "postgres":
		if u, err = env("AUTHPORT_POSTGRES_URL"); err == nil {
			return openPostgres(ctx, u, nil)
		}
	case "mysql":
		if u, err = env("AUTHPORT_MYSQL_URL"); err == nil {
			return openMySQL(ctx, u, nil)
		}
	default:
		err = fmt.Errorf("%s is not an SQL backend", name)
	}
	return nil, err
}

// open opens the named backend, seeded with cfg.users users, or says why
// it cannot (its URL is unset or its server does not answer).
func open(ctx context.Context, name string, users int) (*backend, error) {
	var b *backend
	var a fullAdapter
	var raw *rawOps
	switch name {
	case "memory":
		m := newMemory()
		b, a = &backend{name: name, close: func() {}}, m
	case "bbolt":
		s, err := openBolt("")
		if err != nil {
			return nil, err
		}
		b, a, raw = &backend{name: name, close: s.close}, s.adapter, s.rawBolt()
	case "sqlite", "postgres", "mysql":
		s, err := openSQLNamed(ctx, name)
		if err != nil {
			return nil, err
		}
		b, a = &backend{name: name, close: s.close, rt: s.rt}, s.adapter
		if raw, err = s.rawSQL(ctx); err != nil {
			s.close()
			return nil, err
		}
	case "redis", "redis-cluster":
		s, err := openRedisNamed(ctx, name)
		if err != nil {
			return nil, err
		}
		b, a = &backend{name: name, close: s.close, rt: s.rt}, s.adapter
		raws := s.rawRedis
		if s.cluster {
			raws = s.rawRedisCluster
		}
		if raw, err = raws(ctx); err != nil {
			s.close()
			return nil, err
		}
	case "mongodb":
		u, err := env("AUTHPORT_MONGODB_URL")
		if err != nil {
			return nil, err
		}
		s, err := openMongo(ctx, u)
		if err != nil {
			return nil, err
		}
		b, a = &backend{name: name, close: s.close, rt: s.rt, concurrency: []int{1},
			note: "mongodb: the stand-in (FerretDB on SQLite), at concurrency 1 only, without a raw baseline, with 1,000 users and 2 rounds of 50 calls"}, s.adapter
	default:
		return nil, fmt.Errorf("unknown backend %q (known: memory, bbolt, sqlite, postgres, mysql, redis, redis-cluster, mongodb)", name)
	}
	if err := seed(ctx, a, users); err != nil {
		b.close()
		return nil, fmt.Errorf("seeding %d users: %w", users, err)
	}
	if err := seedListed(ctx, a, users); err != nil {
		b.close()
		return nil, fmt.Errorf("seeding %d users with %d sessions each: %w", listedUsers(users), listedSessions, err)
	}
	b.ops = operations(a, raw, users)
	return b, nil
}

// run measures every named backend that can be opened and prints the
// table to out.
func run(ctx context.Context, cfg config, names []string, out io.Writer) (*report, error) {
	start := time.Now()
	rep := &report{Started: start.UTC(), Machine: machine(), Skipped: map[string]string{}, Config: map[string]any{
		"rounds": cfg.rounds, "calls_c1": cfg.calls, "calls_per_worker": cfg.callsPerConc,
		"concurrency": cfg.concurrency, "users": cfg.users, "pool": 32}}
	fmt.Fprintf(out, "authport bench: %s\n", rep.Machine)
	fmt.Fprintf(out, "%d users per backend; per row %d rounds of %d calls of each side at concurrency 1, %d per worker at higher concurrency, every worker alternating adapter and raw calls",
		cfg.users, cfg.rounds, cfg.calls, cfg.callsPerConc)
	if cfg.minRound > 0 {
		fmt.Fprintf(out, "; an in-process store's rounds hold more calls, enough to last about %v", cfg.minRound)
	}
	fmt.Fprint(out, "\n\n")
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		bcfg := cfg
		if name == "mongodb" && !short(cfg) {
			// The stand-in makes a few dozen calls a second: a smaller
			// data set and fewer calls keep its rows to minutes.
			bcfg.users, bcfg.calls, bcfg.rounds = 1000, 50, 2
		}
		b, err := open(ctx, name, bcfg.users)
		if err != nil {
			rep.Skipped[name] = err.Error()
			fmt.Fprintf(out, "%s: skipped: %v\n", name, err)
			continue
		}
		levels := cfg.concurrency
		if b.concurrency != nil {
			levels = b.concurrency
		}
		if b.note != "" {
			rep.Extra = append(rep.Extra, b.note)
		}
		fmt.Fprintf(os.Stderr, "bench: %s seeded (%d users), measuring…\n", name, bcfg.users)
		for _, op := range b.ops {
			if cfg.ops != nil && !slices.Contains(cfg.ops, op.name) {
				continue
			}
			for _, c := range levels {
				r, err := measure(ctx, b, op, c, bcfg)
				if err != nil {
					b.close()
					return rep, err
				}
				rep.Results = append(rep.Results, r)
			}
		}
		b.close()
	}
	rep.Duration = time.Since(start).Round(time.Millisecond).String()
	if len(rep.Results) == 0 && len(names) == 0 {
		return rep, ctx.Err()
	}
	printTable(out, rep.Results)
	for _, n := range rep.Extra {
		fmt.Fprintln(out, "\n"+n)
	}
	fmt.Fprintf(out, "\n(%s)\n", rep.Duration)
	return rep, ctx.Err()
}

// printTable writes the results as a Markdown table.
func printTable(out io.Writer, rs []result) {
	tw := newTable(out)
	fmt.Fprintln(tw, "| backend\t operation\t c\t adapter ops/s\t p50 µs\t p99 µs\t RT/op\t raw ops/s\t p50 µs\t p99 µs\t RT/op\t adapter/raw\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t")
	rt := func(v float64) string {
		if v < 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", v)
	}
	for _, r := range rs {
		raw := "–\t –\t –\t –\t –"
		if r.Raw != nil {
			raw = fmt.Sprintf("%.0f\t %.0f\t %.0f\t %s\t %.2f", r.Raw.OpsPerSec, r.Raw.P50Micros, r.Raw.P99Micros, rt(r.Raw.RoundTrips), r.Ratio)
		}
		fmt.Fprintf(tw, "| %s\t %s\t %d\t %.0f\t %.0f\t %.0f\t %s\t %s\t\n", r.Backend, r.Operation, r.Concurrency,
			r.Adapter.OpsPerSec, r.Adapter.P50Micros, r.Adapter.P99Micros, rt(r.Adapter.RoundTrips), raw)
	}
	_ = tw.Flush()
}

// short reports whether cfg is no bigger than the short mode's.
func short(cfg config) bool { return cfg.users <= shortConfig().users }

// newTable returns the writer the Markdown tables are aligned with.
func newTable(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 0, 1, ' ', tabwriter.Debug)
}
