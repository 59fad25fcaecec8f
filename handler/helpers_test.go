package handler_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/mail"
	"github.com/authport/authport/mail/mailtest"
)

const secret = "handler-test-secret-0123456789ab"

type envOpts struct {
	strategy  auth.Strategy
	tls       bool
	maxAge    time.Duration
	updateAge *time.Duration
	// providers builds the providers once the base URL is known.
	providers func(t *testing.T, base string) []provider.Provider
	config    func(*handler.Config)
	// authConfig changes the auth.Config before auth.New.
	authConfig func(*auth.Config)
	// adapter, when set, opens the store instead of the memory adapter
	// (env.store is then unused), with the env's clock.
	adapter func(t *testing.T, now func() time.Time) any
	// routes, when set, adds the application's own routes beside the
	// handler's.
	routes func(app *http.ServeMux, h *handler.Handler)
}

// env is a handler mounted at /auth on a real HTTP server, with a browser-
// like client (cookie jar, no automatic redirects).
type env struct {
	t      *testing.T
	srv    *httptest.Server
	h      *handler.Handler
	a      *auth.Auth
	store  *memory.Adapter
	client *http.Client
	base   string
	clock  *coretest.Clock // shared by the Auth, the adapter and the handler
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	e := &env{t: t, clock: coretest.NewClock(time.Now().UTC().Truncate(time.Second))}
	mux := http.NewServeMux()
	var h http.Handler = http.NotFoundHandler()
	var mu sync.RWMutex
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		hh := h
		mu.RUnlock()
		hh.ServeHTTP(w, r)
	}))
	if o.tls {
		e.srv = httptest.NewTLSServer(mux)
	} else {
		e.srv = httptest.NewServer(mux)
	}
	t.Cleanup(e.srv.Close)
	e.base = e.srv.URL + "/auth"
	if o.providers == nil {
		o.providers = func(*testing.T, string) []provider.Provider { return []provider.Provider{credentials()} }
	}
	e.store = memory.New(memory.WithClock(e.clock.Now))
	var store any = e.store
	if o.adapter != nil {
		store = o.adapter(t, e.clock.Now)
	}
	ac := auth.Config{
		Adapter: store, Providers: o.providers(t, e.base), Secrets: []string{secret}, BaseURL: e.base, Now: e.clock.Now,
		Session: auth.SessionOptions{Strategy: o.strategy, MaxAge: o.maxAge, UpdateAge: o.updateAge},
	}
	if o.authConfig != nil {
		o.authConfig(&ac)
	}
	a, err := auth.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	e.a = a
	cfg := handler.Config{Auth: a}
	if o.config != nil {
		o.config(&cfg)
	}
	e.h, err = handler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app := http.NewServeMux()
	app.Handle("/auth/", e.h)
	app.Handle("/api/me", e.h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := handler.FromContext(r.Context())
		_ = json.NewEncoder(w).Encode(map[string]any{"id": s.User.ID, "email": s.User.Email})
	})))
	app.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "home") }))
	if o.routes != nil {
		o.routes(app, e.h)
	}
	mu.Lock()
	h = app
	mu.Unlock()
	e.client = e.newClient()
	return e
}

// newClient returns a fresh browser: its own cookie jar.
func (e *env) newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	c := e.srv.Client()
	return &http.Client{Transport: c.Transport, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type response struct {
	*http.Response
	body string
}

func (e *env) do(c *http.Client, req *http.Request) response {
	e.t.Helper()
	if c == nil {
		c = e.client
	}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res, string(b)}
}

func (e *env) get(path string, header ...string) response {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.abs(path), nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.do(nil, req)
}

func (e *env) post(path string, form url.Values, header ...string) response {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.abs(path), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.do(nil, req)
}

func (e *env) abs(path string) string {
	if strings.HasPrefix(path, "http") {
		return path
	}
	return e.srv.URL + path
}

// csrf fetches a CSRF token (and its cookie) for the client.
func (e *env) csrf() string {
	e.t.Helper()
	res := e.get("/auth/csrf")
	var body struct{ CSRFToken string }
	if err := json.Unmarshal([]byte(res.body), &body); err != nil || body.CSRFToken == "" {
		e.t.Fatalf("GET /csrf: %d %s", res.StatusCode, res.body)
	}
	return body.CSRFToken
}

// session returns GET /session's body decoded (nil for null).
func (e *env) session() map[string]any {
	e.t.Helper()
	res := e.get("/auth/session")
	if res.StatusCode != 200 {
		e.t.Fatalf("GET /session: %d %s", res.StatusCode, res.body)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(res.body), &s); err != nil {
		e.t.Fatalf("GET /session: %v in %s", err, res.body)
	}
	return s
}

func setCookie(res response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (e *env) signInCredentials(username, password string, extra url.Values) response {
	e.t.Helper()
	form := url.Values{"csrfToken": {e.csrf()}, "username": {username}, "password": {password}}
	for k, v := range extra {
		form[k] = v
	}
	return e.post("/auth/callback/credentials", form)
}

func ptr[T any](v T) *T { return &v }

// credentials is a credentials provider accepting ada/lovelace.
func credentials() *provider.CredentialsConfig {
	c := provider.Credentials(func(_ context.Context, req provider.AuthorizeRequest) (*provider.User, error) {
		if req.Credentials["username"] == "boom" {
			return nil, errors.New("user store unreachable")
		}
		if req.Credentials["username"] == "ada" && req.Credentials["password"] == "lovelace" {
			return &provider.User{ID: "user-ada", Email: "ada@example.com", Name: ptr("Ada Lovelace")}, nil
		}
		return nil, nil
	})
	c.Fields = []provider.CredentialField{{Name: "username", Label: "Username", Type: "text"}, {Name: "password", Label: "Password", Type: "password"}}
	return c
}

// smtpServer is the mailtest SMTP server with what the handler tests ask
// of it: the e-mail provider that sends through it, and the link of the
// last message.
type smtpServer struct{ *mailtest.Server }

func startSMTP(t *testing.T) *smtpServer {
	t.Helper()
	return &smtpServer{mailtest.Start(t, mailtest.Options{})}
}

// emailProvider sends through the SMTP server with the mail module.
func (s *smtpServer) emailProvider(t *testing.T) *provider.EmailConfig {
	t.Helper()
	p, err := mail.SMTP(mail.Config{Host: s.Host, Port: s.Port, TLS: mail.TLSNone, From: "Auth <auth@example.com>", HELO: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var linkRE = regexp.MustCompile(`^https?://[^\s"<>]+/callback/email\?[^\s"<>]+$`)

// link returns the sign-in link of the last message, read from its
// text/plain part.
func (s *smtpServer) link(t *testing.T) string {
	t.Helper()
	msgs := s.Messages()
	if len(msgs) == 0 {
		t.Fatal("no e-mail received")
	}
	l, err := mailtest.Link(msgs[len(msgs)-1].Data)
	if err != nil {
		t.Fatal(err)
	}
	if !linkRE.MatchString(l) {
		t.Fatalf("the e-mail's link %q is not an e-mail callback", l)
	}
	return l
}

func memoryStore() *memory.Adapter { return memory.New() }

func noProviders(*testing.T, string) []provider.Provider { return nil }

// unescape decodes a percent-encoded cookie value.
func unescape(s string) string {
	v, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return v
}

// newClientSession is GET /session's body for a new browser.
func (e *env) newClientSession() string {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.base+"/session", nil)
	return e.do(e.newClient(), req).body
}
