package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/passkey/passkeytest"
)

// Two passkey attacks over real HTTP against the handler with the passkey
// module, passkeytest's software authenticator standing in for the
// browser's: taking over an address before its owner signs up (registering
// a passkey for an address no user has yet), and passkey options that tell
// which addresses have accounts.

// identitySecret is 32 bytes or more, as secrets must be.
const identitySecret = "identity-demo-secret-0123456789abcdef"

// idEnv is the handler and the passkey ceremonies on a loopback server
// browsed at http://localhost:PORT, e-mail links kept in memory.
type idEnv struct {
	t      *testing.T
	origin string
	store  *memory.Adapter
	mu     sync.Mutex
	links  map[string]string // address -> last link
}

// newIDEnv serves the handler over store; configure changes the
// auth.Config before auth.New.
func newIDEnv(t *testing.T, store *memory.Adapter, configure func(*auth.Config)) *idEnv {
	t.Helper()
	l := listen(t)
	e := &idEnv{t: t, origin: l.origin, store: store, links: map[string]string{}}
	base := l.origin + "/auth"
	email := provider.Email("Auth <auth@example.com>", func(_ context.Context, req provider.VerificationRequest) error {
		e.mu.Lock()
		e.links[req.Identifier] = req.URL
		e.mu.Unlock()
		return nil
	})
	cfg := auth.Config{Adapter: store, Providers: []provider.Provider{email, provider.Passkey()}, Secrets: []string{identitySecret}, BaseURL: base}
	if configure != nil {
		configure(&cfg)
	}
	a, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, Passkeys: pk})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "home") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l.ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return e
}

// browser is one HTTP client with its own cookies.
type browser struct {
	e *idEnv
	c *http.Client
}

func (e *idEnv) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.e.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res, string(body)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.e.origin+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.e.t.Helper()
	_, body := b.get("/auth/csrf")
	var csrf struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.Unmarshal([]byte(body), &csrf); err != nil || csrf.CSRFToken == "" {
		b.e.t.Fatalf("GET /auth/csrf: %s", body)
	}
	form.Set("csrfToken", csrf.CSRFToken)
	req, _ := http.NewRequest(http.MethodPost, b.e.origin+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// sessionEmail is the address of the browser's session, or "".
func (b *browser) sessionEmail() string {
	b.e.t.Helper()
	_, body := b.get("/auth/session")
	var s struct {
		User struct {
			Email string `json:"email"`
		} `json:"user"`
	}
	_ = json.Unmarshal([]byte(body), &s)
	return s.User.Email
}

// signInByEmail follows the e-mail link sent to address.
func (b *browser) signInByEmail(address string) {
	b.e.t.Helper()
	res, _ := b.post("/auth/signin/email", url.Values{"email": {address}})
	if res.StatusCode != http.StatusSeeOther {
		b.e.t.Fatalf("POST /auth/signin/email: %s", res.Status)
	}
	b.e.mu.Lock()
	link := b.e.links[address]
	b.e.mu.Unlock()
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	if res, body := b.do(req); res.StatusCode != http.StatusFound {
		b.e.t.Fatalf("the link for %s: %s %s", address, res.Status, body)
	}
	if got := b.sessionEmail(); got != address {
		b.e.t.Fatalf("after the link for %s the session is %q's", address, got)
	}
}

// options is GET /auth/webauthn-options/passkey?query: the status, the
// decoded options and the raw body.
func (b *browser) options(query string) (int, passkeytest.Options, string) {
	b.e.t.Helper()
	res, body := b.get("/auth/webauthn-options/passkey?" + query)
	var o passkeytest.Options
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			b.e.t.Fatalf("options body %s: %v", body, err)
		}
	}
	return res.StatusCode, o, body
}

