package handler_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// contractPasskeys stands in for the passkey module to test the handler's
// side of the Passkeys contract (routes, CSRF, the challenge cookie,
// session issuing); the ceremonies themselves are the passkey module's,
// tested there and in the browser tests.
type contractPasskeys struct {
	a          *auth.Auth
	mu         sync.Mutex
	users      []*core.User // the user argument of each call
	issued     int          // challenges made
	challenges []string     // the challenge argument of each callback
}

// Timeout is the real module's default.
func (p *contractPasskeys) Timeout() time.Duration { return 5 * time.Minute }

func (p *contractPasskeys) Options(_ context.Context, id string, query url.Values, user *core.User) (any, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users = append(p.users, user)
	switch query.Get("fail") {
	case "store":
		// What passkey.Options returns when the adapter fails.
		return nil, "", &auth.AdapterError{Method: core.MethodGetUserByEmail, Err: errors.New("connection refused")}
	case "input":
		return nil, "", auth.Fail(auth.CodeWebAuthnVerification, errors.New("passkey: WebAuthn ceremony not allowed"))
	}
	p.issued++
	challenge := fmt.Sprintf(`{"challenge":"abc%d","provider":%q}`, p.issued, id)
	return map[string]any{"action": "authenticate", "options": map[string]any{"challenge": fmt.Sprintf("abc%d", p.issued), "rpId": "localhost"}}, challenge, nil
}

func (p *contractPasskeys) Callback(ctx context.Context, id string, form url.Values, challenge string, user *core.User) (*auth.SignIn, error) {
	p.mu.Lock()
	p.challenges = append(p.challenges, challenge)
	p.mu.Unlock()
	switch {
	case form.Get("fail") == "store":
		return nil, &auth.AdapterError{Method: core.Method(core.ExtensionAdvanceAuthenticatorCounter), Err: errors.New("connection refused")}
	case form.Get("action") != "authenticate" || form.Get("data") != `{"id":"cred-1"}`:
		return nil, auth.Fail(auth.CodeWebAuthnVerification, errors.New("passkey: assertion invalid"))
	}
	return p.a.SignInWithPasskey(ctx, id, "cred-1", 0, user)
}

// lastChallenge is the challenge the last callback was given.
func (p *contractPasskeys) lastChallenge() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.challenges) == 0 {
		return "<no callback>"
	}
	return p.challenges[len(p.challenges)-1]
}

func (p *contractPasskeys) Script() []byte { return []byte("/* passkey script */") }

// storePasskey stores the authenticator cred-1 of the user, with its
// webauthn account, as a registration would.
func storePasskey(t *testing.T, store interface {
	core.AccountLinker
	core.AuthenticatorCreator
}, userID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := store.LinkAccount(ctx, core.Account{UserID: userID, Provider: "passkey", Type: core.AccountTypeWebAuthn, ProviderAccountID: "cred-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "cred-1", UserID: userID,
		ProviderAccountID: "cred-1", CredentialPublicKey: "pk", CredentialDeviceType: "singleDevice", Transports: ptr("internal")}); err != nil {
		t.Fatal(err)
	}
}

