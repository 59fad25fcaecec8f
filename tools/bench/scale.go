package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
)

// latency is a read's p50 and p99 at one size of the data set.
type latency struct {
	Users     int     `json:"users"`
	P50Micros float64 `json:"p50_us"`
	P99Micros float64 `json:"p99_us"`
	// MissesPerCall is, on PostgreSQL, the table and index blocks the
	// measured calls read from outside shared_buffers (pg_statio), and on
	// MariaDB the InnoDB buffer pool's reads from disk
	// (Innodb_buffer_pool_reads, server-wide), per call; -1 where not
	// measured.
	MissesPerCall float64 `json:"cache_misses_per_call"`
}

// purgeResult is PurgeExpired with expired sessions to remove while
// getSessionAndUser runs beside it.
type purgeResult struct {
	Expired      int     `json:"expired_sessions"`
	Deleted      int     `json:"deleted"`
	Seconds      float64 `json:"seconds"`
	IdleP99      float64 `json:"idle_p99_us"`
	DuringP99    float64 `json:"during_p99_us"`
	DuringCalls  int     `json:"during_calls"`
	P99Ratio     float64 `json:"p99_during_over_idle"`
	NotApplyable string  `json:"not_applicable,omitempty"`
}

// scaleResult is one backend's scale and purge figures.
type scaleResult struct {
	Backend           string       `json:"backend"`
	GetSessionAndUser []latency    `json:"getSessionAndUser"`
	GetUserByAccount  []latency    `json:"getUserByAccount"`
	SeedSeconds       float64      `json:"seed_seconds"`
	Purge             *purgeResult `json:"purge,omitempty"`
	// Redis only: used_memory per user (its hash, e-mail and account
	// pointers and one linked account) and per session, in bytes.
	RedisBytesPerUser    float64 `json:"redis_bytes_per_user,omitempty"`
	RedisBytesPerSession float64 `json:"redis_bytes_per_session,omitempty"`
	Error                string  `json:"error,omitempty"`
}

// bulk seeds a backend's users u[from, to) (each with its account and a
// session valid for a day) and expired sessions, in large server-side
// statements or pipelines rather than through the adapter.
type bulk interface {
	users(ctx context.Context, from, to int) error
	expired(ctx context.Context, n, users int) error
}

const scaleSmall = 10_000

// runScale measures the reads at 10,000 users and at users users, then
// PurgeExpired of purge expired sessions while getSessionAndUser runs.
func runScale(ctx context.Context, names []string, users, purge int, out io.Writer) (*report, error) {
	start := time.Now()
	rep := &report{Started: start.UTC(), Machine: machine(), Skipped: map[string]string{},
		Config: map[string]any{"users": users, "purge_sessions": purge}}
	fmt.Fprintf(out, "authport bench -scale: %s\n", rep.Machine)
	for _, name := range names {
		name = strings.TrimSpace(name)
		r, err := scaleOne(ctx, name, users, purge, out)
		if err != nil {
			if r == nil {
				rep.Skipped[name] = err.Error()
				fmt.Fprintf(out, "%s: skipped: %v\n", name, err)
				continue
			}
			r.Error = err.Error()
			fmt.Fprintf(out, "%s: %v\n", name, err)
		}
		rep.Scale = append(rep.Scale, *r)
		if ctx.Err() != nil {
			break
		}
	}
	rep.Duration = time.Since(start).Round(time.Second).String()
	printScale(out, rep.Scale)
	return rep, ctx.Err()
}

