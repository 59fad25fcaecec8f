package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/authport/authport/core/auth"
)

// handlerAllocBound bounds the allocations of one GET /auth/session
// through the handler (ServeHTTP, database session on the memory adapter,
// no CSRF cookie: a GET sets none, where Auth.js sets one), the adapter's
// two and the response's header map included. Allocations are
// deterministic; a change that adds some to the session path fails
// TestHandlerSessionAllocs (it made
// 43 before the session JSON was written without encoding/json's
// reflection and copy; 29 since; 5 once GET /session stopped setting a
// CSRF cookie, parsing every cookie and allocating per header value; 6
// with core's checked store layer). handler's TestSessionReadAllocs holds
// the handler's own bounds.
const handlerAllocBound = 7

// memoryHandler returns the handler over a memory adapter holding user
// u1 (every field set) with the session s1.
func memoryHandler(tb testing.TB) http.Handler {
	tb.Helper()
	h, err := goHandler("http://127.0.0.1", goServerConfig{adapter: memorySession(tb), strategy: auth.StrategyDatabase}, &linkStore{links: map[string]string{}})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// TestHandlerSessionAllocs holds GET /auth/session through the handler
// to handlerAllocBound allocations, and checks its answer.
func TestHandlerSessionAllocs(t *testing.T) {
	h := memoryHandler(t)
	r, _ := http.NewRequestWithContext(context.Background(), "GET", "http://127.0.0.1/auth/session", nil)
	r.Header.Set("Cookie", sessionCookie+"=s1")
	var w *inprocResponse
	allocs := testing.AllocsPerRun(500, func() {
		w = &inprocResponse{h: http.Header{}, body: make([]byte, 0, 512)}
		h.ServeHTTP(w, r)
	})
	allocs -= 2 // the ResponseWriter and its body
	if err := checkSession(&answer{status: w.status, header: w.h, body: w.body}, 1, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	t.Logf("GET /auth/session: %.0f allocations (bound %d)", allocs, handlerAllocBound)
	if allocs > handlerAllocBound {
		t.Errorf("GET /auth/session makes %.0f allocations, want at most %d", allocs, handlerAllocBound)
	}
}

// BenchmarkHandlerSession: GET /auth/session through the handler in
// process, on the memory adapter.
func BenchmarkHandlerSession(b *testing.B) {
	h := memoryHandler(b)
	r, _ := http.NewRequestWithContext(context.Background(), "GET", "http://127.0.0.1/auth/session", nil)
	r.Header.Set("Cookie", sessionCookie+"=s1")
	b.ReportAllocs()
	for b.Loop() {
		w := &inprocResponse{h: http.Header{}, body: make([]byte, 0, 512)}
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatal(w.status)
		}
	}
}
