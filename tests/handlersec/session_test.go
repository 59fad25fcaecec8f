package handlersec

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
)

const secret = "handlersec-secret-of-at-least-32-bytes"

// TestUnknownSessionTokenCostsOneRead sends junk session cookies through
// the handler (GET /session and a page behind Require) on each store (the
// handler module's memory adapter too):
// each request costs one getSessionAndUser and no write (a deleteSession
// per junk cookie, on bbolt a synced commit each, would be a cheap denial
// of service). A real session
// still reads, so the count is not trivially met.
func TestUnknownSessionTokenCostsOneRead(t *testing.T) {
	for _, st := range testStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			counting := coretest.NewCounting()
			srv := httptest.NewServer(nil)
			t.Cleanup(srv.Close)
			a, err := auth.New(auth.Config{Adapter: core.NewStore(store, core.WithObserver(counting)), Providers: []provider.Provider{providers.GitHub("id", "secret")},
				Secrets: []string{secret}, BaseURL: srv.URL + "/auth"})
			if err != nil {
				t.Fatal(err)
			}
			h, err := handler.New(handler.Config{Auth: a})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("/auth/", h)
			mux.Handle("/api/me", h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
			srv.Config.Handler = mux

			get := func(path, token string) int {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
				req.AddCookie(&http.Cookie{Name: "authjs.session-token", Value: token})
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res.StatusCode
			}
			// A real session, for contrast: found, one read.
			ctx := context.Background()
			u := core.User{ID: "5f0c2a4e-1b7d-4c3e-9a2f-6d8e0b1c2a3f", Email: "ada@example.com"}
			if _, err := store.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			s, err := a.CreateSession(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			counting.Reset()
			if code := get("/api/me", s.SessionToken); code != http.StatusOK {
				t.Fatalf("a real session: %d", code)
			}
			if calls := counting.Calls(); calls[core.MethodGetSessionAndUser] != 1 || len(counting.Writes()) != 0 {
				t.Fatalf("a fresh session's lookup made %v; want one read", calls)
			}

			counting.Reset()
			const n = 50
			start := time.Now()
			for i := range n {
				path := []string{"/auth/session", "/api/me"}[i%2]
				if code := get(path, randomName(t)); code >= 500 {
					t.Fatalf("GET %s with a junk cookie: %d", path, code)
				}
			}
			calls := counting.Calls()
			if calls[core.MethodGetSessionAndUser] != n || len(calls) != 1 {
				t.Errorf("%d requests with unknown tokens made %v; want %d getSessionAndUser and nothing else", n, calls, n)
			}
			t.Logf("%s: %d junk-cookie requests in %v", st.name, n, time.Since(start).Round(time.Millisecond))
		})
	}
}