func scaleOne(ctx context.Context, name string, users, purge int, out io.Writer) (*scaleResult, error) {
	var a fullAdapter
	var b bulk
	var closeFn func()
	var rs *redisStore
	var misses func(context.Context) (float64, error) // a cumulative count of cache misses, or nil
	switch name {
	case "postgres", "mysql", "sqlite":
		s, err := openSQLNamed(ctx, name)
		if err != nil {
			return nil, err
		}
		a, b, closeFn = s.adapter, &sqlBulk{s}, s.close
		misses = s.cacheMisses()
	case "redis":
		s, err := openRedisEnv(ctx)
		if err != nil {
			return nil, err
		}
		a, b, closeFn, rs = s.adapter, &redisBulk{s: s}, s.close, s
	case "bbolt":
		s, err := openBolt("")
		if err != nil {
			return nil, err
		}
		a, b, closeFn = s.adapter, &boltBulk{s}, s.close
	default:
		return nil, fmt.Errorf("no scale run for %s (scale runs: postgres, mysql, sqlite, redis, bbolt)", name)
	}
	defer closeFn()
	res := &scaleResult{Backend: name}
	fmt.Fprintf(out, "%s: seeding %d users…\n", name, scaleSmall)
	t0 := time.Now()
	if rs != nil {
		// Bytes per user and per session, from records the adapter
		// itself writes (the bulk seeding copies them).
		if err := redisMemory(ctx, rs, res); err != nil {
			return res, err
		}
	}
	if err := b.users(ctx, 0, scaleSmall); err != nil {
		return res, err
	}
	ops := func(n int) []operation { return operations(a, nil, n) }
	measureReads := func(n int) error {
		for i, dst := range []*[]latency{&res.GetSessionAndUser, &res.GetUserByAccount} {
			op := ops(n)[i]
			// The warm-up makes the same calls as the measurement: what is
			// compared is the cost of a lookup in a bigger table (index
			// depth, plans), not a cold cache.
			if _, _, _, err := phase(ctx, op.adapter, 3000, 1, nil, 10*time.Second); err != nil {
				return err
			}
			var m0 float64
			if misses != nil {
				var err error
				if m0, err = misses(ctx); err != nil {
					return err
				}
			}
			_, lat, _, err := phase(ctx, op.adapter, 3000, 1, nil, 10*time.Second)
			if err != nil {
				return fmt.Errorf("%s at %d users: %w", op.name, n, err)
			}
			acc := accum{}
			acc.add(lat, 0)
			st := acc.stats()
			l := latency{Users: n, P50Micros: st.P50Micros, P99Micros: st.P99Micros, MissesPerCall: -1}
			if misses != nil {
				m1, err := misses(ctx)
				if err != nil {
					return err
				}
				l.MissesPerCall = (m1 - m0) / float64(len(lat))
			}
			*dst = append(*dst, l)
		}
		return nil
	}
	if err := measureReads(scaleSmall); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "%s: seeding up to %d users…\n", name, users)
	const chunk = 100_000
	for from := scaleSmall; from < users; from += chunk {
		if err := b.users(ctx, from, min(from+chunk, users)); err != nil {
			return res, err
		}
	}
	res.SeedSeconds = time.Since(t0).Seconds()
	if err := measureReads(users); err != nil {
		return res, err
	}
	purger, ok := a.(core.ExpiredPurger)
	if !ok {
		res.Purge = &purgeResult{NotApplyable: "the adapter has no PurgeExpired: the store expires records itself"}
		return res, nil
	}
	fmt.Fprintf(out, "%s: %d expired sessions, then PurgeExpired…\n", name, purge)
	if err := b.expired(ctx, purge, users); err != nil {
		return res, err
	}
	p := &purgeResult{Expired: purge}
	res.Purge = p
	read := ops(users)[0].adapter
	_, idle, _, err := phase(ctx, read, 2000, 4, nil, 30*time.Second)
	if err != nil {
		return res, err
	}
	acc := accum{}
	acc.add(idle, 0)
	p.IdleP99 = acc.stats().P99Micros
	var during accum
	done := make(chan struct{})
	var pr core.PurgeResult
	var perr error
	pstart := time.Now()
	go func() {
		defer close(done)
		pr, perr = purger.PurgeExpired(ctx)
	}()
	var mu sync.Mutex
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		_, lat, _, err := phase(ctx, read, 200, 4, nil, 60*time.Second)
		if err != nil {
			<-done
			return res, err
		}
		mu.Lock()
		during.add(lat, 0)
		mu.Unlock()
	}
	p.Seconds = time.Since(pstart).Seconds()
	if perr != nil {
		return res, fmt.Errorf("PurgeExpired: %w", perr)
	}
	p.Deleted = pr.Sessions
	st := during.stats()
	p.DuringP99, p.DuringCalls = st.P99Micros, st.Calls
	if p.IdleP99 > 0 {
		p.P99Ratio = p.DuringP99 / p.IdleP99
	}
	if p.Deleted < purge {
		return res, fmt.Errorf("PurgeExpired deleted %d sessions, want at least %d", p.Deleted, purge)
	}
	return res, nil
}

// sqlBulk seeds with server-side INSERT … SELECT over a generated series.
type sqlBulk struct{ s *sqlStore }

// series is the dialect's row source of the integers [from, to) as g.
func (b *sqlBulk) series(from, to int) string {
	switch b.s.dialect {
	case "postgres":
		return fmt.Sprintf("generate_series(%d, %d) AS t(g)", from, to-1)
	case "mysql":
		return fmt.Sprintf("(SELECT seq AS g FROM seq_%d_to_%d) t", from, to-1)
	}
	return fmt.Sprintf("(WITH RECURSIVE c(g) AS (SELECT %d UNION ALL SELECT g + 1 FROM c WHERE g < %d) SELECT g FROM c) t", from, to-1)
}

func (b *sqlBulk) cat(parts ...string) string {
	if b.s.dialect == "mysql" {
		return "CONCAT(" + strings.Join(parts, ", ") + ")"
	}
	return strings.Join(parts, " || ")
}

