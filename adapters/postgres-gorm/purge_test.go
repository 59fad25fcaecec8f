package gormadapter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// purgeFixture makes, on a fresh database of backend, user u with live
// sessions and tokens (expiring in an hour) and expired ones (an hour
// ago by the adapter's clock, which then moves on two hours), and returns
// the adapter, with batches of batch rows, and its raw view.
func purgeFixture(t *testing.T, backend string, batch, expiredSessions, expiredTokens int) (*Adapter, *rawView) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	clock := now
	a, db := newAdapter(t, backend, false, WithClock(func() time.Time { return clock }))
	a.purgeBatch = batch
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	for i := range expiredSessions + 5 {
		exp := now.Add(time.Hour) // purged once the clock moves on
		if i >= expiredSessions {
			exp = now.Add(3 * time.Hour)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprintf("s%03d", i), UserID: "u", Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range expiredTokens + 3 {
		exp := now.Add(time.Hour)
		if i >= expiredTokens {
			exp = now.Add(3 * time.Hour)
		}
		if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "u@example.com", Token: fmt.Sprintf("t%03d", i), Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	clock = now.Add(2 * time.Hour)
	return a, &rawView{db: db.sqlDB, dialect: backend}
}

// left returns the tokens of the sessions and verification tokens stored.
func left(t *testing.T, raw *rawView) (sessions, tokens []string) {
	t.Helper()
	ctx := context.Background()
	ss, err := raw.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := raw.VerificationTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		sessions = append(sessions, s.SessionToken)
	}
	for _, v := range vs {
		tokens = append(tokens, v.Token)
	}
	sort.Strings(sessions)
	sort.Strings(tokens)
	return sessions, tokens
}

func names(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%03d", prefix, i))
	}
	return out
}

// TestPurgeExpiredInBatches: PurgeExpired of more expired rows than one
// batch deletes them all, in statements of at most a batch each, and
// nothing that has not expired; with and without the indexes on expires
// (Auth.js's schemas, which authport does not create, have none).
func TestPurgeExpiredInBatches(t *testing.T) {
	for _, backend := range backends {
		for _, index := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/index=%v", backend, index), func(t *testing.T) {
				ctx := context.Background()
				a, raw := purgeFixture(t, backend, 7, 40, 23)
				if !index {
					for _, ix := range []string{"sessions_expires_idx", "verification_token_expires_idx"} {
						drop := "DROP INDEX " + a.d.ident(ix)
						if a.d.mysql() {
							drop += " ON " + a.d.ident(strings.TrimSuffix(ix, "_expires_idx"))
						}
						if _, err := raw.db.ExecContext(ctx, drop); err != nil {
							t.Fatalf("%s: %v", drop, err)
						}
					}
				}
				var batches []int
				a.afterPurgeBatch = func(n int) { batches = append(batches, n) }
				res, err := a.PurgeExpired(ctx)
				if err != nil || res.Sessions != 40 || res.VerificationTokens != 23 {
					t.Fatalf("PurgeExpired = %+v, %v; want 40 sessions and 23 tokens", res, err)
				}
				// 40 = 5×7 + 5 and 23 = 3×7 + 2: each table stops at its
				// first batch short of 7.
				if want := []int{7, 7, 7, 7, 7, 5, 7, 7, 7, 2}; fmt.Sprint(batches) != fmt.Sprint(want) {
					t.Errorf("batches deleted %v rows; want %v", batches, want)
				}
				ss, vs := left(t, raw)
				if fmt.Sprint(ss) != fmt.Sprint(names("s", 40, 45)) || fmt.Sprint(vs) != fmt.Sprint(names("t", 23, 26)) {
					t.Errorf("left sessions %v, tokens %v; want the live ones only", ss, vs)
				}
				// Nothing more to purge: one statement per table, nothing deleted.
				batches = nil
				if res, err := a.PurgeExpired(ctx); err != nil || res != (core.PurgeResult{}) || fmt.Sprint(batches) != "[0 0]" {
					t.Errorf("second PurgeExpired = %+v, %v, batches %v; want nothing", res, err, batches)
				}
			})
		}
	}
}

// TestPurgeExpiredStopsWhenCancelled: a context cancelled during a purge
// stops it between two batches, with what it deleted and the context's
// error; the next purge deletes the rest.
func TestPurgeExpiredStopsWhenCancelled(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			a, raw := purgeFixture(t, backend, 5, 30, 4)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			a.afterPurgeBatch = func(int) {
				calls++
				if calls == 2 {
					cancel()
				}
			}
			res, err := a.PurgeExpired(ctx)
			if !errors.Is(err, context.Canceled) || res.Sessions != 10 || res.VerificationTokens != 0 {
				t.Fatalf("PurgeExpired cancelled after 2 batches = %+v, %v; want 10 sessions and context.Canceled", res, err)
			}
			if calls != 2 {
				t.Errorf("%d batches ran; want 2", calls)
			}
			ss, vs := left(t, raw)
			if len(ss) != 25 || len(vs) != 7 {
				t.Errorf("after the cancelled purge: %d sessions and %d tokens; want 25 and 7", len(ss), len(vs))
			}
			a.afterPurgeBatch = nil
			res, err = a.PurgeExpired(context.Background())
			if err != nil || res.Sessions != 20 || res.VerificationTokens != 4 {
				t.Errorf("the next PurgeExpired = %+v, %v; want 20 sessions and 4 tokens", res, err)
			}
			ss, vs = left(t, raw)
			if fmt.Sprint(ss) != fmt.Sprint(names("s", 30, 35)) || fmt.Sprint(vs) != fmt.Sprint(names("t", 4, 7)) {
				t.Errorf("left sessions %v, tokens %v; want the live ones only", ss, vs)
			}
		})
	}
}
