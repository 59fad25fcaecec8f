package handler_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

func wantHeader(t *testing.T, res response, key, want string) {
	t.Helper()
	if got := res.Header.Get(key); got != want {
		t.Errorf("%s %s: %s = %q, want %q", res.Request.Method, res.Request.URL.Path, key, got, want)
	}
}

func wantStatus(t *testing.T, res response, want int) {
	t.Helper()
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", res.Request.Method, res.Request.URL, res.StatusCode, want, res.body)
	}
}

// wantLocation checks the redirect's target: its path (on the test
// server) and the query parameters given.
func wantLocation(t *testing.T, e *env, res response, path string, query ...string) *url.URL {
	t.Helper()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.String() == "" {
		t.Fatalf("%s %s: no Location (status %d)", res.Request.Method, res.Request.URL.Path, res.StatusCode)
	}
	if loc.Scheme+"://"+loc.Host != e.srv.URL || loc.Path != path {
		t.Errorf("%s %s: Location %s, want %s%s", res.Request.Method, res.Request.URL.Path, loc, e.srv.URL, path)
	}
	for i := 0; i+1 < len(query); i += 2 {
		if got := loc.Query().Get(query[i]); got != query[i+1] {
			t.Errorf("Location %s: %s=%q, want %q", loc, query[i], got, query[i+1])
		}
	}
	return loc
}

func TestProviders(t *testing.T) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t), credentials()}
	}})
	res := e.get("/auth/providers")
	wantStatus(t, res, 200)
	wantHeader(t, res, "Content-Type", "application/json")
	if strings.Index(res.body, `"email"`) > strings.Index(res.body, `"credentials"`) {
		t.Errorf("providers not in configuration order: %s", res.body)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal([]byte(res.body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"email": {"id": "email", "name": "Email", "type": "email", "signinUrl": e.base + "/signin/email", "callbackUrl": e.base + "/callback/email"},
		"credentials": {"id": "credentials", "name": "Credentials", "type": "credentials",
			"signinUrl": e.base + "/signin/credentials", "callbackUrl": e.base + "/callback/credentials"},
	}
	for id, w := range want {
		for k, v := range w {
			if got[id][k] != v {
				t.Errorf("providers[%s][%s] = %q, want %q", id, k, got[id][k], v)
			}
		}
		if len(got[id]) != len(w) {
			t.Errorf("providers[%s] = %v, want exactly the keys of %v", id, got[id], w)
		}
	}
}

func TestCSRFCookie(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tls], func(t *testing.T) {
			e := newEnv(t, envOpts{strategy: auth.StrategyJWT, tls: tls})
			res := e.get("/auth/csrf")
			wantStatus(t, res, 200)
			wantHeader(t, res, "Content-Type", "application/json")
			wantHeader(t, res, "Cache-Control", "private, no-cache, no-store")
			var body map[string]string
			if err := json.Unmarshal([]byte(res.body), &body); err != nil || len(body) != 1 || len(body["csrfToken"]) != 64 {
				t.Fatalf("body %s, want {\"csrfToken\": 64 hex digits}", res.body)
			}
			name := map[bool]string{false: "authjs.csrf-token", true: "__Host-authjs.csrf-token"}[tls]
			c := setCookie(res, name)
			if c == nil {
				t.Fatalf("no %s cookie in %v", name, res.Header["Set-Cookie"])
			}
			sum := sha256.Sum256([]byte(body["csrfToken"] + secret))
			if want := body["csrfToken"] + "|" + hex.EncodeToString(sum[:]); c.Value != want {
				t.Errorf("cookie %q, want token|sha256(token+secret) %q", c.Value, want)
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != tls || c.MaxAge != 0 || c.Domain != "" {
				t.Errorf("cookie attributes %+v: want HttpOnly, SameSite=Lax, Path=/, Secure=%v, session cookie, no Domain", c, tls)
			}
			// The same browser keeps its token; no new cookie.
			again := e.get("/auth/csrf")
			if !strings.Contains(again.body, body["csrfToken"]) || setCookie(again, name) != nil {
				t.Errorf("second GET /csrf: %s, Set-Cookie %v: want the same token and no new cookie", again.body, again.Header["Set-Cookie"])
			}
		})
	}
}