func TestPasskeyRoutes(t *testing.T) {
	pk := &contractPasskeys{}
	e := newEnv(t, envOpts{
		providers: func(*testing.T, string) []provider.Provider {
			second := provider.Passkey()
			second.ID, second.Name = "passkey2", "Passkey 2"
			return []provider.Provider{provider.Passkey(), second}
		},
		config: func(c *handler.Config) { pk.a = c.Auth; c.Passkeys = pk },
	})
	ctx := context.Background()
	if _, err := e.store.CreateUser(ctx, core.User{ID: "u-pk", Email: "pk@example.com"}); err != nil {
		t.Fatal(err)
	}
	storePasskey(t, e.store, "u-pk")

	page := e.get("/auth/signin")
	wantStatus(t, page, 200)
	form := `<form class="passkey" method="post" action="` + e.base + `/callback/passkey" data-authport-passkey data-options-url="` + e.base + `/webauthn-options/passkey">`
	if !strings.Contains(page.body, form) {
		t.Errorf("sign-in page lacks %s:\n%s", form, page.body)
	}
	for _, input := range []string{`name="action" value=""`, `name="data" value=""`, `name="csrfToken" value="`, `name="email" type="email"`, ">Sign in with Passkey</button>"} {
		if !strings.Contains(page.body, input) {
			t.Errorf("passkey form lacks %s", input)
		}
	}
	if n := strings.Count(page.body, `<script src="`+e.base+`/passkey.js" defer></script>`); n != 1 {
		t.Errorf("passkey.js included %d times, want once", n)
	}

	res := e.get("/auth/passkey.js")
	wantStatus(t, res, 200)
	wantHeader(t, res, "Content-Type", "text/javascript; charset=utf-8")
	if res.body != "/* passkey script */" {
		t.Errorf("passkey.js = %q", res.body)
	}

	res = e.get("/auth/webauthn-options/passkey?action=authenticate")
	wantStatus(t, res, 200)
	wantHeader(t, res, "Content-Type", "application/json")
	if !strings.Contains(res.body, `"action":"authenticate"`) || setCookie(res, "authjs.challenge") == nil {
		t.Errorf("options: %s %v", res.body, res.Header["Set-Cookie"])
	}
	// The challenge is sealed as Auth.js seals it: the cookie name is the
	// salt, the claims {"value": challenge}, the lifetime the timeout.
	c := setCookie(res, "authjs.challenge")
	if c == nil || !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" || c.MaxAge != 300 {
		t.Fatalf("challenge cookie: %+v", c)
	}
	codec, err := jwt.NewCodec(secret)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := codec.WithClock(e.clock.Now).Decode("authjs.challenge", c.Value)
	if err != nil || claims["value"] != `{"challenge":"abc1","provider":"passkey"}` || claims["exp"].(float64)-claims["iat"].(float64) != 300 {
		t.Fatalf("challenge cookie claims: %v, %v", claims, err)
	}
	if e.get("/auth/webauthn-options/nope").StatusCode != 404 {
		t.Error("options of an unknown provider")
	}
	// A refused request is the client's error; a failed store is not.
	if res := e.get("/auth/webauthn-options/passkey?fail=input"); res.StatusCode != 400 {
		t.Errorf("options refused: %d %s, want 400", res.StatusCode, res.body)
	}
	res = e.get("/auth/webauthn-options/passkey?fail=store")
	if res.StatusCode != 500 || strings.Contains(res.body, "connection refused") {
		t.Errorf("options with the store down: %d %s, want 500 without the store's error", res.StatusCode, res.body)
	}

	// The callback: CSRF first, then the ceremony, then the session.
	valid := url.Values{"action": {"authenticate"}, "data": {`{"id":"cred-1"}`}}
	res = e.post("/auth/callback/passkey", valid)
	wantLocation(t, e, res, "/auth/signin", "error", "MissingCSRF")
	bad := url.Values{"csrfToken": {e.csrf()}, "action": {"authenticate"}, "data": {`{"id":"forged"}`}}
	res = e.post("/auth/callback/passkey", bad)
	wantLocation(t, e, res, "/auth/signin", "error", "WebAuthnVerificationError")
	// The callback read the challenge and cleared the cookie: the next
	// one has none.
	if got := pk.lastChallenge(); got != `{"challenge":"abc1","provider":"passkey"}` {
		t.Errorf("the callback was given the challenge %q", got)
	}
	if c := setCookie(res, "authjs.challenge"); c == nil || c.MaxAge >= 0 {
		t.Errorf("the challenge cookie is not cleared: %v", res.Header["Set-Cookie"])
	}
	// A store failure is the server's: the error page, Configuration.
	res = e.post("/auth/callback/passkey", url.Values{"csrfToken": {e.csrf()}, "action": {"authenticate"}, "data": {`{"id":"cred-1"}`}, "fail": {"store"}})
	wantLocation(t, e, res, "/auth/error", "error", "Configuration")
	if got := pk.lastChallenge(); got != "" {
		t.Errorf("the callback was given the challenge %q after the cookie was cleared", got)
	}
	e.get("/auth/webauthn-options/passkey")
	valid.Set("csrfToken", e.csrf())
	valid.Set("callbackUrl", "/home")
	res = e.post("/auth/callback/passkey", valid)
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/home")
	if got := pk.lastChallenge(); got != `{"challenge":"abc2","provider":"passkey"}` {
		t.Errorf("the callback was given the challenge %q", got)
	}
	if c := setCookie(res, "authjs.session-token"); c == nil || !c.HttpOnly {
		t.Fatalf("no session cookie after the passkey sign-in: %v", res.Header["Set-Cookie"])
	}
	if snap := e.store.Snapshot(); len(snap.Sessions) != 1 || snap.Sessions[0].UserID != "u-pk" {
		t.Errorf("sessions %v, want one for u-pk", snap.Sessions)
	}
	// Signed in now: Options receives the user.
	e.get("/auth/webauthn-options/passkey")
	pk.mu.Lock()
	first, last := pk.users[0], pk.users[len(pk.users)-1]
	pk.mu.Unlock()
	if first != nil || last == nil || last.ID != "u-pk" || last.Email != "pk@example.com" {
		t.Errorf("Options users: first %v, last %v; want nil, then u-pk", first, last)
	}
	if res := e.get("/auth/callback/passkey"); res.StatusCode != 405 {
		t.Errorf("GET passkey callback: %d", res.StatusCode)
	}
}

