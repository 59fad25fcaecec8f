package handler_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// contractPasskeys stands in for the passkey module to test the handler's
// side of the Passkeys contract (routes, CSRF, session issuing); the
// ceremonies themselves are the passkey module's, tested there and in the
// browser tests.
type contractPasskeys struct {
	a     *auth.Auth
	mu    sync.Mutex
	users []*core.User // the user argument of each call
}

func (p *contractPasskeys) Options(_ context.Context, w http.ResponseWriter, r *http.Request, id string, user *core.User) (any, error) {
	p.mu.Lock()
	p.users = append(p.users, user)
	p.mu.Unlock()
	switch r.URL.Query().Get("fail") {
	case "store":
		// What passkey.Options returns when the adapter fails.
		return nil, &auth.AdapterError{Method: core.MethodGetUserByEmail, Err: errors.New("connection refused")}
	case "input":
		return nil, errors.New("passkey: WebAuthn ceremony not allowed")
	}
	http.SetCookie(w, &http.Cookie{Name: "authjs.challenge", Value: "sealed", Path: "/", HttpOnly: true})
	return map[string]any{"action": "authenticate", "options": map[string]any{"challenge": "abc", "rpId": "localhost"}}, nil
}

func (p *contractPasskeys) Callback(ctx context.Context, _ http.ResponseWriter, r *http.Request, id string, user *core.User) (*auth.SignIn, error) {
	if r.PostFormValue("action") != "authenticate" || r.PostFormValue("data") != `{"id":"cred-1"}` {
		return nil, errors.New("passkey: assertion invalid")
	}
	return p.a.SignInWithWebAuthn(ctx, id, "cred-1", 0, user)
}

func (p *contractPasskeys) Script() []byte { return []byte("/* passkey script */") }

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
	if _, err := e.a.RegisterAuthenticator(ctx, "passkey", core.Authenticator{CredentialID: "cred-1", UserID: "u-pk",
		ProviderAccountID: "cred-1", CredentialPublicKey: "pk", CredentialDeviceType: "singleDevice", Transports: ptr("internal")}); err != nil {
		t.Fatal(err)
	}

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
	valid.Set("csrfToken", e.csrf())
	valid.Set("callbackUrl", "/home")
	res = e.post("/auth/callback/passkey", valid)
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/home")
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

func TestPasskeysRequired(t *testing.T) {
	a, err := auth.New(auth.Config{Adapter: memoryStore(), Providers: []provider.Provider{provider.Passkey()}, Secrets: []string{secret}, BaseURL: "http://localhost/auth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handler.New(handler.Config{Auth: a}); !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), "Passkeys") {
		t.Errorf("WebAuthn provider without Passkeys: %v", err)
	}
}
