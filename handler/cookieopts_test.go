package handler_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// newCookieHandler builds a handler at base with the cookie options, JWT
// or database sessions, credentials (JWT only) and e-mail providers.
func newCookieHandler(t *testing.T, base string, strategy auth.Strategy, opts handler.CookieOptions, providers ...provider.Provider) (*handler.Handler, *auth.Auth, error) {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: memoryStore(), Providers: providers, Secrets: []string{secret}, BaseURL: base,
		Session: auth.SessionOptions{Strategy: strategy}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, Cookies: opts})
	return h, a, err
}

// Cookie options are checked when the handler is built; each error says
// what to change.
func TestCookieOptionsValidated(t *testing.T) {
	for _, c := range []struct {
		base string
		opts handler.CookieOptions
		want string // "" when accepted
	}{
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: "example.test"}, ""},
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: ".Example.TEST"}, ""},
		{"https://example.test/auth", handler.CookieOptions{Domain: "example.test"}, ""},
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: "other.test"}, "nor a parent"},
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: "xample.test"}, "nor a parent"},
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: "app.auth.example.test"}, "nor a parent"},
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: "test"}, "public suffix"},
		{"https://me.github.io/auth", handler.CookieOptions{Domain: "github.io"}, "public suffix"},
		{"https://auth.example.co.uk/auth", handler.CookieOptions{Domain: "co.uk"}, "public suffix"},
		{"https://127.0.0.1/auth", handler.CookieOptions{Domain: "0.0.1"}, "IP address"},
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: "example.test:443"}, "not a domain name"},
		{"https://auth.example.test/auth", handler.CookieOptions{Domain: "example.test."}, "not a domain name"},
		{"https://auth.example.test/auth", handler.CookieOptions{SameSite: http.SameSiteNoneMode}, ""},
		{"http://auth.example.test/auth", handler.CookieOptions{SameSite: http.SameSiteNoneMode}, "without Secure"},
		{"https://auth.example.test/auth", handler.CookieOptions{SameSite: http.SameSiteNoneMode, Secure: handler.SecureOff}, "without Secure"},
		{"http://localhost:3000/auth", handler.CookieOptions{SameSite: http.SameSiteNoneMode, Secure: handler.SecureOn}, ""},
		{"https://auth.example.test/auth", handler.CookieOptions{SameSite: http.SameSiteStrictMode}, ""},
		{"https://auth.example.test/auth", handler.CookieOptions{SameSite: http.SameSiteDefaultMode}, "SameSiteDefaultMode"},
		{"https://auth.example.test/auth", handler.CookieOptions{SameSite: 9}, "SameSite must be"},
		{"http://auth.example.test/auth", handler.CookieOptions{Secure: handler.SecureOn}, "not localhost"},
		{"http://127.0.0.1:8080/auth", handler.CookieOptions{Secure: handler.SecureOn}, ""},
		{"http://app.localhost/auth", handler.CookieOptions{Secure: handler.SecureOn}, ""},
		{"https://auth.example.test/auth", handler.CookieOptions{Secure: 7}, "SecureAuto"},
	} {
		_, _, err := newCookieHandler(t, c.base, auth.StrategyJWT, c.opts)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %+v: %v", c.base, c.opts, err)
		case c.want != "" && (err == nil || !errors.Is(err, handler.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %+v: error %v, want one matching ErrInvalidConfig and saying %q", c.base, c.opts, err, c.want)
		}
	}
	// SecureOff with an https BaseURL and an OAuth provider: the oauth
	// module's check cookies stay Secure, so it is refused.
	_, _, err := newCookieHandler(t, "https://auth.example.test/auth", auth.StrategyJWT, handler.CookieOptions{Secure: handler.SecureOff}, provider.GitHub("id", "secret"))
	if err == nil || !strings.Contains(err.Error(), "OAuth check cookies") {
		t.Errorf("SecureOff with an OAuth provider: %v", err)
	}
}

// setCookies serves one request through h and returns its Set-Cookie
// headers by cookie name (the first one of a name; "name+" for a
// second).
func setCookies(t *testing.T, h http.Handler, r *http.Request) map[string]string {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code >= 500 {
		t.Fatalf("%s %s: %d %s", r.Method, r.URL, w.Code, w.Body)
	}
	out := map[string]string{}
	for _, line := range w.Result().Header.Values("Set-Cookie") {
		name, _, _ := strings.Cut(line, "=")
		if _, dup := out[name]; dup {
			name += "+"
		}
		out[name] = line
	}
	return out
}

