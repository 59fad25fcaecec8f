package main

// The instruction counts (-instructions): the CPU instructions each
// server executes per GET /auth/session, counted by valgrind's callgrind,
// which counts the same whatever else the machine runs, where the limit
// rows' wall and CPU times move with the load. The parent process seeds
// the read path as the limit rows do, then starts two children of its own
// binary under callgrind, one serving authport's handler and one the limit
// server on the parent's store (instrServeEnv tells a child what to
// serve), checks that they answer byte for byte alike, and counts each
// child's instructions over the same requests with the same cookies, the
// client (the parent) not counted: callgrind starts with counting off
// (--instr-atstart=no), and callgrind_control zeroes the counts, turns
// counting on for one side's round, off again, and dumps the total.
// The count is the whole server process's: the request's goroutines, the
// pools', the garbage collector's and the runtime's, as a CPU profile
// would see them. Go's asynchronous preemption is off in the children
// (GODEBUG=asyncpreemptoff=1): callgrind's signal handling fails on the
// runtime's preemption signals.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/core/auth"
)

// instrServeEnv, in a child's environment, names what it serves: the side
// ("handler" or "limit"), the backend and the store (PostgreSQL's URL with
// the schema as search_path; Redis's key prefix; nothing with JWT), tab
// separated.
const instrServeEnv = "AUTHPORT_BENCH_SERVE"

// instrResult is one instruction row: the servers' instructions per
// request, each round's, at one concurrency.
type instrResult struct {
	Backend     string `json:"backend"`
	Concurrency int    `json:"concurrency"`
	// Calls is the requests per round of each side.
	Calls int `json:"calls"`
	// Handler and Limit are the rounds' instructions per request of the
	// handler's server and of the limit server.
	Handler []float64 `json:"handler_ir_per_req"`
	Limit   []float64 `json:"limit_ir_per_req"`
	// Ratio is the handler's median over the limit server's.
	Ratio float64 `json:"ratio"`
}

// median returns the median of v (the lower middle of an even count).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// attachReadPath opens the read path of backend name on a store the
// parent seeded (store: PostgreSQL's URL with the tables' schema as
// search_path, or the Redis key prefix), without seeding or cleaning it,
// and builds the handler on it.
func attachReadPath(ctx context.Context, name, store string) (*readPath, error) {
	p := &readPath{name: name, close: func() {}}
	cfg := goServerConfig{strategy: auth.StrategyDatabase}
	switch name {
	case "postgres":
		pc, err := pgx.ParseConfig(store)
		if err != nil {
			return nil, err
		}
		s := &sqlStore{dialect: "postgres", rt: &roundTrips{}}
		if os.Getenv("AUTHPORT_BENCH_PG_POOL") == "pgxpool" {
			// gorm's *sql.DB on a pgxpool of limitPoolSize
			// (stdlib.OpenDBFromPool: database/sql keeps no idle
			// connection and takes one from the pgxpool per use).
			cfg, err := pgxpool.ParseConfig(store)
			if err != nil {
				return nil, err
			}
			cfg.MaxConns, cfg.MinConns = limitPoolSize, limitPoolSize
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				return nil, err
			}
			s.db = stdlib.OpenDBFromPool(pool)
			s.db.SetMaxOpenConns(limitPoolSize)
			s.cleanup = append(s.cleanup, pool.Close, func() { _ = s.db.Close() })
		} else {
			s.openDB(stdlib.GetConnector(*pc))
		}
		if err := authJSPgAdapter(ctx, s); err != nil {
			s.close()
			return nil, err
		}
		p.pgDSN, p.close = store, s.close
		cfg.adapter = s.adapter
	case "redis":
		u, err := env("AUTHPORT_REDIS_URL")
		if err != nil {
			return nil, err
		}
		s, err := newRedisStore(ctx, u, store, false)
		if err != nil {
			return nil, err
		}
		// Not s.close, which deletes the keys: the parent owns them.
		p.redis, p.close = s, func() { _ = s.c.Close() }
		a, err := redisadapter.New(ctx, s.c, redisadapter.WithPrefix(store))
		if err != nil {
			p.close()
			return nil, err
		}
		cfg.adapter = a
	case "jwt":
		cfg.adapter, cfg.strategy = newMemory(), auth.StrategyJWT
	default:
		return nil, fmt.Errorf("unknown read-path backend %q (known: postgres, redis, jwt)", name)
	}
	p.cfg = cfg
	return p, nil
}