func (b *sqlBulk) exec(ctx context.Context, q string, args ...any) error {
	_, err := b.s.db.ExecContext(ctx, b.s.q(q), args...)
	if err != nil {
		return fmt.Errorf("%.80s…: %w", q, err)
	}
	return nil
}

func (b *sqlBulk) users(ctx context.Context, from, to int) error {
	g := b.series(from, to)
	day := b.s.timeArg(time.Now().Add(24 * time.Hour))
	return errors.Join(
		b.exec(ctx, `INSERT INTO "users" ("id", "email", "name", "image") SELECT `+b.cat("'u'", "g")+`, `+b.cat("'u'", "g", "'@bench.example'")+`, 'Ada Lovelace', 'https://bench.example/u.png' FROM `+g),
		b.exec(ctx, `INSERT INTO "accounts" ("userId", "type", "provider", "providerAccountId", "access_token", "token_type") SELECT `+b.cat("'u'", "g")+`, 'oauth', 'bench', `+b.cat("'a'", "g")+`, 'at', 'bearer' FROM `+g),
		b.exec(ctx, `INSERT INTO "sessions" ("sessionToken", "userId", "expires") SELECT `+b.cat("'s'", "g")+`, `+b.cat("'u'", "g")+`, ? FROM `+g, day),
	)
}

func (b *sqlBulk) expired(ctx context.Context, n, users int) error {
	past := b.s.timeArg(time.Now().Add(-time.Hour))
	const chunk = 100_000
	for from := 0; from < n; from += chunk {
		g := b.series(from, min(from+chunk, n))
		if err := b.exec(ctx, `INSERT INTO "sessions" ("sessionToken", "userId", "expires") SELECT `+b.cat("'x'", "g")+`, `+
			b.cat("'u'", fmt.Sprintf("(g %% %d)", users))+`, ? FROM `+g, past); err != nil {
			return err
		}
	}
	return nil
}

// boltBulk seeds an embedded bbolt file through the adapter itself (there
// is no server to hand a bulk statement to), with the file's fsync off while
// it seeds and four writers, so that three million write transactions take
// minutes; the file is synced when seeding ends, before anything is
// measured.
type boltBulk struct{ s *boltStore }

func (b *boltBulk) seed(f func(i int) error, n int) error {
	b.s.db.NoSync = true
	err := parallel(n, 4, f)
	b.s.db.NoSync = false
	return errors.Join(err, b.s.db.Sync())
}

func (b *boltBulk) users(ctx context.Context, from, to int) error {
	day := time.Now().Add(24 * time.Hour)
	return b.seed(func(i int) error {
		return createChain(ctx, b.s.adapter, userID(from+i), accountID(from+i), sessionToken(from+i), day)
	}, to-from)
}

func (b *boltBulk) expired(ctx context.Context, n, users int) error {
	past := time.Now().Add(-time.Hour)
	return b.seed(func(i int) error {
		_, err := b.s.adapter.CreateSession(ctx, core.Session{SessionToken: "x" + strconv.Itoa(i), UserID: userID(i % users), Expires: past})
		return err
	}, n)
}

// redisBulk seeds with pipelines of the layout's commands, copying the
// account record the adapter wrote for the first user.
type redisBulk struct {
	s       *redisStore
	account string
}

