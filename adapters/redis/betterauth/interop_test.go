package betterauth

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/ratelimit"
)

// baSession is what Better Auth's getSession answers.
type baSession struct {
	Session struct {
		ID        string `json:"id"`
		Token     string `json:"token"`
		UserID    string `json:"userId"`
		ExpiresAt string `json:"expiresAt"`
		CreatedAt string `json:"createdAt"`
		UserAgent string `json:"userAgent"`
		IPAddress string `json:"ipAddress"`
	} `json:"session"`
	User struct {
		ID            string  `json:"id"`
		Email         string  `json:"email"`
		Name          string  `json:"name"`
		EmailVerified bool    `json:"emailVerified"`
		Image         *string `json:"image"`
		CreatedAt     string  `json:"createdAt"`
	} `json:"user"`
}

// baApp is Better Auth in Node (interop/app.mjs) on the same Redis keys.
type baApp struct {
	t *testing.T
	p *nodeproc.Proc
}

func (b baApp) call(out any, method string, args map[string]any) {
	b.t.Helper()
	if err := b.p.Do(map[string]any{"method": method, "args": args}, out); err != nil {
		b.t.Fatalf("Better Auth %s: %v", method, err)
	}
}

// signUp signs a user up in Better Auth and returns its session token and
// the user, which the test also stores in the Go side's primary adapter,
// as the database both apps share would hold it.
func (b baApp) signUp(a *Adapter, email string) (string, core.User) {
	b.t.Helper()
	var r struct {
		Token string `json:"token"`
		User  struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			Name  string `json:"name"`
		} `json:"user"`
	}
	b.call(&r, "signUp", map[string]any{"email": email, "password": "correct horse battery", "name": "Ada"})
	u := core.User{ID: r.User.ID, Email: r.User.Email, Name: &r.User.Name}
	if _, err := a.CreateUser(b.t.Context(), u); err != nil {
		b.t.Fatal(err)
	}
	return r.Token, u
}

func (b baApp) getSession(token string) *baSession {
	b.t.Helper()
	var s *baSession
	b.call(&s, "getSession", map[string]any{"token": token})
	return s
}

func (b baApp) listSessions(userID string) []string {
	b.t.Helper()
	var l []string
	b.call(&l, "listSessions", map[string]any{"userId": userID})
	return l
}

