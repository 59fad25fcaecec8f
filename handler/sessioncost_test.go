package handler_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// TestUnknownSessionTokenCostsOneRead sends junk session cookies to
// /session and to a page behind Require (issue 23, item 3: each made a
// deleteSession, a write): each must cost one getSessionAndUser and no
// write. tools/handlersec runs the same on bbolt, PostgreSQL and Redis.
func TestUnknownSessionTokenCostsOneRead(t *testing.T) {
	counting := coretest.NewCounting()
	store := core.NewStore(memory.New(), core.WithObserver(counting))
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	a, err := auth.New(auth.Config{Adapter: store, Providers: []provider.Provider{providers.GitHub("id", "secret")},
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
	mux.Handle("/api/me", h.Require(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	srv.Config.Handler = mux
	const n = 20
	for i := range n {
		path := []string{"/auth/session", "/api/me"}[i%2]
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: jwt.SessionTokenCookie, Value: "junk-" + string(rune('a'+i))})
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("GET %s with a junk cookie: %s", path, res.Status)
		}
	}
	calls := counting.Calls()
	if calls[core.MethodGetSessionAndUser] != n || len(calls) != 1 {
		t.Errorf("%d requests with unknown session tokens made the adapter calls %v; want %d getSessionAndUser and nothing else", n, calls, n)
	}
}