// signInHeaders signs in with the credentials provider through h at base
// and returns the Set-Cookie headers of GET /csrf, of the sign-in and of
// the sign-out, by cookie name.
func signInHeaders(t *testing.T, h http.Handler, base string, csrfName string) (csrf, signIn, signOut map[string]string) {
	t.Helper()
	csrf = setCookies(t, h, httptest.NewRequest("GET", base+"/csrf", nil))
	line := csrf[csrfName]
	value := strings.TrimPrefix(strings.SplitN(line, ";", 2)[0], csrfName+"=")
	token, _, _ := strings.Cut(value, "|")
	post := func(path string, form url.Values, cookies string) *http.Request {
		r := httptest.NewRequest("POST", base+path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Cookie", csrfName+"="+value+cookies)
		return r
	}
	signIn = setCookies(t, h, post("/callback/credentials", url.Values{"csrfToken": {token}, "username": {"ada"}, "password": {"lovelace"}, "callbackUrl": {"/app"}}, ""))
	var session string
	for name, l := range signIn {
		if strings.Contains(name, "session-token") {
			session = "; " + strings.SplitN(l, ";", 2)[0]
		}
	}
	signOut = setCookies(t, h, post("/signout", url.Values{"csrfToken": {token}}, session))
	return csrf, signIn, signOut
}

// The Set-Cookie headers: by default exactly Auth.js's attributes; with
// Domain the session and callback-url cookies carry it and the CSRF cookie
// does not; SameSite and Secure as configured.
func TestCookieOptionsSetCookie(t *testing.T) {
	type want struct{ csrf, callback, session, clear string }
	for _, c := range []struct {
		name string
		base string
		opts handler.CookieOptions
		want want // attributes after the value
	}{
		{"default https", "https://auth.example.test/auth", handler.CookieOptions{}, want{
			csrf:     "__Host-authjs.csrf-token=|Path=/; HttpOnly; Secure; SameSite=Lax",
			callback: "__Secure-authjs.callback-url=|Path=/; HttpOnly; Secure; SameSite=Lax",
			session:  "__Secure-authjs.session-token=|Path=/; Expires=|Max-Age=2592000; HttpOnly; Secure; SameSite=Lax",
			clear:    "__Secure-authjs.session-token=|Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; Secure; SameSite=Lax",
		}},
		{"default http", "http://localhost:3000/auth", handler.CookieOptions{}, want{
			csrf:     "authjs.csrf-token=|Path=/; HttpOnly; SameSite=Lax",
			callback: "authjs.callback-url=|Path=/; HttpOnly; SameSite=Lax",
			session:  "authjs.session-token=|Path=/; Expires=|Max-Age=2592000; HttpOnly; SameSite=Lax",
			clear:    "authjs.session-token=|Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax",
		}},
		{"domain strict", "https://auth.example.test/auth", handler.CookieOptions{Domain: ".example.test", SameSite: http.SameSiteStrictMode}, want{
			csrf:     "__Host-authjs.csrf-token=|Path=/; HttpOnly; Secure; SameSite=Strict",
			callback: "__Secure-authjs.callback-url=|Path=/; Domain=example.test; HttpOnly; Secure; SameSite=Strict",
			session:  "__Secure-authjs.session-token=|Path=/; Domain=example.test; Expires=|Max-Age=2592000; HttpOnly; Secure; SameSite=Strict",
			clear:    "__Secure-authjs.session-token=|Path=/; Domain=example.test; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; Secure; SameSite=Strict",
		}},
		{"none", "https://auth.example.test/auth", handler.CookieOptions{SameSite: http.SameSiteNoneMode}, want{
			csrf:    "__Host-authjs.csrf-token=|Path=/; HttpOnly; Secure; SameSite=None",
			session: "__Secure-authjs.session-token=|Path=/; Expires=|Max-Age=2592000; HttpOnly; Secure; SameSite=None",
		}},
		{"secure off", "https://auth.example.test/auth", handler.CookieOptions{Secure: handler.SecureOff}, want{
			csrf:    "authjs.csrf-token=|Path=/; HttpOnly; SameSite=Lax",
			session: "authjs.session-token=|Path=/; Expires=|Max-Age=2592000; HttpOnly; SameSite=Lax",
		}},
		{"secure on localhost", "http://localhost:3000/auth", handler.CookieOptions{Secure: handler.SecureOn}, want{
			csrf:    "__Host-authjs.csrf-token=|Path=/; HttpOnly; Secure; SameSite=Lax",
			session: "__Secure-authjs.session-token=|Path=/; Expires=|Max-Age=2592000; HttpOnly; Secure; SameSite=Lax",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _, err := newCookieHandler(t, c.base, auth.StrategyJWT, c.opts, credentials())
			if err != nil {
				t.Fatal(err)
			}
			csrfName, _, _ := strings.Cut(c.want.csrf, "=")
			csrf, signIn, signOut := signInHeaders(t, h, c.base, csrfName)
			check := func(what string, got map[string]string, want string) {
				t.Helper()
				if want == "" {
					return
				}
				name, _, _ := strings.Cut(want, "=")
				line := got[name]
				// want is name=|attributes, with | standing for the value (and
				// for Expires' date, which moves with the clock).
				parts := strings.Split(want, "|")
				rest := line
				for i, p := range parts {
					j := strings.Index(rest, p)
					if j < 0 || (i == 0 && j != 0) || (i == len(parts)-1 && !strings.HasSuffix(rest, p)) {
						t.Errorf("%s: Set-Cookie %q, want %q", what, line, want)
						return
					}
					rest = rest[j+len(p):]
				}
			}
			check("GET /csrf", csrf, c.want.csrf)
			check("sign-in", signIn, c.want.callback)
			check("sign-in", signIn, c.want.session)
			check("sign-out", signOut, c.want.clear)
			if c.opts.Domain != "" {
				// The host-only cookie of the name is deleted too.
				name, _, _ := strings.Cut(c.want.clear, "=")
				if l := signOut[name+"+"]; l == "" || strings.Contains(l, "Domain=") || !strings.Contains(l, "Max-Age=0") {
					t.Errorf("sign-out with a Domain: second Set-Cookie %q, want the host-only deletion", l)
				}
			}
			for name, line := range csrf {
				if strings.Contains(line, "Domain=") {
					t.Errorf("the CSRF cookie %s has a Domain: %q", name, line)
				}
			}
		})
	}
}

// subdomainClient is a browser (cookie jar) reaching the named hosts on
// the given listeners, as DNS would.
func subdomainClient(addrs map[string]string) *http.Client {
	jar, _ := cookiejar.New(nil)
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			if a, ok := addrs[host]; ok {
				addr = a
			}
			return dialer.DialContext(ctx, network, addr)
		}}}
}

