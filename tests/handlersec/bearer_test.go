package handlersec

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// TestBearerSessions runs the handler's bearer sessions (Config.Bearer:
// API clients send "Authorization: Bearer <token>") on each real store, with database and JWT sessions: a session token or
// a session JWT in "Authorization: Bearer" passes Require; a request with
// the session cookie is read from the cookie alone; junk and malformed
// tokens get 401 with the Bearer invalid_token challenge, costing one
// getSessionAndUser each (database sessions; malformed: none) and never a
// write.
func TestBearerSessions(t *testing.T) {
	for _, st := range testStores {
		for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
			t.Run(st.name+"/"+string(strategy), func(t *testing.T) {
				store := st.open(t)
				counting := coretest.NewCounting()
				srv := httptest.NewServer(nil)
				t.Cleanup(srv.Close)
				a, err := auth.New(auth.Config{Adapter: core.NewStore(store, core.WithObserver(counting)), Secrets: []string{secret}, BaseURL: srv.URL + "/auth",
					Session: auth.SessionOptions{Strategy: strategy}})
				if err != nil {
					t.Fatal(err)
				}
				h, err := handler.New(handler.Config{Auth: a, Bearer: true})
				if err != nil {
					t.Fatal(err)
				}
				mux := http.NewServeMux()
				mux.Handle("/auth/", h)
				mux.Handle("/api/me", h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					s, _ := handler.FromContext(r.Context())
					_, _ = w.Write([]byte(s.User.ID))
				})))
				srv.Config.Handler = mux

				ctx := context.Background()
				users := []core.User{
					{ID: "5f0c2a4e-1b7d-4c3e-9a2f-6d8e0b1c2a3f", Email: "ada@example.com"},
					{ID: "7a1d3b5f-2c8e-4d4f-8b3a-7e9f1c2d3b4a", Email: "grace@example.com"},
				}
				tokens := make([]string, len(users))
				codec, _ := jwt.NewCodec(secret)
				for i, u := range users {
					if _, err := store.CreateUser(ctx, u); err != nil {
						t.Fatal(err)
					}
					if strategy == auth.StrategyJWT {
						tokens[i], _ = codec.Encode(jwt.SessionTokenCookie, map[string]any{"sub": u.ID, "email": u.Email}, time.Hour)
						continue
					}
					s, err := a.CreateSession(ctx, u.ID)
					if err != nil {
						t.Fatal(err)
					}
					tokens[i] = s.SessionToken
				}
				get := func(authz, cookie string) (int, string, string) {
					req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/me", nil)
					if authz != "" {
						req.Header.Set("Authorization", authz)
					}
					if cookie != "" {
						req.AddCookie(&http.Cookie{Name: jwt.SessionTokenCookie, Value: cookie})
					}
					res, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer res.Body.Close()
					body, _ := io.ReadAll(res.Body)
					return res.StatusCode, string(body), strings.Join(res.Header.Values("WWW-Authenticate"), ", ")
				}

				counting.Reset()
				if code, body, _ := get("Bearer "+tokens[0], ""); code != http.StatusOK || body != users[0].ID {
					t.Fatalf("bearer token: %d %q", code, body)
				}
				// The cookie wins over the header.
				if code, body, _ := get("Bearer "+tokens[0], tokens[1]); code != http.StatusOK || body != users[1].ID {
					t.Errorf("cookie of %s with the bearer token of %s: %d %q, want the cookie's user", users[1].ID, users[0].ID, code, body)
				}
				if code, _, _ := get("Bearer "+tokens[0], "junk"); code != http.StatusUnauthorized {
					t.Errorf("a junk cookie with a valid bearer token: %d, want 401", code)
				}
				wantReads := map[auth.Strategy]int{auth.StrategyDatabase: 3, auth.StrategyJWT: 0}[strategy]
				if calls := counting.Calls(); calls[core.MethodGetSessionAndUser] != wantReads || len(counting.Writes()) != 0 {
					t.Errorf("three requests made %v; want %d getSessionAndUser and no write", calls, wantReads)
				}

				counting.Reset()
				const n = 20
				for i := range n {
					authz := "Bearer " + randomName(t)
					if i%4 == 3 {
						authz = []string{"Bearer", "Bearer a b", "Bearer ä", "Bearer =x"}[i%3]
					}
					code, _, challenge := get(authz, "")
					if code != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) {
						t.Fatalf("Authorization %q: %d, WWW-Authenticate %q", authz, code, challenge)
					}
				}
				wellFormed := map[auth.Strategy]int{auth.StrategyDatabase: n - n/4, auth.StrategyJWT: 0}[strategy]
				if calls := counting.Calls(); calls[core.MethodGetSessionAndUser] != wellFormed || len(calls) > 1 {
					t.Errorf("%d junk bearer tokens made %v; want %d getSessionAndUser and nothing else", n, calls, wellFormed)
				}
			})
		}
	}
}