// TestInteropBetterAuth runs Better Auth 1.7.25 itself (interop/app.mjs,
// pinned in interop/package-lock.json; run npm ci there) with
// secondaryStorage on the same Redis database and prefix as an Adapter,
// and checks both directions: a session either side creates is found by
// the other with its user, listed by both, ended by either for both;
// user updates refresh the copies; verification values written by one are
// consumed by the other, once; deleteUser on either side ends the user's
// sessions for both.
func TestInteropBetterAuth(t *testing.T) {
	url := provision.Redis(t)
	c := redistest.SingleNode(t)
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	prefix := redistest.UniqueName(t, "authport-test-ba-interop:") + ":"
	redistest.CleanupPrefix(t, c, prefix)
	a, err := New(ctx, c, prefix, memory.New())
	if err != nil {
		t.Fatal(err)
	}
	p := nodeproc.Start(t, nodeproc.Config{Dir: "interop", Script: "app.mjs", Need: []string{"better-auth/package.json", "ioredis/package.json"}})
	ba := baApp{t, p}
	ba.call(nil, "open", map[string]any{"url": url, "prefix": prefix, "secret": "interop-secret-interop-secret-0123456789"})

	// Better Auth signs a user up: authport finds the session by its
	// token, with the user, and lists it.
	tok1, u := ba.signUp(a, "ada@example.com")
	su, err := a.GetSessionAndUser(ctx, tok1)
	if err != nil || su == nil {
		t.Fatalf("authport's getSessionAndUser of Better Auth's session = %v, %v", su, err)
	}
	if su.Session.UserID != u.ID || su.User.Email != "ada@example.com" || su.Session.CreatedAt.IsZero() ||
		time.Until(su.Session.Expires) < 6*24*time.Hour {
		t.Errorf("Better Auth's session read by authport = %+v", su)
	}
	if l, err := a.ListSessionsByUserID(ctx, u.ID); err != nil || len(l) != 1 || l[0].SessionToken != tok1 {
		t.Errorf("authport lists %v, %v; want Better Auth's session", l, err)
	}

	// authport creates a session: Better Auth's getSession (the signed
	// cookie) finds it with the user's copy, and both list both.
	now := time.Now().UTC().Truncate(time.Millisecond)
	s2 := core.Session{SessionToken: "authport-" + newID(), UserID: u.ID, Expires: now.Add(24 * time.Hour),
		CreatedAt: now, UpdatedAt: now, IPAddress: "203.0.113.7", UserAgent: "Go-http-client/1.1"}
	if _, err := a.CreateSession(ctx, s2); err != nil {
		t.Fatal(err)
	}
	got := ba.getSession(s2.SessionToken)
	if got == nil {
		t.Fatal("Better Auth's getSession does not find the session authport created")
	}
	if got.Session.Token != s2.SessionToken || got.Session.UserID != u.ID || got.User.ID != u.ID || got.User.Email != u.Email ||
		got.User.Name != "Ada" || got.Session.UserAgent != s2.UserAgent || got.Session.IPAddress != s2.IPAddress || got.Session.ID == "" {
		t.Errorf("Better Auth's getSession of authport's session = %+v", got)
	}
	// The session expires in a day, within Better Auth's updateAge (a day)
	// of its expiresIn (7 days): its getSession extended it, rewriting
	// authport's value and list entry, and authport reads the new expiry.
	extended, _ := time.Parse(time.RFC3339Nano, got.Session.ExpiresAt)
	if time.Until(extended) < 6*24*time.Hour {
		t.Errorf("Better Auth's getSession answers expiresAt %s; want it extended to 7 days", got.Session.ExpiresAt)
	}
	if su, err := a.GetSessionAndUser(ctx, s2.SessionToken); err != nil || su == nil || !su.Session.Expires.Equal(extended) {
		t.Errorf("authport reads the session Better Auth extended as %+v, %v; want expires %s", su, err, extended)
	}
	// The two values have the same shape: the same session and user fields
	// (but image: authport writes null for none, as Better Auth does over
	// a SQL database; over its memory adapter it leaves the field out).
	if ka, kb := valueShape(t, c, prefix+tok1), valueShape(t, c, prefix+s2.SessionToken); !slices.Equal(ka, kb) {
		t.Errorf("Better Auth's session value has the fields %v, authport's %v", ka, kb)
	}
	want := []string{tok1, s2.SessionToken}
	slices.Sort(want)
	if l := ba.listSessions(u.ID); !slices.Equal(l, want) {
		t.Errorf("Better Auth lists %v, want %v", l, want)
	}
	if l, _ := a.ListSessionsByUserID(ctx, u.ID); len(l) != 2 {
		t.Errorf("authport lists %d sessions, want 2", len(l))
	}

	// authport updates the user: Better Auth's copies follow. Better Auth
	// updates it: its rewrite of authport's session still reads.
	// (Better Auth's copy of the user keeps its createdAt through it.)
	userCreated := ba.getSession(tok1).User.CreatedAt
	grace := "Grace"
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Name: core.Set(&grace)}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range want {
		if s := ba.getSession(tok); s == nil || s.User.Name != "Grace" {
			t.Errorf("after authport's updateUser Better Auth's getSession(%s) = %+v, want the name Grace", tok, s)
		} else if tok == tok1 && s.User.CreatedAt != userCreated {
			t.Errorf("authport's updateUser moved the copy's createdAt from %s to %s", userCreated, s.User.CreatedAt)
		}
	}
	ba.call(nil, "updateUser", map[string]any{"userId": u.ID, "name": "Ada Lovelace"})
	raw, err := c.Get(ctx, prefix+s2.SessionToken).Result()
	if err != nil || !strings.Contains(raw, `"Ada Lovelace"`) {
		t.Errorf("Better Auth's updateUser left authport's session value %s, %v", raw, err)
	}
	if su, err := a.GetSessionAndUser(ctx, s2.SessionToken); err != nil || su == nil || !su.Session.CreatedAt.Equal(now) {
		t.Errorf("authport's session after Better Auth rewrote it = %+v, %v", su, err)
	}

	// Either side ends a session for both.
	ba.call(nil, "signOut", map[string]any{"token": s2.SessionToken})
	if su, err := a.GetSessionAndUser(ctx, s2.SessionToken); err != nil || su != nil {
		t.Errorf("authport finds the session Better Auth signed out: %+v, %v", su, err)
	}
	if _, err := a.DeleteSession(ctx, tok1); err != nil {
		t.Fatal(err)
	}
	if s := ba.getSession(tok1); s != nil {
		t.Errorf("Better Auth finds the session authport deleted: %+v", s)
	}
	if l := ba.listSessions(u.ID); len(l) != 0 {
		t.Errorf("Better Auth still lists %v", l)
	}
	if n, _ := c.Exists(ctx, prefix+kList+u.ID).Result(); n != 0 {
		t.Error("the user's active-sessions list outlives its last session")
	}

	// Better Auth's "sign out everywhere" (revoke sessions) ends
	// authport's sessions too; one created after it lives.
	var r struct {
		Token string `json:"token"`
	}
	ba.call(&r, "signIn", map[string]any{"email": "ada@example.com", "password": "correct horse battery"})
	s3 := core.Session{SessionToken: "authport-" + newID(), UserID: u.ID, Expires: now.Add(time.Hour), CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
	if _, err := a.CreateSession(ctx, s3); err != nil {
		t.Fatal(err)
	}
	ba.call(nil, "revokeSessions", map[string]any{"userId": u.ID})
	for _, tok := range []string{r.Token, s3.SessionToken} {
		if su, err := a.GetSessionAndUser(ctx, tok); err != nil || su != nil {
			t.Errorf("authport finds %s after Better Auth revoked the user's sessions: %+v, %v", tok, su, err)
		}
	}
	time.Sleep(5 * time.Millisecond) // created after the revocation's millisecond
	s4 := core.Session{SessionToken: "authport-" + newID(), UserID: u.ID, Expires: now.Add(time.Hour), CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
	if _, err := a.CreateSession(ctx, s4); err != nil {
		t.Fatal(err)
	}
	if s := ba.getSession(s4.SessionToken); s == nil {
		t.Error("Better Auth does not find a session authport created after the revocation")
	}
	// authport's "sign out everywhere" ends it for Better Auth.
	if n, err := a.DeleteSessionsByUserID(ctx, u.ID, ""); err != nil || n != 1 {
		t.Errorf("deleteSessionsByUserId = %d, %v; want 1", n, err)
	}
	if s := ba.getSession(s4.SessionToken); s != nil {
		t.Errorf("Better Auth finds a session after authport's deleteSessionsByUserId: %+v", s)
	}

	// Verification values, each side's consumed once by the other.
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	ba.call(nil, "createVerification", map[string]any{"identifier": "reset-password:abc", "value": u.ID, "expiresAt": exp.Format(time.RFC3339Nano)})
	v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "reset-password:abc", Token: u.ID})
	if err != nil || v == nil || !v.Expires.Equal(exp) {
		t.Errorf("authport's use of Better Auth's verification value = %+v, %v", v, err)
	}
	var cv *struct {
		Value string `json:"value"`
	}
	ba.call(&cv, "consumeVerification", map[string]any{"identifier": "reset-password:abc"})
	if cv != nil {
		t.Errorf("Better Auth consumes the value authport used: %+v", cv)
	}
	if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "ada@example.com", Token: "hashed-token", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	ba.call(&cv, "consumeVerification", map[string]any{"identifier": "ada@example.com"})
	if cv == nil || cv.Value != "hashed-token" {
		t.Errorf("Better Auth's consumeVerificationValue of authport's token = %+v", cv)
	}
	if v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "ada@example.com", Token: "hashed-token"}); err != nil || v != nil {
		t.Errorf("authport uses a token Better Auth consumed: %+v, %v", v, err)
	}

	// Rate limits: Better Auth's /sign-in rule (3 per 10 s) counts in the
	// same key as a RateLimiter under RateLimitKey.
	rl, err := NewRateLimiter(c, prefix)
	if err != nil {
		t.Fatal(err)
	}
	limit, key := ratelimit.Limit{Events: 3, Period: 10 * time.Second}, RateLimitKey("198.51.100.23", "/sign-in/email")
	for range 2 {
		if res, err := rl.Allow(ctx, key, limit); err != nil || !res.Allowed {
			t.Fatalf("authport's rate limiter: %+v, %v", res, err)
		}
	}
	signIn := map[string]any{"path": "/sign-in/email", "ip": "198.51.100.23", "body": map[string]any{"email": "nobody@example.com", "password": "wrong password"}}
	var status int
	if ba.call(&status, "request", signIn); status == 429 {
		t.Error("Better Auth refused the 3rd sign-in of the window")
	}
	if ba.call(&status, "request", signIn); status != 429 {
		t.Errorf("Better Auth's 4th sign-in of the window answers %d, want 429 (it did not count authport's 2)", status)
	}
	if res, err := rl.Allow(ctx, key, limit); err != nil || res.Allowed {
		t.Errorf("authport's rate limiter allows a 5th event: %+v, %v", res, err)
	}

	// deleteUser on the Better Auth side ends authport's sessions of the
	// user; on authport's side, Better Auth's.
	tok5, u2 := ba.signUp(a, "grace@example.com")
	s6 := core.Session{SessionToken: "authport-" + newID(), UserID: u2.ID, Expires: now.Add(time.Hour), CreatedAt: now}
	if _, err := a.CreateSession(ctx, s6); err != nil {
		t.Fatal(err)
	}
	ba.call(nil, "deleteUser", map[string]any{"userId": u2.ID})
	for _, tok := range []string{tok5, s6.SessionToken} {
		if n, _ := c.Exists(ctx, prefix+tok).Result(); n != 0 {
			t.Errorf("Better Auth's deleteUser left the session key %s", tok)
		}
	}
	ba.call(&r, "signIn", map[string]any{"email": "ada@example.com", "password": "correct horse battery"})
	if _, err := a.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if s := ba.getSession(r.Token); s != nil {
		t.Errorf("Better Auth finds the session of a user authport deleted: %+v", s)
	}
	left, err := redistest.ScanKeys(context.Background(), c, prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range left {
		k = strings.TrimPrefix(k, prefix)
		if !strings.HasPrefix(k, kRevoked) && !strings.Contains(k, "|") {
			t.Errorf("left behind: %s", k)
		}
	}
}

// valueShape returns the field names of a session value: its own, its
// session's ("session.x") and its user's ("user.x"), sorted.
func valueShape(t *testing.T, c redis.UniversalClient, key string) []string {
	t.Helper()
	raw, err := c.Get(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, v := range doc {
		out = append(out, k)
		var sub map[string]json.RawMessage
		if json.Unmarshal(v, &sub) == nil {
			for f, fv := range sub {
				if k+"."+f != "user.image" || string(fv) != "null" {
					out = append(out, k+"."+f)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