func TestCSRFRotatedSecret(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, authConfig: func(c *auth.Config) {
		c.Secrets = []string{"new-secret-0123456789abcdef0123456789", secret}
	}})
	// A cookie made with the older secret (as before the rotation) is
	// still valid.
	token := strings.Repeat("ab", 32)
	sum := sha256.Sum256([]byte(token + secret))
	u, _ := url.Parse(e.srv.URL)
	e.client.Jar.SetCookies(u, []*http.Cookie{{Name: "authjs.csrf-token", Value: token + "|" + hex.EncodeToString(sum[:]), Path: "/"}})
	res := e.get("/auth/csrf")
	if !strings.Contains(res.body, token) {
		t.Errorf("GET /csrf with a cookie of the older secret: %s, want its token %s", res.body, token)
	}
	// A forged cookie (hash of another secret) is replaced.
	forged := sha256.Sum256([]byte(token + "guess"))
	e.client.Jar.SetCookies(u, []*http.Cookie{{Name: "authjs.csrf-token", Value: token + "|" + hex.EncodeToString(forged[:]), Path: "/"}})
	res = e.get("/auth/csrf")
	if strings.Contains(res.body, token) || setCookie(res, "authjs.csrf-token") == nil {
		t.Errorf("GET /csrf with a forged cookie: %s: want a new token and cookie", res.body)
	}
}

// Every POST needs the CSRF token of its cookie.
func TestCSRFRequiredOnEveryPost(t *testing.T) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t), credentials()}
	}})
	posts := map[string]url.Values{
		"/auth/signin/email":         {"email": {"ada@example.com"}},
		"/auth/callback/credentials": {"username": {"ada"}, "password": {"lovelace"}},
		"/auth/signout":              {},
		"/auth/session":              {},
	}
	token := e.csrf()
	for path, form := range posts {
		for name, tok := range map[string]string{"none": "", "wrong": strings.Repeat("0", 64), "other browser's": ""} {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			c := e.client
			if name == "other browser's" {
				// A valid token, but from a browser whose cookie the
				// request does not carry.
				c = e.newClient()
				tok = token
			}
			if tok != "" {
				f.Set("csrfToken", tok)
			}
			req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(f.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res := e.do(c, req)
			if res.StatusCode != http.StatusSeeOther && path != "/auth/session" {
				t.Errorf("POST %s with %s token: %d, want 303 to the sign-in page", path, name, res.StatusCode)
				continue
			}
			if path == "/auth/session" {
				if res.StatusCode != http.StatusBadRequest || res.body != "null" {
					t.Errorf("POST /session with %s token: %d %s, want 400 null", name, res.StatusCode, res.body)
				}
				continue
			}
			wantLocation(t, e, res, "/auth/signin", "error", "MissingCSRF")
			if setCookie(res, "authjs.session-token") != nil {
				t.Errorf("POST %s with %s token set a session cookie", path, name)
			}
		}
		// A script asking for JSON gets 403 JSON.
		if path == "/auth/session" {
			continue
		}
		res := e.post(path, form, "Accept", "application/json")
		if res.StatusCode != http.StatusForbidden || !strings.Contains(res.body, `"error":"MissingCSRF"`) {
			t.Errorf("POST %s (JSON) without token: %d %s, want 403 {\"error\":\"MissingCSRF\"}", path, res.StatusCode, res.body)
		}
		wantHeader(t, res, "Content-Type", "application/json")
	}
	if n := len(smtp.Messages()); n != 0 {
		t.Errorf("%d e-mails sent by refused posts", n)
	}
	// The sign-in page says so; so does the error page, with 403.
	res := e.get("/auth/signin?error=MissingCSRF")
	wantStatus(t, res, 200)
	if !strings.Contains(res.body, "CSRF token is missing or wrong") {
		t.Errorf("sign-in page for MissingCSRF: %s", res.body)
	}
	res = e.get("/auth/error?error=MissingCSRF")
	wantStatus(t, res, 403)
	if !strings.Contains(res.body, "CSRF") {
		t.Errorf("error page for MissingCSRF: %s", res.body)
	}
}

