package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/authport/authport/core/auth"
)

// The burst row: a page that loads its API calls sends
// several requests at once, and when its session is due for extension
// each request finds it due. How many times is expires written? On
// PostgreSQL a trigger counts the rows updated in the sessions table, the
// same table for both sides: authport's requests are spread over two
// handler instances (two processes, as behind a load balancer), Auth.js's
// go to its one server.

// burstRequests is the size of the burst.
const burstRequests = 32

// burstResult is the burst row of one backend.
type burstResult struct {
	Backend  string `json:"backend"`
	Requests int    `json:"requests"`
	// AuthportInstances is how many handler instances shared authport's
	// requests.
	AuthportInstances int `json:"authport_instances"`
	// AuthportWrites and AuthjsWrites are the session rows updated by the
	// burst; AuthjsWrites is -1 without Auth.js.
	AuthportWrites int `json:"authport_writes"`
	AuthjsWrites   int `json:"authjs_writes"`
}

// burstTriggerSQL counts updates of the sessions table in
// bench_session_writes, one row per updated session row.
var burstTriggerSQL = []string{
	`CREATE TABLE bench_session_writes (at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`,
	`CREATE FUNCTION bench_count_session_write() RETURNS trigger LANGUAGE plpgsql AS
	  $$ BEGIN INSERT INTO bench_session_writes DEFAULT VALUES; RETURN NULL; END $$`,
	`CREATE TRIGGER bench_count_session_writes AFTER UPDATE ON sessions FOR EACH ROW EXECUTE FUNCTION bench_count_session_write()`,
}

// measureBurst runs the burst on backend b, which must be the PostgreSQL
// one (b.sqlDB set): burstRequests concurrent GET /auth/session with the
// cookie of one session made due for extension, against authport (two
// instances) and then against Auth.js, each on a session of its own.
func measureBurst(ctx context.Context, b *httpBackend, c *http.Client) (burstResult, error) {
	r := burstResult{Backend: b.name, Requests: burstRequests, AuthportInstances: 2, AuthjsWrites: -1}
	for _, q := range burstTriggerSQL {
		if _, err := b.sqlDB.ExecContext(ctx, q); err != nil {
			return r, fmt.Errorf("burst: %s: %w", q, err)
		}
	}
	second, _, err := startGo(goServerConfig{adapter: b.adapter, strategy: auth.StrategyDatabase, newUserID: b.newUserID})
	if err != nil {
		return r, err
	}
	defer second.close()
	// The last two seeded users, whose sessions no row has extended.
	if r.AuthportWrites, err = burst(ctx, b, c, b.users-1, []*server{b.authport.db, second}); err != nil {
		return r, fmt.Errorf("burst, authport: %w", err)
	}
	if b.authjs != nil && b.authjs.db != nil {
		if r.AuthjsWrites, err = burst(ctx, b, c, b.users-2, []*server{b.authjs.db}); err != nil {
			return r, fmt.Errorf("burst, Auth.js: %w", err)
		}
	}
	return r, nil
}

// burst makes user k's session due for extension (last extended just over
// the default UpdateAge ago), sends the burst to the servers in turn, checks
// every answer carries the session with its new expiry, and returns the
// session rows the burst updated.
func burst(ctx context.Context, b *httpBackend, c *http.Client, k int, servers []*server) (int, error) {
	due := time.Now().Add(b.maxAge - auth.DefaultUpdateAge - time.Minute)
	res, err := b.sqlDB.ExecContext(ctx, `UPDATE sessions SET expires = $1 WHERE "sessionToken" = $2`, due, sessionToken(k))
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, fmt.Errorf("making session %s due: %d rows, %v", sessionToken(k), n, err)
	}
	if _, err := b.sqlDB.ExecContext(ctx, `DELETE FROM bench_session_writes`); err != nil {
		return 0, err
	}
	start := time.Now()
	type answered struct {
		a   *answer
		err error
	}
	answers := make(chan answered, burstRequests)
	release := make(chan struct{})
	for i := range burstRequests {
		go func() {
			<-release
			a, err := do(ctx, c, "GET", servers[i%len(servers)].origin+"/auth/session", sessionCookie+"="+sessionToken(k), nil)
			answers <- answered{a, err}
		}()
	}
	close(release)
	// Every answer carries the session; at least one re-sends the cookie
	// with the new expiry (a request that found the session extended by
	// another need not).
	var errs []error
	resent := false
	for range burstRequests {
		r := <-answers
		if r.err == nil {
			r.err = checkSession(r.a, k, start)
		}
		if r.err == nil && checkExtended(r.a, k, start.Add(b.maxAge-time.Minute)) == nil {
			resent = true
		}
		errs = append(errs, r.err)
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if !resent {
		return 0, errors.New("no answer re-sent the session cookie with the extension's expiry")
	}
	return countRows(ctx, b.sqlDB, `SELECT count(*) FROM bench_session_writes`)
}

// checkExtended checks that a GET /auth/session answer re-sends user k's
// session cookie with an expiry of min or later (Auth.js puts the expiry
// it read in the body, and the new one on the cookie).
func checkExtended(a *answer, k int, min time.Time) error {
	sc := a.cookie(sessionCookie)
	if sc == nil || sc.Value != sessionToken(k) {
		return fmt.Errorf("GET /session: session cookie %v, want %s re-sent", sc, sessionToken(k))
	}
	expires := sc.Expires
	if sc.MaxAge > 0 {
		expires = time.Now().Add(time.Duration(sc.MaxAge) * time.Second)
	}
	if expires.Before(min) {
		return fmt.Errorf("GET /session: session cookie expires %v, want the extension's (after %v)", expires, min)
	}
	return nil
}

// countRows runs a count query.
func countRows(ctx context.Context, db *sql.DB, q string) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

func printBurst(out io.Writer, rs []burstResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(out, "\nBurst: %d concurrent GET /auth/session on one session due for extension; session rows written (counted by a trigger)\n\n", burstRequests)
	tw := newTable(out)
	fmt.Fprintln(tw, "| backend\t requests\t authport instances\t authport writes\t Auth.js writes\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t")
	for _, r := range rs {
		js := "–"
		if r.AuthjsWrites >= 0 {
			js = fmt.Sprint(r.AuthjsWrites)
		}
		fmt.Fprintf(tw, "| %s\t %d\t %d\t %d\t %s\t\n", r.Backend, r.Requests, r.AuthportInstances, r.AuthportWrites, js)
	}
	_ = tw.Flush()
}
