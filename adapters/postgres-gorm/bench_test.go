package gormadapter

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// BenchmarkPostgres measures the hot operations on PostgreSQL, serially and
// under RunParallel, beside a raw baseline: the same single JOIN as
// getSessionAndUser through the same *gorm.DB's *sql.DB, with no adapter.
// The README's ratio is getSessionAndUser/parallel against
// rawGetSessionAndUser/parallel (ns/op of the raw run over ns/op of the
// adapter's).
//
//	go test -run '^$' -bench BenchmarkPostgres -benchtime 2s
func BenchmarkPostgres(b *testing.B) {
	a, db := newAdapter(b, "postgres", false)
	ctx := context.Background()
	const users = 64
	for i := range users {
		id := fmt.Sprintf("user-%d", i)
		if _, err := a.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com", Name: ptr("Ada"), EmailVerified: ptr(time.Now())}); err != nil {
			b.Fatal(err)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "token-" + id, UserID: id, Expires: time.Now().Add(24 * time.Hour)}); err != nil {
			b.Fatal(err)
		}
	}
	var seq atomic.Int64
	next := func() int64 { return seq.Add(1) }
	// once returns a loop condition that is true exactly once.
	once := func() func() bool {
		done := false
		return func() bool { r := !done; done = true; return r }
	}

	getSessionAndUser := func(pb func() bool) error {
		for n := next(); pb(); n = next() {
			su, err := a.GetSessionAndUser(ctx, fmt.Sprintf("token-user-%d", n%users))
			if err != nil {
				return err
			}
			if su == nil {
				return fmt.Errorf("no session")
			}
		}
		return nil
	}
	const rawJoin = `SELECT s."sessionToken", s."userId", s."expires", u."id", u."email", u."emailVerified", u."name", u."image"
FROM "sessions" s JOIN "users" u ON u."id" = s."userId" WHERE s."sessionToken" = $1`
	rawGetSessionAndUser := func(pb func() bool) error {
		for n := next(); pb(); n = next() {
			var token, userID, id, email string
			var expires time.Time
			var verified sql.NullTime
			var name, image sql.NullString
			err := db.sqlDB.QueryRowContext(ctx, rawJoin, fmt.Sprintf("token-user-%d", n%users)).Scan(
				&token, &userID, &expires, &id, &email, &verified, &name, &image)
			if err != nil {
				return err
			}
		}
		return nil
	}
	createSession := func(pb func() bool) error {
		for n := next(); pb(); n = next() {
			_, err := a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprintf("bench-%d", n),
				UserID: fmt.Sprintf("user-%d", n%users), Expires: time.Now().Add(time.Hour)})
			if err != nil {
				return err
			}
		}
		return nil
	}
	updateSession := func(pb func() bool) error {
		for n := next(); pb(); n = next() {
			s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: fmt.Sprintf("token-user-%d", n%users),
				Expires: core.Set(time.Now().Add(48 * time.Hour))})
			if err != nil {
				return err
			}
			if s == nil {
				return fmt.Errorf("no session")
			}
		}
		return nil
	}
	createAndUseToken := func(pb func() bool) error {
		for n := next(); pb(); n = next() {
			v := core.VerificationToken{Identifier: fmt.Sprintf("bench-%d@example.com", n), Token: "hash", Expires: time.Now().Add(time.Hour)}
			if _, err := a.CreateVerificationToken(ctx, v); err != nil {
				return err
			}
			got, err := a.UseVerificationToken(ctx, v.Key())
			if err != nil {
				return err
			}
			if got == nil {
				return fmt.Errorf("token not used")
			}
		}
		return nil
	}

	// The speed target compares getSessionAndUser with the raw JOIN under
	// RunParallel. Run one after the other, the two see different load
	// on a shared machine; here every goroutine alternates between them,
	// timing each call, so both see the same load. Reported: the mean
	// latency of each and raw/adapter, the adapter's speed as a fraction
	// of the raw query's (≥ 0.9 is the target).
	b.Run("getSessionAndUserVsRaw/parallel", func(b *testing.B) {
		var adapterNs, adapterN, rawNs, rawN atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				// Even calls go to the adapter, odd ones to the raw query.
				fn, ns, calls := getSessionAndUser, &adapterNs, &adapterN
				if next()%2 != 0 {
					fn, ns, calls = rawGetSessionAndUser, &rawNs, &rawN
				}
				start := time.Now()
				err := fn(once())
				ns.Add(int64(time.Since(start)))
				calls.Add(1)
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		if adapterN.Load() > 0 && rawN.Load() > 0 {
			ad := float64(adapterNs.Load()) / float64(adapterN.Load())
			raw := float64(rawNs.Load()) / float64(rawN.Load())
			b.ReportMetric(ad, "adapter-ns/call")
			b.ReportMetric(raw, "raw-ns/call")
			b.ReportMetric(raw/ad, "raw/adapter")
		}
	})

	for _, bm := range []struct {
		name string
		fn   func(pb func() bool) error
	}{
		{"rawGetSessionAndUser", rawGetSessionAndUser},
		{"getSessionAndUser", getSessionAndUser},
		{"createSession", createSession},
		{"updateSession", updateSession},
		{"createAndUseVerificationToken", createAndUseToken},
	} {
		b.Run(bm.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			if err := bm.fn(func() bool { i++; return i <= b.N }); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(bm.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				if err := bm.fn(pb.Next); err != nil {
					b.Error(err)
				}
			})
		})
	}
}
