package bboltadapter

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// Benchmarks. Run them as the README says:
//
//	go test -run '^$' -bench . -cpu 1,2 -benchmem
//
// "serial" loops in one goroutine; "parallel" uses b.RunParallel, with
// b.SetParallelism(parallelism) goroutines per GOMAXPROCS for the write
// benchmarks, as a server handling many requests at once would.

const (
	benchUsers  = 10000
	parallelism = 8
)

// benchStore opens a file holding benchUsers users, each with one session
// "s<i>" that expires in a day, written directly in one transaction.
func benchStore(b *testing.B, opts ...Option) *Adapter {
	b.Helper()
	a, _ := newTestAdapter(b, opts...)
	exp := core.NormalizeTime(time.Now().Add(24 * time.Hour))
	err := a.DB().Update(func(tx *bolt.Tx) error {
		bk, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		for i := range benchUsers {
			name := fmt.Sprintf("User %d", i)
			u := core.User{ID: fmt.Sprintf("u%d", i), Email: fmt.Sprintf("u%d@example.com", i), Name: &name}
			if err := bk.users.Put([]byte(u.ID), encodeUser(&u)); err != nil {
				return err
			}
			if err := bk.usersByEmail.Put([]byte(u.Email), []byte(u.ID)); err != nil {
				return err
			}
			if err := putSession(bk, &core.Session{SessionToken: fmt.Sprintf("s%d", i), UserID: u.ID, Expires: exp}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// The consistency walk also touches every page once, so that the first
	// sub-benchmark does not pay the page faults of the fresh mapping for
	// those after it; a GC clears the setup's garbage.
	if err := a.CheckConsistency(context.Background()); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	return a
}

// sessionTokens are the tokens benchStore wrote, precomputed so that the
// read benchmarks measure the lookup, not fmt.
var sessionTokens = func() []string {
	ts := make([]string, benchUsers)
	for i := range ts {
		ts[i] = fmt.Sprintf("s%d", i)
	}
	return ts
}()

// baselineGet is the raw-bbolt baseline of getSessionAndUser: one View
// transaction reading the session and its user by key from the same
// buckets, decoding the same encoding, with no adapter around it.
func baselineGet(db *bolt.DB, root []byte, token string) (*core.SessionAndUser, error) {
	var out *core.SessionAndUser
	err := db.View(func(tx *bolt.Tx) error {
		r := tx.Bucket(root)
		s, err := decodeSession(r.Bucket(bucketSessions).Get([]byte(token)))
		if err != nil {
			return err
		}
		u, err := decodeUser(r.Bucket(bucketUsers).Get([]byte(s.UserID)))
		if err != nil {
			return err
		}
		out = &core.SessionAndUser{Session: *s, User: *u}
		return nil
	})
	return out, err
}

func BenchmarkGetSessionAndUser(b *testing.B) {
	a := benchStore(b)
	ctx := context.Background()
	adapter := func(tok string) error {
		su, err := a.GetSessionAndUser(ctx, tok)
		if err == nil && su == nil {
			err = fmt.Errorf("session %s not found", tok)
		}
		return err
	}
	baseline := func(tok string) error {
		_, err := baselineGet(a.DB(), a.root, tok)
		return err
	}
	for _, impl := range []struct {
		name string
		get  func(string) error
	}{{"adapter", adapter}, {"baseline", baseline}} {
		b.Run(impl.name+"/serial", func(b *testing.B) {
			runtime.GC()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := impl.get(sessionTokens[i%benchUsers]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(impl.name+"/parallel", func(b *testing.B) {
			runtime.GC()
			b.ReportAllocs()
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				for pb.Next() {
					if err := impl.get(sessionTokens[i%benchUsers]); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

// benchWrite runs op serially and in parallel, in each write mode.
func benchWrite(b *testing.B, op func(a *Adapter, i int) error) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		b.Run(mode.String()+"/serial", func(b *testing.B) {
			a := benchStore(b, WithWriteMode(mode))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := op(a, i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(mode.String()+"/parallel", func(b *testing.B) {
			a := benchStore(b, WithWriteMode(mode))
			b.ReportAllocs()
			b.SetParallelism(parallelism)
			var next atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := op(a, int(next.Add(1))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkCreateSession(b *testing.B) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	benchWrite(b, func(a *Adapter, i int) error {
		_, err := a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprintf("new%d", i), UserID: fmt.Sprintf("u%d", i%benchUsers), Expires: exp})
		return err
	})
}

func BenchmarkUpdateSession(b *testing.B) {
	ctx := context.Background()
	base := time.Now().Add(time.Hour)
	benchWrite(b, func(a *Adapter, i int) error {
		// Extending the expiry moves the session's expiry index entry.
		s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: sessionTokens[i%benchUsers], Expires: core.Set(base.Add(time.Duration(i) * time.Millisecond))})
		if err == nil && s == nil {
			err = fmt.Errorf("session %d not found", i%benchUsers)
		}
		return err
	})
}

func BenchmarkVerificationToken(b *testing.B) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	benchWrite(b, func(a *Adapter, i int) error {
		v := core.VerificationToken{Identifier: fmt.Sprintf("u%d@example.com", i), Token: fmt.Sprintf("hash%d", i), Expires: exp}
		if _, err := a.CreateVerificationToken(ctx, v); err != nil {
			return err
		}
		got, err := a.UseVerificationToken(ctx, v.Key())
		if err == nil && got == nil {
			err = fmt.Errorf("token %d not found", i)
		}
		return err
	})
}
