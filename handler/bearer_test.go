package handler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// bearerEnv is a handler with Config.Bearer over a counting memory store,
// a stored user with a database session, and that user's JWT session
// token: the token the session cookie would hold for each strategy.
type bearerEnv struct {
	*env
	counting *conformance.Counting
	dbToken  string // a database session of user-b
	jwtToken string // a JWT session of user-b (the cookie's salt)
}

func newBearerEnv(t *testing.T, strategy auth.Strategy, bearer bool) *bearerEnv {
	t.Helper()
	be := &bearerEnv{}
	be.env = newEnv(t, envOpts{strategy: strategy, providers: noProviders,
		adapter: func(_ *testing.T, now func() time.Time) any {
			be.counting = conformance.NewCounting(memory.New(memory.WithClock(now)))
			return be.counting
		},
		config: func(c *handler.Config) { c.Bearer = bearer },
	})
	ctx := context.Background()
	if _, err := be.counting.CreateUser(ctx, core.User{ID: "user-b", Email: "bearer@example.com"}); err != nil {
		t.Fatal(err)
	}
	s, err := be.a.CreateSession(ctx, "user-b")
	if err != nil {
		t.Fatal(err)
	}
	be.dbToken = s.SessionToken
	codec, _ := jwt.NewCodec(secret)
	be.jwtToken, _ = codec.Encode(jwt.SessionTokenCookie, map[string]any{"sub": "user-b", "email": "bearer@example.com"}, time.Hour)
	be.counting.Reset()
	return be
}

// token is the valid bearer token for the strategy.
func (be *bearerEnv) token(strategy auth.Strategy) string {
	if strategy == auth.StrategyJWT {
		return be.jwtToken
	}
	return be.dbToken
}

// api calls GET /api/me (behind Require) with the given headers.
func (be *bearerEnv) api(header http.Header) response {
	be.t.Helper()
	req, _ := http.NewRequest("GET", be.srv.URL+"/api/me", nil)
	req.Header = header
	return be.do(be.newClient(), req)
}

// Bearer sessions (issue 22, item 7): off by default; on, a database
// session token or a JWT session in "Authorization: Bearer" signs the
// request in through Require, Middleware and Reader.Session, never through
// the handler's own routes.
func TestBearerSessions(t *testing.T) {
	for _, strategy := range hookStrategies {
		t.Run(string(strategy), func(t *testing.T) {
			off := newBearerEnv(t, strategy, false)
			res := off.api(http.Header{"Authorization": {"Bearer " + off.token(strategy)}, "Accept": {"application/json"}})
			wantStatus(t, res, 401)
			if got := res.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != `Cookie realm="authport"` {
				t.Errorf("Bearer off: WWW-Authenticate %q, want the Cookie challenge alone", got)
			}

			be := newBearerEnv(t, strategy, true)
			res = be.api(http.Header{"Authorization": {"Bearer " + be.token(strategy)}})
			wantStatus(t, res, 200)
			var me struct{ ID, Email string }
			if err := json.Unmarshal([]byte(res.body), &me); err != nil || me.ID != "user-b" || me.Email != "bearer@example.com" {
				t.Errorf("bearer request: %s (%v)", res.body, err)
			}
			// The scheme is case-insensitive (RFC 9110).
			wantStatus(t, be.api(http.Header{"Authorization": {"bearer  " + be.token(strategy)}}), 200)

			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer "+be.token(strategy))
			s, err := be.h.Session(r)
			if err != nil || s == nil || !s.Bearer || s.User.ID != "user-b" || s.Strategy != strategy {
				t.Errorf("Reader.Session with a bearer token: %+v, %v", s, err)
			}
			// The routes read cookies only: GET /auth/session is null.
			req, _ := http.NewRequest("GET", be.base+"/session", nil)
			req.Header.Set("Authorization", "Bearer "+be.token(strategy))
			if body := be.do(be.newClient(), req).body; body != "null" {
				t.Errorf("GET /auth/session with a bearer token: %s, want null", body)
			}
			if strategy == auth.StrategyDatabase {
				if calls := be.counting.Calls(); calls[core.MethodGetSessionAndUser] != 3 || len(be.counting.Writes()) != 0 {
					t.Errorf("three bearer reads made %v; want three getSessionAndUser and no write", calls)
				}
			} else if calls := be.counting.Calls(); len(calls) != 0 {
				t.Errorf("JWT bearer reads called the store: %v", calls)
			}
		})
	}
}

// The session cookie wins: a request that carries it is read from it
// alone, even when it is unknown and the bearer token is valid; the
// bearer token is not looked up.
func TestBearerCookieWins(t *testing.T) {
	for _, strategy := range hookStrategies {
		t.Run(string(strategy), func(t *testing.T) {
			be := newBearerEnv(t, strategy, true)
			other, err := be.a.CreateSession(context.Background(), "user-b")
			if err != nil {
				t.Fatal(err)
			}
			codec, _ := jwt.NewCodec(secret)
			otherJWT, _ := codec.Encode(jwt.SessionTokenCookie, map[string]any{"sub": "user-c", "email": "cookie@example.com"}, time.Hour)
			cookie := map[auth.Strategy]string{auth.StrategyDatabase: other.SessionToken, auth.StrategyJWT: otherJWT}[strategy]
			be.counting.Reset()

			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer "+be.token(strategy))
			r.AddCookie(&http.Cookie{Name: jwt.SessionTokenCookie, Value: cookie})
			s, err := be.h.Session(r)
			if err != nil || s == nil || s.Bearer {
				t.Fatalf("cookie and bearer: %+v, %v; want the cookie's session", s, err)
			}
			if strategy == auth.StrategyJWT && s.User.ID != "user-c" {
				t.Errorf("cookie and bearer: user %q, want the cookie's user-c", s.User.ID)
			}
			// An unknown cookie (or one chunk of it) with a valid bearer
			// token: signed out.
			for _, c := range []*http.Cookie{{Name: jwt.SessionTokenCookie, Value: "junk"}, {Name: jwt.SessionTokenCookie + ".0", Value: "junk"}} {
				res := be.api(http.Header{"Authorization": {"Bearer " + be.token(strategy)}, "Cookie": {c.String()}})
				wantStatus(t, res, 401)
			}
			if strategy == auth.StrategyDatabase {
				// The cookie's session, then the junk cookie: no bearer lookup
				// (the chunk is no database session cookie, so no read).
				if calls := be.counting.Calls(); calls[core.MethodGetSessionAndUser] != 2 || len(be.counting.Writes()) != 0 {
					t.Errorf("calls %v; want two getSessionAndUser (the cookies'), none for the bearer token", calls)
				}
			}
		})
	}
}