// ceremony asks for options with query, answers them with key and posts
// the callback; it returns the callback's response.
func (b *browser) ceremony(query string, key *passkeytest.Authenticator) *http.Response {
	b.e.t.Helper()
	status, o, body := b.options(query)
	if status != http.StatusOK {
		b.e.t.Fatalf("options %q: %d %s", query, status, body)
	}
	var data string
	var err error
	if o.Action == passkey.ActionRegister {
		data, err = key.Create(o, passkeytest.Ceremony{Origin: b.e.origin})
	} else {
		data, err = key.Get(o, passkeytest.Ceremony{Origin: b.e.origin})
	}
	if err != nil {
		b.e.t.Fatal(err)
	}
	res, _ := b.post("/auth/callback/passkey", url.Values{"action": {o.Action}, "data": {data}})
	return res
}

func (e *idEnv) user(email string) *core.User {
	e.t.Helper()
	u, err := e.store.GetUserByEmail(context.Background(), email)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// Takeover before sign-up: signed out, nobody registers a passkey for an
// address; its owner signs in by e-mail to a user of their own and adds a
// passkey.
func TestPasskeySignUpNeedsAProvenAddress(t *testing.T) {
	e := newIDEnv(t, memory.New(), nil)
	attacker := e.browser()
	status, o, body := attacker.options("action=register&email=victim%40example.com")
	if status != http.StatusBadRequest || !strings.Contains(body, "WebAuthnVerificationError") {
		t.Fatalf("signed-out passkey sign-up for another's address: %d %+v %s, want 400 WebAuthnVerificationError", status, o, body)
	}
	if status, _, _ := attacker.options("email=victim%40example.com"); status != http.StatusOK {
		t.Fatalf("options without action: %d", status)
	}
	if u := e.user("victim@example.com"); u != nil {
		t.Fatalf("a user was created for the address: %+v", u)
	}

	owner := e.browser()
	owner.signInByEmail("victim@example.com")
	key, err := passkeytest.NewAuthenticator()
	if err != nil {
		t.Fatal(err)
	}
	if res := owner.ceremony("action=register", key); res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusFound {
		t.Fatalf("adding a passkey while signed in: %s", res.Status)
	}
	u := e.user("victim@example.com")
	if list, err := e.store.ListAuthenticatorsByUserID(context.Background(), u.ID); err != nil || len(list) != 1 {
		t.Fatalf("the owner's authenticators: %+v, %v", list, err)
	}
	later := e.browser()
	if res := later.ceremony("", key); res.StatusCode/100 != 3 || later.sessionEmail() != "victim@example.com" {
		t.Fatalf("signing in with the passkey: %s, session %q", res.Status, later.sessionEmail())
	}
}

// Options that tell who has an account: signed out, the options are the
// same for an address with an account and passkeys and for one without: no
// lookup, no credential ids.
func TestPasskeyOptionsSameForEveryAddress(t *testing.T) {
	e := newIDEnv(t, memory.New(), nil)
	owner := e.browser()
	owner.signInByEmail("owner@example.com")
	key, err := passkeytest.NewAuthenticator()
	if err != nil {
		t.Fatal(err)
	}
	owner.ceremony("action=register", key)

	stranger := e.browser()
	for _, action := range []string{"", "authenticate", "register"} {
		var answers []string
		for _, email := range []string{"owner@example.com", "Owner@Example.com", "nobody@example.com"} {
			status, o, _ := stranger.options("action=" + action + "&email=" + url.QueryEscape(email))
			allowed := make([]string, 0, len(o.Options.AllowCredentials))
			for _, c := range o.Options.AllowCredentials {
				allowed = append(allowed, c.ID)
			}
			answers = append(answers, strings.Join([]string{http.StatusText(status), o.Action, o.Options.User.Name, strings.Join(allowed, ",")}, "|"))
		}
		for _, a := range answers[1:] {
			if a != answers[0] {
				t.Errorf("action %q: the answer depends on the address: %q", action, answers)
				break
			}
		}
	}
}