// serveInstrSide is a child's main (instrServeEnv is set): it serves the
// side it names on a loopback port, writes the port's origin as its first
// line of standard output, and exits when its standard input ends.
func serveInstrSide(spec string) error {
	parts := strings.Split(spec, "\t")
	if len(parts) != 3 {
		return fmt.Errorf("%s=%q: want side, backend and store, tab separated", instrServeEnv, spec)
	}
	side, name, store := parts[0], parts[1], parts[2]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	p, err := attachReadPath(ctx, name, store)
	cancel()
	if err != nil {
		return err
	}
	defer p.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	origin := "http://" + ln.Addr().String()
	var h http.Handler
	switch side {
	case "handler":
		_, ah, err := p.newHandler(origin)
		if err != nil {
			return err
		}
		h = ah
	case "limit":
		ls, err := newLimitServer(context.Background(), p)
		if err != nil {
			return err
		}
		if ls.close != nil {
			defer ls.close()
		}
		h = ls
	default:
		return fmt.Errorf("%s: unknown side %q (handler, limit)", instrServeEnv, side)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	fmt.Println(origin)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return srv.Close()
}

// instrChild is a child serving one side under callgrind.
type instrChild struct {
	side   string
	cmd    *exec.Cmd
	stdin  io.Closer
	origin string
	// out is callgrind's output file; its dumps are out.1, out.2, …
	out   string
	dumps int
}

// startInstrChild starts the child serving side of p under callgrind,
// its files (callgrind's dumps, valgrind's log) in dir.
func startInstrChild(ctx context.Context, side string, p *readPath, dir string) (*instrChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	store := ""
	switch p.name {
	case "postgres":
		store = p.pgDSN
	case "redis":
		store = p.redis.prefix
	}
	c := &instrChild{side: side, out: filepath.Join(dir, "callgrind."+p.name+"."+side)}
	log, err := os.Create(filepath.Join(dir, "valgrind."+p.name+"."+side+".log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	c.cmd = exec.CommandContext(ctx, "valgrind", "--tool=callgrind", "--instr-atstart=no",
		"--callgrind-out-file="+c.out, exe)
	godebug := "asyncpreemptoff=1"
	if g := os.Getenv("GODEBUG"); g != "" {
		godebug = g + "," + godebug
	}
	c.cmd.Env = append(os.Environ(), "GODEBUG="+godebug, instrServeEnv+"="+side+"\t"+p.name+"\t"+store)
	if procs := os.Getenv("AUTHPORT_BENCH_INSTR_PROCS"); procs != "" {
		c.cmd.Env = append(c.cmd.Env, "GOMAXPROCS="+procs)
	}
	c.cmd.Stderr = log
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting valgrind (is it installed?): %w", err)
	}
	c.stdin = stdin
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("the %s child under callgrind wrote no origin (%v): see %s", side, err, log.Name())
	}
	c.origin = strings.TrimSpace(line)
	return c, nil
}