func (b *redisBulk) users(ctx context.Context, from, to int) error {
	s := b.s
	if b.account == "" {
		v, err := s.c.HGet(ctx, s.key("user", "m0")+":accounts", provider+":am0").Result()
		if err != nil {
			return fmt.Errorf("reading the account record the adapter wrote: %w", err)
		}
		b.account = v
	}
	day := time.Now().Add(24 * time.Hour)
	const per = 2000
	for lo := from; lo < to; lo += per {
		pipe := s.c.Pipeline()
		for i := lo; i < min(lo+per, to); i++ {
			id, acct, tok := userID(i), accountID(i), sessionToken(i)
			uk := s.key("user", id)
			pipe.HSet(ctx, uk, "id", id, "email", id+"@bench.example", "name", "Ada Lovelace", "image", "https://bench.example/u.png")
			pipe.Set(ctx, s.key("email", id+"@bench.example"), id, 0)
			pipe.Set(ctx, s.key("account", provider+":"+acct), id, 0)
			pipe.HSet(ctx, uk+":accounts", provider+":"+acct, b.account)
			pipe.SetArgs(ctx, s.key("session", tok), id, redis.SetArgs{ExpireAt: day})
			pipe.ZAdd(ctx, uk+":sessions", redis.Z{Score: float64(day.UnixMilli()), Member: tok})
			pipe.PExpireAt(ctx, uk+":sessions", day)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (b *redisBulk) expired(context.Context, int, int) error { return nil }

// redisMemory measures used_memory around 10,000 users (each with an
// account) and then 10,000 sessions, all made through the adapter.
func redisMemory(ctx context.Context, s *redisStore, res *scaleResult) error {
	used := func() (float64, error) {
		info, err := s.c.Info(ctx, "memory").Result()
		if err != nil {
			return 0, err
		}
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
				var n float64
				_, err := fmt.Sscan(v, &n)
				return n, err
			}
		}
		return 0, errors.New("no used_memory in INFO memory")
	}
	const n = 10_000
	m0, err := used()
	if err != nil {
		return err
	}
	a := s.adapter
	err = parallel(n, 8, func(i int) error {
		id := "m" + fmt.Sprint(i)
		if _, err := a.CreateUser(ctx, benchUser(id)); err != nil {
			return err
		}
		_, err := a.LinkAccount(ctx, core.Account{UserID: id, Provider: provider, Type: core.AccountTypeOAuth,
			ProviderAccountID: "a" + id, AccessToken: ptr("at-a" + id), TokenType: ptr("bearer")})
		return err
	})
	if err != nil {
		return err
	}
	m1, err := used()
	if err != nil {
		return err
	}
	exp := time.Now().Add(24 * time.Hour)
	err = parallel(n, 8, func(i int) error {
		_, err := a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprintf("msession-%032d", i), UserID: "m" + fmt.Sprint(i), Expires: exp})
		return err
	})
	if err != nil {
		return err
	}
	m2, err := used()
	if err != nil {
		return err
	}
	res.RedisBytesPerUser = (m1 - m0) / n
	res.RedisBytesPerSession = (m2 - m1) / n
	return nil
}

func printScale(out io.Writer, rs []scaleResult) {
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "\n| backend\t operation\t users\t p50 µs\t p99 µs\t p50, p99 vs 10,000\t cache misses/call\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t")
	for _, r := range rs {
		for _, l := range []struct {
			op string
			ls []latency
		}{{"getSessionAndUser", r.GetSessionAndUser}, {"getUserByAccount", r.GetUserByAccount}} {
			for i, x := range l.ls {
				rel := "–"
				if i > 0 && l.ls[0].P99Micros > 0 && l.ls[0].P50Micros > 0 {
					rel = fmt.Sprintf("%.2f×, %.2f×", x.P50Micros/l.ls[0].P50Micros, x.P99Micros/l.ls[0].P99Micros)
				}
				miss := "–"
				if x.MissesPerCall >= 0 {
					miss = fmt.Sprintf("%.2f", x.MissesPerCall)
				}
				fmt.Fprintf(tw, "| %s\t %s\t %d\t %.0f\t %.0f\t %s\t %s\t\n", r.Backend, l.op, x.Users, x.P50Micros, x.P99Micros, rel, miss)
			}
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(tw, "\n| backend\t expired sessions\t deleted\t PurgeExpired s\t getSessionAndUser p99 idle µs\t during µs\t during/idle\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t")
	for _, r := range rs {
		if p := r.Purge; p != nil && p.NotApplyable == "" {
			fmt.Fprintf(tw, "| %s\t %d\t %d\t %.1f\t %.0f\t %.0f\t %.2f×\t\n", r.Backend, p.Expired, p.Deleted, p.Seconds, p.IdleP99, p.DuringP99, p.P99Ratio)
		}
	}
	_ = tw.Flush()
	for _, r := range rs {
		if r.RedisBytesPerUser > 0 {
			fmt.Fprintf(out, "\nRedis used_memory: %.0f bytes per user (hash, e-mail and account pointers, one account), %.0f bytes per session\n",
				r.RedisBytesPerUser, r.RedisBytesPerSession)
		}
		if r.Error != "" {
			fmt.Fprintf(out, "%s: %s\n", r.Backend, r.Error)
		}
	}
}

// cacheMisses returns a cumulative count of the reads the database's own
// cache could not serve: on PostgreSQL the heap and index blocks of the
// store's schema read from outside shared_buffers (the statistics are
// flushed by idle backends within a second, hence the pause), on MariaDB
// the buffer pool's reads from disk, server-wide; nil on SQLite, whose
// page cache is per connection and not counted.
func (s *sqlStore) cacheMisses() func(context.Context) (float64, error) {
	switch s.dialect {
	case "postgres":
		return func(ctx context.Context) (float64, error) {
			time.Sleep(1500 * time.Millisecond)
			var n sql.NullFloat64
			err := s.db.QueryRowContext(ctx, `SELECT sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0))
				FROM pg_statio_user_tables WHERE schemaname = current_schema()`).Scan(&n)
			return n.Float64, err
		}
	case "mysql":
		return func(ctx context.Context) (float64, error) {
			var name string
			var n float64
			err := s.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_reads'").Scan(&name, &n)
			return n, err
		}
	}
	return nil
}