// A challenge cookie the handler cannot open (tampered, sealed for another
// name, expired) is refused before the ceremony runs, and cleared; on
// https it is __Secure-authjs.challenge, Secure.
func TestPasskeyChallengeCookie(t *testing.T) {
	for _, tls := range []bool{false, true} {
		pk := &contractPasskeys{}
		e := newEnv(t, envOpts{
			tls:       tls,
			providers: func(*testing.T, string) []provider.Provider { return []provider.Provider{provider.Passkey()} },
			config:    func(c *handler.Config) { pk.a = c.Auth; c.Passkeys = pk },
		})
		name, other := "authjs.challenge", "__Secure-authjs.challenge"
		if tls {
			name, other = other, name
		}
		callback := func(c *http.Cookie) response {
			t.Helper()
			form := url.Values{"csrfToken": {e.csrf()}, "action": {"authenticate"}, "data": {`{"id":"cred-1"}`}}
			req, _ := http.NewRequest("POST", e.abs("/auth/callback/passkey"), strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if c != nil {
				req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
			}
			return e.do(nil, req)
		}
		res := e.get("/auth/webauthn-options/passkey")
		c := setCookie(res, name)
		if c == nil || c.Secure != tls || !c.HttpOnly || c.MaxAge != 300 {
			t.Fatalf("tls %v: challenge cookie %+v in %v", tls, c, res.Header["Set-Cookie"])
		}
		tampered := *c
		// Two characters other than the ones there (a fixed "AA" was
		// the cookie's own ending once in a while, and then nothing was
		// tampered with).
		tail := "AA"
		if strings.HasSuffix(c.Value, "A") || c.Value[len(c.Value)-2] == 'A' {
			tail = "BB"
		}
		tampered.Value = c.Value[:len(c.Value)-2] + tail
		renamed := *c
		renamed.Name = other
		// In this order: each case counts the callbacks the ceremony got
		// since the one before it.
		for _, bad := range []struct {
			what   string
			cookie *http.Cookie
		}{{"tampered", &tampered}, {"renamed", &renamed}} {
			calls := len(pk.challenges)
			res := callback(bad.cookie)
			wantLocation(t, e, res, "/auth/signin", "error", "WebAuthnVerificationError")
			if bad.what == "tampered" {
				if got := len(pk.challenges); got != calls {
					t.Errorf("tls %v: the ceremony ran with a tampered cookie", tls)
				}
				if cleared := setCookie(res, name); cleared == nil || cleared.MaxAge >= 0 {
					t.Errorf("tls %v: the tampered cookie is not cleared: %v", tls, res.Header["Set-Cookie"])
				}
			} else if len(pk.challenges) > calls && pk.lastChallenge() != "" {
				t.Errorf("tls %v: a cookie of another name gave the challenge %q", tls, pk.lastChallenge())
			}
		}
		// Past its lifetime (and the JWT clock tolerance).
		e.clock.Add(5*time.Minute + 16*time.Second)
		calls := len(pk.challenges)
		res = callback(c)
		wantLocation(t, e, res, "/auth/signin", "error", "WebAuthnVerificationError")
		if len(pk.challenges) != calls {
			t.Errorf("tls %v: the ceremony ran with an expired cookie", tls)
		}
	}
}

func TestPasskeysRequired(t *testing.T) {
	a, err := auth.New(auth.Config{Adapter: memoryStore(), Providers: []provider.Provider{provider.Passkey()}, Secrets: []string{secret}, BaseURL: "http://localhost/auth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handler.New(handler.Config{Auth: a}); !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), "Passkeys") {
		t.Errorf("WebAuthn provider without Passkeys: %v", err)
	}
}
