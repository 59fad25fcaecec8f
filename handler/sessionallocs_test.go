package handler_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
)

// Allocation bounds of the session read (issue 27, "the handler's own
// cost"), counted with testing.AllocsPerRun over the memory adapter, whose
// getSessionAndUser's allocations are included. Allocations are
// deterministic: a change that adds work to the path fails here. Before
// these bounds, GET /auth/session made 25 (a CSRF cookie on every GET,
// every cookie of the request parsed, three allocations per Session, one
// per header value); race-enabled builds count the same.
const (
	// GET /auth/session, database session: the adapter's, the Session,
	// the JSON body with the header values.
	sessionGetAllocs = 3
	// A request through Require with the session cookie or a bearer
	// token: the adapter's, the Session, the context value and the
	// request copy WithContext makes.
	requireAllocs = 4
)

// bareResponse is the least http.ResponseWriter: a header map and the
// status, discarding the body.
type bareResponse struct {
	h      http.Header
	status int
	n      int
}

func (w *bareResponse) Header() http.Header { return w.h }
func (w *bareResponse) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *bareResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(b)
	return len(b), nil
}

func TestSessionReadAllocs(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com", Name: ptr("Ada Lovelace")}); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: "https://app.example.com/auth"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.CreateSession(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, Bearer: true})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, header, value string) *http.Request {
		r, _ := http.NewRequestWithContext(ctx, "GET", "https://app.example.com"+path, nil)
		r.Header.Set("Cookie", "theme=dark; other=1")
		r.Header.Set(header, value)
		return r
	}
	api := h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s, ok := handler.FromContext(r.Context()); !ok || s.User.ID != "u1" {
			t.Error("Require passed a request without the session")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	for _, c := range []struct {
		name  string
		h     http.Handler
		r     *http.Request
		want  int
		bound int
	}{
		{"GET /auth/session", h, get("/auth/session", "Cookie", "theme=dark; __Secure-authjs.session-token="+s.SessionToken), 200, sessionGetAllocs},
		{"Require, cookie", api, get("/api", "Cookie", "theme=dark; __Secure-authjs.session-token="+s.SessionToken), 204, requireAllocs},
		{"Require, bearer", api, get("/api", "Authorization", "Bearer "+s.SessionToken), 204, requireAllocs},
	} {
		var w *bareResponse
		header := http.Header{}
		allocs := testing.AllocsPerRun(200, func() {
			clear(header)
			w = &bareResponse{h: header}
			c.h.ServeHTTP(w, c.r)
		}) - 1 // the bareResponse
		if w.status != c.want || w.n == 0 && c.want == 200 {
			t.Fatalf("%s: status %d, %d bytes", c.name, w.status, w.n)
		}
		t.Logf("%s: %.0f allocations (bound %d)", c.name, allocs, c.bound)
		if allocs > float64(c.bound) {
			t.Errorf("%s makes %.0f allocations, want at most %d", c.name, allocs, c.bound)
		}
	}
}

// The session JSON's expires is written by hand; it must read as
// time.Format with Auth.js's layout (toISOString) for any time.
func TestSessionExpiresFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}
	for range 2000 {
		times = append(times, time.Unix(rng.Int64N(400_000_000_000)-100_000_000_000, rng.Int64N(1e9)).In(time.FixedZone("x", 3600)))
	}
	for _, tm := range times {
		b, _ := handler.Session{Expires: tm, Strategy: auth.StrategyJWT}.MarshalJSON()
		want := `"expires":"` + tm.UTC().Format("2006-01-02T15:04:05.000Z") + `"`
		if !strings.Contains(string(b), want) {
			t.Fatalf("%v: %s, want %s", tm, b, want)
		}
	}
}