// One session across subdomains: signed in on auth.example.test with
// Domain example.test, the browser sends the session cookie to
// app.example.test, whose handler (same secret, same store) reads it;
// without the Domain it does not. Database sessions (e-mail link) and JWT
// sessions (credentials).
func TestCookieDomainAcrossSubdomains(t *testing.T) {
	for _, strategy := range hookStrategies {
		for _, domain := range []string{".example.test", ""} {
			t.Run(string(strategy)+"/domain="+domain, func(t *testing.T) {
				smtp := startSMTP(t)
				store := memoryStore()
				serve := func(host string) (*httptest.Server, *handler.Handler) {
					srv := httptest.NewUnstartedServer(nil)
					providers := []provider.Provider{smtp.emailProvider(t)}
					if strategy == auth.StrategyJWT {
						providers = append(providers, credentials())
					}
					a, err := auth.New(auth.Config{Adapter: store, Providers: providers, Secrets: []string{secret},
						BaseURL: "http://" + host + "/auth", Session: auth.SessionOptions{Strategy: strategy}})
					if err != nil {
						t.Fatal(err)
					}
					h, err := handler.New(handler.Config{Auth: a, Cookies: handler.CookieOptions{Domain: domain}})
					if err != nil {
						t.Fatal(err)
					}
					mux := http.NewServeMux()
					mux.Handle("/auth/", h)
					mux.Handle("/api/me", h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						s, _ := handler.FromContext(r.Context())
						w.Write([]byte(s.User.ID))
					})))
					srv.Config.Handler = mux
					srv.Start()
					t.Cleanup(srv.Close)
					return srv, h
				}
				authSrv, _ := serve("auth.example.test")
				appSrv, _ := serve("app.example.test")
				c := subdomainClient(map[string]string{"auth.example.test": authSrv.Listener.Addr().String(), "app.example.test": appSrv.Listener.Addr().String()})
				get := func(u string) (*http.Response, string) {
					res, err := c.Get(u)
					if err != nil {
						t.Fatal(err)
					}
					defer res.Body.Close()
					b, _ := io.ReadAll(res.Body)
					return res, string(b)
				}
				res, body := get("http://auth.example.test/auth/csrf")
				token := strings.Split(strings.Split(body, `"csrfToken":"`)[1], `"`)[0]
				if strategy == auth.StrategyJWT {
					res = postForm(t, c, "http://auth.example.test/auth/callback/credentials", url.Values{"csrfToken": {token}, "username": {"ada"}, "password": {"lovelace"}})
				} else {
					res = postForm(t, c, "http://auth.example.test/auth/signin/email", url.Values{"csrfToken": {token}, "email": {"ada@example.test"}})
					if res.StatusCode != http.StatusSeeOther {
						t.Fatalf("POST /signin/email: %s", res.Status)
					}
					res, _ = get(smtp.link(t))
				}
				if res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusFound {
					t.Fatalf("sign-in on auth.example.test: %s", res.Status)
				}
				if _, body := get("http://auth.example.test/api/me"); body == "" {
					t.Fatal("not signed in on auth.example.test itself")
				}
				res, body = get("http://app.example.test/api/me")
				if domain != "" && (res.StatusCode != 200 || body == "") {
					t.Errorf("app.example.test with the session cookie for %s: %s %q", domain, res.Status, body)
				}
				if domain == "" && res.StatusCode != http.StatusUnauthorized {
					t.Errorf("app.example.test with a host-only cookie of auth.example.test: %s %q, want 401", res.Status, body)
				}
			})
		}
	}
}

func postForm(t *testing.T, c *http.Client, u string, form url.Values) *http.Response {
	t.Helper()
	res, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}
