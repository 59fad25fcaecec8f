package main

import (
	"bytes"
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/authport/authport/core/auth"
)

// BenchmarkHandlerCost is the pair behind the "handler's own cost" goal
// (the HTTP layer adds parsing, cookies and JSON, not round trips) on bbolt: GET /auth/session through the handler in process (ServeHTTP,
// a database session, no socket) and the adapter's getSessionAndUser of
// the same sessions, serially (c1) and from 32 goroutines (c32). Each
// side checks its answer alike (the user's e-mail in the result). Compare
// handler with adapter: ns/op of adapter over ns/op of handler is the
// throughput ratio.
//
//	GOWORK=off go test -run - -bench HandlerCost -benchtime 200000x -count 6
func BenchmarkHandlerCost(b *testing.B) {
	const users = 1000
	s, err := openBolt("")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.close)
	ctx := context.Background()
	if err := seedSessions(ctx, s.adapter, users); err != nil {
		b.Fatal(err)
	}
	h, err := goHandler("http://127.0.0.1", goServerConfig{adapter: s.adapter, strategy: auth.StrategyDatabase}, &linkStore{links: map[string]string{}})
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]*http.Request, users)
	emails := make([][]byte, users)
	for i := range users {
		reqs[i], _ = http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/auth/session", nil)
		reqs[i].Header.Set("Cookie", sessionCookie+"="+sessionToken(i))
		emails[i] = []byte(`"email":"` + userID(i) + `@bench.example"`)
	}
	handlerCall := func(i int) bool {
		w := &inprocResponse{h: http.Header{}, body: make([]byte, 0, 256)}
		h.ServeHTTP(w, reqs[i])
		return w.status == http.StatusOK && bytes.Contains(w.body, emails[i])
	}
	adapterCall := func(i int) bool {
		su, err := s.adapter.GetSessionAndUser(ctx, sessionToken(i))
		return err == nil && su != nil && su.User.Email == userID(i)+"@bench.example"
	}
	for _, side := range []struct {
		name string
		call func(int) bool
	}{{"handler", handlerCall}, {"adapter", adapterCall}} {
		b.Run(side.name+"/c1", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if !side.call(i % users) {
					b.Fatalf("%s: wrong answer for user %d", side.name, i%users)
				}
				i += 7
			}
		})
		b.Run(side.name+"/c32", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16) // 32 goroutines on 2 CPUs
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(7) % users)
					if !side.call(i) {
						b.Errorf("%s: wrong answer for user %d", side.name, i)
						return
					}
				}
			})
		})
	}
}