// stop ends the child: its standard input closed, it exits.
func (c *instrChild) stop() {
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// control sends callgrind_control args to the child.
func (c *instrChild) control(args ...string) error {
	out, err := exec.Command("callgrind_control", append(args, strconv.Itoa(c.cmd.Process.Pid))...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		return fmt.Errorf("callgrind_control %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// count returns the instructions the child executes while f runs.
func (c *instrChild) count(f func() error) (int64, error) {
	if err := c.control("-z"); err != nil {
		return 0, err
	}
	if err := c.control("-i", "on"); err != nil {
		return 0, err
	}
	ferr := f()
	if err := errors.Join(ferr, c.control("-i", "off"), c.control("-d")); err != nil {
		return 0, err
	}
	c.dumps++
	b, err := os.ReadFile(c.out + "." + strconv.Itoa(c.dumps))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "totals: "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s.%d: no totals line", c.out, c.dumps)
}

// runInstructions counts, for every named backend (postgres, redis,
// jwt), the instructions per GET /auth/session of the handler's server
// and of the limit server, in rounds of calls requests at each of
// levels, alternating the sides, and prints the table to out. dir keeps
// callgrind's files (a temporary directory when empty).
func runInstructions(ctx context.Context, cfg config, names []string, calls int, levels []int, dir string, out io.Writer, rep *report) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "authport-bench-instr-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	cl := newClient()
	defer cl.CloseIdleConnections()
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(readPathBackends, name) {
			rep.Skipped["instructions "+name] = "no limit server (postgres, redis and jwt have one)"
			continue
		}
		p, err := openReadPath(ctx, name, cfg.users)
		if err != nil {
			rep.Skipped["instructions "+name] = err.Error()
			fmt.Fprintf(out, "instructions %s: skipped: %v\n", name, err)
			continue
		}
		err = func() error {
			defer p.close()
			var kids [2]*instrChild
			for i, side := range []string{"handler", "limit"} {
				k, err := startInstrChild(ctx, side, p, dir)
				if err != nil {
					return err
				}
				defer k.stop()
				kids[i] = k
			}
			l := &limitPair{p: p, handler: &server{origin: kids[0].origin}, limit: &server{origin: kids[1].origin}}
			if err := limitCheck(ctx, cl, l, []int{0, p.users / 2, p.users - 1}); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "bench: instructions %s seeded (%d users), answers alike, counting…\n", name, cfg.users)
			for _, c := range levels {
				r := instrResult{Backend: name, Concurrency: c, Calls: calls}
				fs := make([]opFunc, 2)
				for i, k := range kids {
					fs[i] = limitGet(cl, k.origin, p)
					// Warm-up: the pools' connections, the prepared
					// statements, the runtime's first growth.
					if _, _, _, err := phase(ctx, fs[i], max(calls/2, 4*c), c, nil, time.Minute); err != nil {
						return fmt.Errorf("instructions %s (%s, warm-up): %w", name, k.side, err)
					}
				}
				for round := range cfg.rounds {
					order := []int{0, 1}
					if round%2 == 1 {
						order = []int{1, 0}
					}
					for _, i := range order {
						ir, err := kids[i].count(func() error {
							_, _, _, err := phase(ctx, fs[i], calls, c, nil, time.Minute)
							return err
						})
						if err != nil {
							return fmt.Errorf("instructions %s (%s, concurrency %d): %w", name, kids[i].side, c, err)
						}
						per := float64(ir) / float64(calls)
						if i == 0 {
							r.Handler = append(r.Handler, per)
						} else {
							r.Limit = append(r.Limit, per)
						}
					}
				}
				if m := median(r.Limit); m > 0 {
					r.Ratio = median(r.Handler) / m
				}
				rep.Instructions = append(rep.Instructions, r)
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	printInstrTable(out, rep.Instructions)
	return nil
}

func printInstrTable(out io.Writer, rs []instrResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(out, "\nInstructions per GET /auth/session, counted by callgrind in each server's process (the client not counted): the handler's server beside the limit server, same store, same pool size, same cookies; the median of the rounds, then every round")
	fmt.Fprintln(out)
	tw := newTable(out)
	fmt.Fprintln(tw, "| backend\t c\t calls/round\t handler Ir/req\t limit Ir/req\t handler/limit\t handler rounds\t limit rounds\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t---\t")
	rounds := func(v []float64) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strings.Join(s, ", ")
	}
	for _, r := range rs {
		fmt.Fprintf(tw, "| %s\t %d\t %d\t %.0f\t %.0f\t %.3f\t %s\t %s\t\n", r.Backend, r.Concurrency, r.Calls,
			median(r.Handler), median(r.Limit), r.Ratio, rounds(r.Handler), rounds(r.Limit))
	}
	_ = tw.Flush()
}
