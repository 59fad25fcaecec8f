package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// readBudget is the allocation budget of one GET /auth/session (and one
// request through Require) with a valid session cookie, by layer. The
// counts are testing.AllocsPerRun's, which are deterministic: a change
// that adds allocations to a layer's part of the read fails
// TestReadPathAllocs and names the layer. Each budget is the count
// measured when it was set plus a margin of one or two; lower it when a
// change saves allocations.
type readBudget struct {
	// store is the adapter's getSessionAndUser, or with JWT sessions
	// the jwt module's Decode of the cookie.
	store int
	// core is core/auth's Edge.ReadSession less the store's share.
	core int
	// handler is the handler's own part of GET /auth/session:
	// ServeHTTP less ReadSession's and (JWT) the decode's.
	handler int
	// require is Require's own part of a request it lets through: its
	// ServeHTTP less auth.Auth.Session's (database) or the decode's
	// (JWT).
	require int
}

// readBudgets are the read path's budgets by backend (readPath), set
// from these counts, with the context a server's request carries
// (cancellable, no deadline), the same with and without -race except
// where noted:
//
//	postgres (gorm, AuthJSPg, pgxread): store 22, core 0, handler 2, require 3
//	redis (redisadapter):               store 47, core 0, handler 2, require 3
//	jwt:                                store 185 (187 under -race), core 2, handler 5, require 6
//
// (PostgreSQL's store was 64 and core/auth's 1 before issue 42: the
// adapter's read through pgxread, gormadapter.WithRowReader, and
// core.MethodOf without reflection; see docs/performance.md, "The read
// path against its limit". Through database/sql the store is still 64:
// TestStatementsPerOperation and the adapter's own tests hold that path.)
//
// The store's margin is two (a driver's patch release moves it by one or
// two), the other layers' one. The JWT's core is the copy of the claims
// ReadSession makes; the handler's own are the handler module's
// TestSessionReadAllocs bounds (the Session; the JSON body with its
// header values; Require's context value and request copy).
var readBudgets = map[string]readBudget{
	"postgres": {store: 24, core: 1, handler: 3, require: 4},
	"redis":    {store: 49, core: 1, handler: 3, require: 4},
	"jwt":      {store: 187 + raceDecodeAllocs, core: 3, handler: 6, require: 7},
}

// readAllocRuns is how many calls testing.AllocsPerRun averages over.
const readAllocRuns = 300

// readCounts are the allocations of the read path's parts, per call.
type readCounts struct {
	store, readSession, lookup, get, require float64
}

// layers splits the counts into readBudget's layers.
func (c readCounts) layers(jwtSessions bool) readBudget {
	b := readBudget{store: int(c.store)}
	if jwtSessions {
		// ReadSession gets the decoded claims; GET and Require decode.
		b.core = int(c.readSession)
		b.handler = int(c.get - c.readSession - c.store)
		b.require = int(c.require - c.store)
	} else {
		b.core = int(c.readSession - c.store)
		b.handler = int(c.get - c.readSession)
		b.require = int(c.require - c.lookup)
	}
	return b
}