func TestCredentialsJWT(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tls], func(t *testing.T) {
			e := newEnv(t, envOpts{strategy: auth.StrategyJWT, tls: tls, maxAge: 2 * time.Hour, updateAge: ptr(time.Hour)})
			name := map[bool]string{false: jwt.SessionTokenCookie, true: jwt.SecureSessionTokenCookie}[tls]
			res := e.signInCredentials("ada", "lovelace", url.Values{"callbackUrl": {"/dashboard?tab=1"}})
			wantStatus(t, res, http.StatusSeeOther)
			wantLocation(t, e, res, "/dashboard", "tab", "1")
			c := setCookie(res, name)
			if c == nil {
				t.Fatalf("no %s cookie: %v", name, res.Header["Set-Cookie"])
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != tls || c.MaxAge != 7200 {
				t.Errorf("session cookie %+v: want HttpOnly, Lax, Path=/, Secure=%v, Max-Age 7200", c, tls)
			}
			codec, _ := jwt.NewCodec(secret)
			claims, err := codec.WithClock(e.clock.Now).Decode(name, c.Value)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]any{"sub": "user-ada", "email": "ada@example.com", "name": "Ada Lovelace",
				"iat": float64(e.clock.Now().Unix()), "exp": float64(e.clock.Now().Add(2 * time.Hour).Unix())} {
				if claims[k] != v {
					t.Errorf("claim %s = %v, want %v", k, claims[k], v)
				}
			}
			if _, ok := claims["jti"].(string); !ok {
				t.Errorf("no jti in %v", claims)
			}
			if _, ok := claims["picture"]; ok {
				t.Errorf("picture claim for a user without image: %v", claims)
			}
			if snap := e.store.Snapshot(); len(snap.Sessions) != 0 || len(snap.Users) != 0 {
				t.Errorf("store has %d sessions, %d users; JWT credentials sign-in stores none", len(snap.Sessions), len(snap.Users))
			}

			// /session: the JSON shape, no refresh before updateAge.
			res = e.get("/auth/session")
			wantStatus(t, res, 200)
			wantHeader(t, res, "Content-Type", "application/json")
			wantHeader(t, res, "Cache-Control", "private, no-cache, no-store")
			exp := e.clock.Now().Add(2 * time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
			if want := `{"user":{"name":"Ada Lovelace","email":"ada@example.com"},"expires":"` + exp + `"}`; res.body != want {
				t.Errorf("GET /session = %s, want %s", res.body, want)
			}
			if setCookie(res, name) != nil {
				t.Error("the JWT was re-issued before updateAge")
			}
			// After updateAge: a new token, later exp.
			e.clock.Add(time.Hour + time.Second)
			res = e.get("/auth/session")
			fresh := setCookie(res, name)
			if fresh == nil {
				t.Fatalf("no new JWT after updateAge: %v", res.Header["Set-Cookie"])
			}
			claims2, err := codec.WithClock(e.clock.Now).Decode(name, fresh.Value)
			if err != nil {
				t.Fatal(err)
			}
			if claims2["exp"] != float64(e.clock.Now().Add(2*time.Hour).Unix()) || claims2["sub"] != "user-ada" || claims2["jti"] == claims["jti"] {
				t.Errorf("refreshed claims %v", claims2)
			}
			if !strings.Contains(res.body, e.clock.Now().Add(2*time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")) {
				t.Errorf("refreshed /session %s does not give the new expiry", res.body)
			}
			// Past exp: signed out, cookie cleared.
			e.clock.Add(3 * time.Hour)
			res = e.get("/auth/session")
			if res.body != "null" {
				t.Errorf("expired JWT: /session %s, want null", res.body)
			}
			if c := setCookie(res, name); c == nil || c.MaxAge >= 0 {
				t.Errorf("expired JWT: cookie not cleared: %v", res.Header["Set-Cookie"])
			}
		})
	}
}

func TestCredentialsRefused(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	res := e.signInCredentials("ada", "wrong", nil)
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/signin", "error", "CredentialsSignin", "code", "credentials")
	if setCookie(res, "authjs.session-token") != nil {
		t.Error("refused credentials got a session cookie")
	}
	page := e.get(res.Header.Get("Location"))
	wantStatus(t, page, 200)
	if !strings.Contains(page.body, "Sign in failed. Check the details you provided are correct.") {
		t.Errorf("sign-in page after CredentialsSignin lacks the message:\n%s", page.body)
	}
	// Authorize failing to decide is a server error, not a refusal.
	res = e.signInCredentials("boom", "x", nil)
	wantLocation(t, e, res, "/auth/error", "error", "Configuration")
	// Auth.js's client (X-Auth-Return-Redirect) gets the URL as JSON.
	form := url.Values{"csrfToken": {e.csrf()}, "username": {"ada"}, "password": {"lovelace"}}
	res = e.post("/auth/callback/credentials", form, "X-Auth-Return-Redirect", "1")
	wantStatus(t, res, 200)
	if !strings.Contains(res.body, `"url":"`+e.srv.URL+`/"`) {
		t.Errorf("X-Auth-Return-Redirect: %s, want {\"url\": the callback URL}", res.body)
	}
	if got := len(e.session()); got == 0 {
		t.Error("signed out after a JSON sign-in")
	}
	// GET on the credentials callback is not allowed.
	res = e.get("/auth/callback/credentials")
	wantStatus(t, res, http.StatusMethodNotAllowed)
	wantHeader(t, res, "Allow", "POST")
}