// A malformed Authorization header, or a token that is no session, is a
// 401 with the Bearer challenge's invalid_token error (never a redirect to
// the sign-in page, never a panic or a 5xx), and costs no store call when
// malformed, one read and no write when well-formed.
func TestBearerMalformed(t *testing.T) {
	for _, strategy := range hookStrategies {
		t.Run(string(strategy), func(t *testing.T) {
			be := newBearerEnv(t, strategy, true)
			valid := be.token(strategy)
			malformed := [][]string{
				{"Bearer"}, {"Bearer "}, {"Bearer    "}, {"Bearer a b"}, {"Bearer " + valid + " x"},
				{"Bearer ===="}, {"Bearer a=b"}, {"Bearer tök"}, {"Bearer a\tb"}, {"Bearer " + strings.Repeat("a", 17<<10)},
				{"Bearer " + valid, "Bearer " + valid}, // two headers: ambiguous
			}
			for _, h := range malformed {
				res := be.api(http.Header{"Authorization": h, "Accept": {"text/html"}})
				wantStatus(t, res, 401)
				if got := strings.Join(res.Header.Values("WWW-Authenticate"), "|"); !strings.Contains(got, `Bearer realm="authport", error="invalid_token"`) {
					t.Errorf("Authorization %.40q: WWW-Authenticate %q", h, got)
				}
				if !strings.Contains(res.body, `"error":"Unauthorized"`) {
					t.Errorf("Authorization %.40q: body %s", h, res.body)
				}
			}
			if calls := be.counting.Calls(); len(calls) != 0 {
				t.Errorf("malformed bearer headers called the store: %v", calls)
			}
			// Another scheme is not a bearer credential: the usual answer to a
			// request without a session (a page is sent to sign in).
			res := be.api(http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}, "Accept": {"text/html"}})
			wantStatus(t, res, 303)

			unknown := []string{"0123456789abcdef0123456789abcdef", valid[:len(valid)-4] + "AAAA", "x"}
			for _, tok := range unknown {
				res := be.api(http.Header{"Authorization": {"Bearer " + tok}})
				wantStatus(t, res, 401)
			}
			calls := be.counting.Calls()
			if strategy == auth.StrategyDatabase && (calls[core.MethodGetSessionAndUser] != len(unknown) || len(calls) != 1) {
				t.Errorf("%d unknown bearer tokens made %v; want as many getSessionAndUser and nothing else", len(unknown), calls)
			}
			if strategy == auth.StrategyJWT && len(calls) != 0 {
				t.Errorf("unknown JWT bearer tokens called the store: %v", calls)
			}
		})
	}
}

// A JWT bearer token is the session cookie's JWE: on https its salt is the
// __Secure- cookie name, so a token sealed for the plain name is refused,
// as is an expired one.
func TestBearerJWTSalt(t *testing.T) {
	codec, _ := jwt.NewCodec(secret)
	secureTok, _ := codec.Encode(jwt.SecureSessionTokenCookie, map[string]any{"sub": "u"}, time.Hour)
	plainTok, _ := codec.Encode(jwt.SessionTokenCookie, map[string]any{"sub": "u"}, time.Hour)
	expired, _ := codec.WithClock(func() time.Time { return time.Now().Add(-2 * time.Hour) }).Encode(jwt.SecureSessionTokenCookie, map[string]any{"sub": "u"}, time.Hour)
	rd, err := handler.NewReader(handler.ReaderConfig{Secrets: []string{secret}, Secure: true, Bearer: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		token string
		ok    bool
	}{{secureTok, true}, {plainTok, false}, {expired, false}} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+c.token)
		s, err := rd.Session(r)
		if err != nil || (s != nil) != c.ok {
			t.Errorf("token %.20s…: %+v, %v; want a session: %v", c.token, s, err, c.ok)
		}
	}
}

// A session JWT minted by Auth.js's own @auth/core/jwt (the value of its
// __Secure-authjs.session-token cookie) is a bearer token for a Reader
// with the same secret.
func TestBearerReadsAuthjsJWT(t *testing.T) {
	maxAge := 3600
	minted := authjs(t, authjsReq{Op: "encode", Secret: secret, Salt: jwt.SecureSessionTokenCookie,
		Claims: map[string]any{"sub": "user-authjs", "email": "authjs@example.com"}, MaxAge: &maxAge})[0].Token
	rd, err := handler.NewReader(handler.ReaderConfig{Secrets: []string{secret}, Secure: true, Bearer: true})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+minted)
	if s, err := rd.Session(r); err != nil || s == nil || !s.Bearer || s.User.ID != "user-authjs" {
		t.Errorf("Auth.js's JWT as a bearer token: %+v, %v", s, err)
	}
}