// countReadPath counts, for user k's session on p, the allocations of
// the store's read, of ReadSession, of auth.Auth.Session, of GET
// /auth/session through the handler and of a request through Require,
// checking each answer.
func countReadPath(t *testing.T, p *readPath, k int) readCounts {
	t.Helper()
	// A server's request context: cancellable, without a deadline.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cookie := sessionCookie + "=" + p.cookies[k]
	get, _ := http.NewRequestWithContext(ctx, "GET", readPathOrigin+"/auth/session", nil)
	get.Header.Set("Cookie", cookie)
	api, _ := http.NewRequestWithContext(ctx, "GET", readPathOrigin+"/api/me", nil)
	api.Header.Set("Cookie", cookie)
	api.Header.Set("Accept", "application/json")
	email := userID(k) + "@bench.example"
	var c readCounts
	var req auth.SessionRequest
	if p.getter != nil {
		c.store = testing.AllocsPerRun(readAllocRuns, func() {
			if su, err := p.getter.GetSessionAndUser(ctx, p.cookies[k]); err != nil || su == nil || su.User.Email != email {
				t.Fatalf("getSessionAndUser: %+v, %v", su, err)
			}
		})
		c.lookup = testing.AllocsPerRun(readAllocRuns, func() {
			if su, _, err := p.auth.Session(ctx, p.cookies[k]); err != nil || su == nil || su.User.Email != email {
				t.Fatalf("auth.Session: %+v, %v", su, err)
			}
		})
		req = auth.SessionRequest{Token: p.cookies[k], Shape: true}
	} else {
		codec, err := jwt.NewCodec(benchSecret)
		if err != nil {
			t.Fatal(err)
		}
		c.store = testing.AllocsPerRun(readAllocRuns, func() {
			if claims, err := codec.Decode(sessionCookie, p.cookies[k]); err != nil || claims["email"] != email {
				t.Fatalf("Decode: %v, %v", claims, err)
			}
		})
		claims, _ := codec.Decode(sessionCookie, p.cookies[k])
		req = auth.SessionRequest{Claims: claims, Shape: true}
	}
	c.readSession = testing.AllocsPerRun(readAllocRuns, func() {
		st, ok, err := p.auth.Edge().ReadSession(ctx, req)
		if err != nil || !ok || st.Extended || st.Token != "" {
			t.Fatalf("ReadSession: %+v, %v, %v", st, ok, err)
		}
	})
	w := &inprocResponse{h: http.Header{}, body: make([]byte, 0, 512)}
	c.get = testing.AllocsPerRun(readAllocRuns, func() {
		w.reset()
		p.handler.ServeHTTP(w, get)
	})
	if err := checkSession(&answer{status: w.status, header: w.h, body: w.body}, k, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if len(w.h["Set-Cookie"]) > 0 {
		t.Fatalf("GET /auth/session set cookies %q: the session was due", w.h["Set-Cookie"])
	}
	var seen bool
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := handler.FromContext(r.Context())
		seen = ok && s.User.Email != nil && *s.User.Email == email
		w.WriteHeader(http.StatusNoContent)
	})
	guarded := p.handler.Require(next)
	c.require = testing.AllocsPerRun(readAllocRuns, func() {
		w.reset()
		seen = false
		guarded.ServeHTTP(w, api)
	})
	if w.status != http.StatusNoContent || !seen {
		t.Fatalf("Require: status %d, session seen %v", w.status, seen)
	}
	return c
}

// TestReadPathAllocs holds the whole session read, GET /auth/session and
// a request through Require with a valid session cookie, to readBudgets
// on PostgreSQL, Redis and JWT sessions, layer by layer: the adapter's
// getSessionAndUser (or the JWT's decode), core/auth's ReadSession, and
// the handler's own work. Allocations are counted, not timed, so the test
// gives the same answer on any machine; PostgreSQL and Redis are skipped
// when their servers are missing (failed when AUTHPORT_REQUIRE names
// them).
func TestReadPathAllocs(t *testing.T) {
	for _, name := range readPathBackends {
		t.Run(name, func(t *testing.T) {
			reachable(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := openReadPath(ctx, name, 20)
			if err != nil {
				t.Fatal(err)
			}
			defer p.close()
			c := countReadPath(t, p, 7)
			got, want := c.layers(p.getter == nil), readBudgets[name]
			t.Logf("%s: store %.0f, ReadSession %.0f, auth.Session %.0f, GET %.0f, Require %.0f; by layer %+v (budget %+v)",
				name, c.store, c.readSession, c.lookup, c.get, c.require, got, want)
			storeName := "the adapter's getSessionAndUser"
			if p.getter == nil {
				storeName = "the jwt module's Decode"
			}
			for _, l := range []struct {
				layer     string
				got, want int
			}{
				{storeName, got.store, want.store},
				{"core/auth's Edge.ReadSession (less the store's share)", got.core, want.core},
				{"the handler's own GET /auth/session (less ReadSession's)", got.handler, want.handler},
				{"the handler's own Require", got.require, want.require},
			} {
				if l.got > l.want {
					t.Errorf("%s: %s grew: %d allocations per call, budget %d", name, l.layer, l.got, l.want)
				}
			}
		})
	}
}