func TestCredentialsNeedJWT(t *testing.T) {
	a, err := auth.New(auth.Config{Adapter: memoryStore(), Providers: []provider.Provider{credentials()}, Secrets: []string{secret}, BaseURL: "http://localhost/auth"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = handler.New(handler.Config{Auth: a})
	if err == nil || !strings.Contains(err.Error(), "JWT sessions") {
		t.Errorf("credentials with database sessions: %v, want an error asking for JWT sessions", err)
	}
}

func TestRoutesNotFoundAndMethods(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	for path, want := range map[string]int{
		"/auth/nope": 404, "/auth/signin/x/y": 404, "/auth/callback": 404, "/auth/providers/x": 404, "/auth/passkey.js": 404,
		"/auth/webauthn-options/credentials": 404,
	} {
		res := e.get(path)
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	for path, allow := range map[string]string{"/auth/providers": "GET", "/auth/csrf": "GET", "/auth/error": "GET", "/auth/verify-request": "GET"} {
		res := e.post(path, url.Values{})
		wantStatus(t, res, 405)
		wantHeader(t, res, "Allow", allow)
	}
	res := e.post("/auth/signin", url.Values{})
	wantStatus(t, res, 405)
}

func TestErrorPage(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	for code, want := range map[string]struct {
		status int
		text   string
	}{
		"Configuration": {500, "problem with the server configuration"},
		"AccessDenied":  {403, "You do not have permission to sign in."},
		"Verification":  {403, "The sign in link is no longer valid"},
		"Unknown<b>":    {200, "Unable to sign in."},
		"":              {200, "Unable to sign in."},
	} {
		res := e.get("/auth/error?error=" + url.QueryEscape(code))
		wantStatus(t, res, want.status)
		wantHeader(t, res, "Content-Type", "text/html; charset=utf-8")
		if !strings.Contains(res.body, want.text) || strings.Contains(res.body, "<b>") {
			t.Errorf("error page %q: want %q, escaped input:\n%s", code, want.text, res.body)
		}
	}
}

func TestCustomPages(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, config: func(c *handler.Config) {
		c.Pages = handler.Pages{SignIn: "/login", Error: "/oops", SignOut: "/bye", VerifyRequest: "/check"}
	}})
	for path, want := range map[string]string{
		"/auth/signin?callbackUrl=%2Fx": "/login?callbackUrl=%2Fx", "/auth/error?error=Verification": "/oops?error=Verification",
		"/auth/signout": "/bye", "/auth/verify-request?provider=email": "/check?provider=email",
	} {
		res := e.get(path)
		wantStatus(t, res, 302)
		wantHeader(t, res, "Location", want)
	}
	res := e.signInCredentials("ada", "wrong", nil)
	wantHeader(t, res, "Location", "/login?error=CredentialsSignin&code=credentials")
}

// The JWT callback adds claims to a new JWT; they survive a refresh.
func TestJWTCallbackClaimsSurviveRefresh(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, updateAge: ptr(time.Duration(0)), authConfig: func(c *auth.Config) {
		c.Callbacks.JWT = func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
			if p.User != nil {
				p.Token["role"] = "admin:" + p.User.ID
			}
			return p.Token, nil
		}
	}})
	e.signInCredentials("ada", "lovelace", nil)
	res := e.get("/auth/session")
	c := setCookie(res, "authjs.session-token") // updateAge 0: re-issued on every call, as Auth.js
	if c == nil {
		t.Fatal("JWT not re-issued with updateAge 0")
	}
	s, err := e.h.Session(requestWith(c))
	if err != nil || s == nil || s.Claims["role"] != "admin:user-ada" {
		t.Errorf("claims after refresh: %+v, %v", s, err)
	}
}

// HEAD is answered like GET on the read-only routes, but refused on the
// callbacks, where a GET uses up the OAuth check cookies or the e-mail link.
func TestHeadRefusedOnCallbacks(t *testing.T) {
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		p := &provider.OIDCConfig[map[string]any]{}
		p.ID, p.Name, p.Issuer = "idp", "IdP", "http://127.0.0.1:1"
		p.ClientID, p.ClientSecret = "client", "secret"
		return []provider.Provider{p}
	}})
	req, _ := http.NewRequest(http.MethodHead, e.srv.URL+"/auth/callback/idp?code=c&state=s", nil)
	res := e.do(e.client, req)
	wantStatus(t, res, http.StatusMethodNotAllowed)
	wantHeader(t, res, "Allow", "GET, POST")
	req, _ = http.NewRequest(http.MethodHead, e.srv.URL+"/auth/providers", nil)
	wantStatus(t, e.do(e.client, req), http.StatusOK)
}
