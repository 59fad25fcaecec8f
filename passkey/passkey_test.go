package passkey_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/memory"
	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/passkey"
)

const (
	baseURL = "http://localhost:3000/auth"
	origin  = "http://localhost:3000"
)

// store is what the tests read back from the adapter.
type store interface {
	core.UserByEmailGetter
	core.AuthenticatorGetter
	core.AuthenticatorsByUserLister
	core.AccountGetter
	core.UserCreator
}

type env struct {
	t       testing.TB
	adapter store
	auth    *auth.Auth
	pk      *passkey.Passkeys
	mu      sync.Mutex
	now     time.Time
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

func newEnv(t testing.TB, adapter store) *env {
	t.Helper()
	e := &env{t: t, adapter: adapter, now: time.Now()}
	a, err := auth.New(auth.Config{
		Adapter:   adapter,
		Providers: []provider.Provider{provider.Passkey()},
		Secrets:   []string{"test-secret-test-secret-test-secret"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   baseURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a, Secrets: []string{"test-secret-test-secret-test-secret"}, Timeout: 2 * time.Minute, Now: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	e.auth, e.pk = a, pk
	return e
}

// backends are the adapters every ceremony test runs on: the memory
// adapter and a real Redis server.
func backends(t *testing.T) map[string]func(t *testing.T) store {
	return map[string]func(t *testing.T) store{
		"memory": func(t *testing.T) store { return memory.New() },
		"redis":  redisStore,
	}
}

func redisStore(t *testing.T) store {
	opt, err := goredis.ParseURL(provision.Redis(t))
	if err != nil {
		t.Fatalf("AUTHPORT_REDIS_URL: %v", err)
	}
	client := goredis.NewClient(opt)
	prefix := "authport-passkey-test:" + randomHex(t) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
		client.Close()
	})
	a, err := redisadapter.New(client, redisadapter.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// forEachBackend runs f on every backend, in parallel subtests.
func forEachBackend(t *testing.T, f func(t *testing.T, e *env)) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, newEnv(t, mk(t)))
		})
	}
}

// options GETs the options route; it returns the decoded body and the
// cookies the response set.
func (e *env) options(query string, user *core.User) (optionsBody, []*http.Cookie, error) {
	e.t.Helper()
	r := httptest.NewRequest(http.MethodGet, baseURL+"/webauthn-options/passkey?"+query, nil)
	w := httptest.NewRecorder()
	body, err := e.pk.Options(context.Background(), w, r, "passkey", user)
	if err != nil {
		return optionsBody{}, nil, err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	var out optionsBody
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatal(err)
	}
	return out, w.Result().Cookies(), nil
}

func (e *env) mustOptions(query string, user *core.User) (optionsBody, []*http.Cookie) {
	e.t.Helper()
	o, c, err := e.options(query, user)
	if err != nil {
		e.t.Fatalf("options %q: %v", query, err)
	}
	return o, c
}

// callback POSTs the callback route as the page script does.
func (e *env) callback(cookies []*http.Cookie, action, data string, user *core.User) (*auth.SignIn, *httptest.ResponseRecorder, error) {
	form := url.Values{"action": {action}, "data": {data}, "csrfToken": {"checked-by-the-handler"}}
	r := httptest.NewRequest(http.MethodPost, baseURL+"/callback/passkey", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	s, err := e.pk.Callback(context.Background(), w, r, "passkey", user)
	return s, w, err
}

// signUp registers a new user with the e-mail address and sa.
func (e *env) signUp(email string, sa *softAuthenticator) core.User {
	e.t.Helper()
	o, c := e.mustOptions("email="+url.QueryEscape(email), nil)
	s, _, err := e.callback(c, o.Action, sa.create(e.t, o, ceremony{origin: origin}), nil)
	if err != nil {
		e.t.Fatalf("sign-up: %v", err)
	}
	if !s.IsNewUser || s.User.Email != email {
		e.t.Fatalf("sign-up gave %+v", s)
	}
	return s.User
}

func (e *env) signIn(sa *softAuthenticator, c ceremony) (*auth.SignIn, error) {
	e.t.Helper()
	o, cookies := e.mustOptions("", nil)
	if c.origin == "" {
		c.origin = origin
	}
	s, _, err := e.callback(cookies, o.Action, sa.get(e.t, o, c), nil)
	return s, err
}

func (e *env) stored(sa *softAuthenticator) *core.Authenticator {
	e.t.Helper()
	a, err := e.adapter.GetAuthenticator(context.Background(), base64.StdEncoding.EncodeToString(sa.credID))
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) counter(sa *softAuthenticator) int64 {
	e.t.Helper()
	a := e.stored(sa)
	if a == nil {
		e.t.Fatal("authenticator not stored")
	}
	return a.Counter
}

func TestRegisterAndAuthenticate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		sa := newSoftAuthenticator(t)
		o, cookies := e.mustOptions("email=Ada@Example.com", nil)
		if o.Action != "register" || o.Options.RP.ID != "localhost" || len(o.Options.Challenge) < 22 {
			t.Fatalf("options for a new e-mail: %+v", o)
		}
		if len(cookies) != 1 || cookies[0].Name != "authjs.challenge" || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteLaxMode || cookies[0].Secure {
			t.Fatalf("challenge cookie: %+v", cookies)
		}
		s, w, err := e.callback(cookies, "register", sa.create(t, o, ceremony{origin: origin}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !s.IsNewUser || s.User.Email != "ada@example.com" || s.User.EmailVerified != nil || s.Session.SessionToken != "" {
			t.Fatalf("sign-up: %+v", s)
		}
		if cleared := w.Result().Cookies(); len(cleared) != 1 || cleared[0].Name != "authjs.challenge" || cleared[0].MaxAge >= 0 {
			t.Fatalf("the challenge cookie is not cleared: %+v", cleared)
		}
		// What is stored, in Auth.js's encodings.
		credID := base64.StdEncoding.EncodeToString(sa.credID)
		a := e.stored(sa)
		if a == nil {
			t.Fatal("authenticator not stored")
		}
		if a.CredentialID != credID || a.ProviderAccountID != credID || a.UserID != s.User.ID || a.Counter != 0 ||
			a.CredentialDeviceType != "multiDevice" || !a.CredentialBackedUp || a.Transports == nil || *a.Transports != "internal,hybrid" {
			t.Fatalf("stored authenticator: %+v", a)
		}
		if key, err := base64.StdEncoding.DecodeString(a.CredentialPublicKey); err != nil || len(key) < 64 {
			t.Fatalf("stored public key %q: %v", a.CredentialPublicKey, err)
		}
		acc, err := e.adapter.GetAccount(ctx, credID, "passkey")
		if err != nil || acc == nil || acc.UserID != s.User.ID || acc.Type != core.AccountTypeWebAuthn {
			t.Fatalf("webauthn account: %+v, %v", acc, err)
		}

		// A discoverable sign-in (no e-mail), then one with the e-mail,
		// which lists the user's credential as the allowed one.
		in, err := e.signIn(sa, ceremony{})
		if err != nil {
			t.Fatal(err)
		}
		if in.User.ID != s.User.ID || in.IsNewUser {
			t.Fatalf("sign-in: %+v", in)
		}
		if got := e.counter(sa); got != 1 {
			t.Fatalf("counter after one sign-in: %d", got)
		}
		o, cookies = e.mustOptions("email=ada@example.com", nil)
		if o.Action != "authenticate" || len(o.Options.AllowCredentials) != 1 || o.Options.AllowCredentials[0].ID != b64u.EncodeToString(sa.credID) {
			t.Fatalf("options for a known e-mail: %+v", o)
		}
		if in, _, err = e.callback(cookies, "authenticate", sa.get(t, o, ceremony{origin: origin}), nil); err != nil || in.User.ID != s.User.ID {
			t.Fatalf("sign-in with e-mail: %+v, %v", in, err)
		}
		if got := e.counter(sa); got != 2 {
			t.Fatalf("counter after two sign-ins: %d", got)
		}
	})
}

func TestCounterMustIncrease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		sa := newSoftAuthenticator(t)
		e.signUp("c@example.com", sa)
		o, cookies := e.mustOptions("", nil)
		data := sa.get(t, o, ceremony{origin: origin})
		if _, _, err := e.callback(cookies, "authenticate", data, nil); err != nil {
			t.Fatal(err)
		}
		// The same assertion again, with its challenge cookie.
		if _, _, err := e.callback(cookies, "authenticate", data, nil); !errors.Is(err, passkey.ErrCounterNotIncreased) {
			t.Fatalf("replay: %v", err)
		}
		// A fresh challenge, but a counter that went back.
		zero := uint32(0)
		if _, err := e.signIn(sa, ceremony{counter: &zero}); !errors.Is(err, passkey.ErrCounterNotIncreased) {
			t.Fatalf("lower counter: %v", err)
		}
		one := uint32(1)
		if _, err := e.signIn(sa, ceremony{counter: &one}); !errors.Is(err, passkey.ErrCounterNotIncreased) {
			t.Fatalf("equal counter: %v", err)
		}
		if got := e.counter(sa); got != 1 {
			t.Fatalf("counter changed by refused assertions: %d", got)
		}
		if _, err := e.signIn(sa, ceremony{}); err != nil {
			t.Fatalf("a higher counter: %v", err)
		}
		if got := e.counter(sa); got != int64(sa.counter) {
			t.Fatalf("counter %d, authenticator at %d", got, sa.counter)
		}
	})
}

// An authenticator without a counter reports 0 every time: 0 over 0 is
// allowed (core/auth's rule, as in the WebAuthn spec).
func TestCounterZeroAllowed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		sa := newSoftAuthenticator(t)
		e.signUp("z@example.com", sa)
		zero := uint32(0)
		for i := range 3 {
			if _, err := e.signIn(sa, ceremony{counter: &zero}); err != nil {
				t.Fatalf("sign-in %d with counter 0: %v", i, err)
			}
		}
		if got := e.counter(sa); got != 0 {
			t.Fatalf("counter %d", got)
		}
	})
}

func TestConcurrentReplays(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		sa := newSoftAuthenticator(t)
		e.signUp("race@example.com", sa)
		o, cookies := e.mustOptions("", nil)
		data := sa.get(t, o, ceremony{origin: origin})
		const n = 12
		var wins, refused atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				_, _, err := e.callback(cookies, "authenticate", data, nil)
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, passkey.ErrCounterNotIncreased):
					refused.Add(1)
				default:
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("unexpected error: %v", err)
		}
		if wins.Load() != 1 || refused.Load() != n-1 {
			t.Fatalf("%d wins, %d refused of %d racing replays; want exactly one win", wins.Load(), refused.Load(), n)
		}
		if got := e.counter(sa); got != 1 {
			t.Fatalf("counter %d", got)
		}
	})
}

// Every refused assertion leaves the counter as it was.
func TestAuthenticationRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		sa := newSoftAuthenticator(t)
		user := e.signUp("r@example.com", sa)
		other := newSoftAuthenticator(t)
		otherUser := e.signUp("other@example.com", other)

		cases := map[string]struct {
			sa   *softAuthenticator
			c    ceremony
			want error
		}{
			"wrong origin":       {sa, ceremony{origin: "http://evil.localhost:3000"}, passkey.ErrOriginMismatch},
			"wrong RP ID":        {sa, ceremony{rpID: "example.com"}, passkey.ErrRPIDMismatch},
			"other challenge":    {sa, ceremony{challenge: b64u.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))}, passkey.ErrChallengeMismatch},
			"tampered signature": {sa, ceremony{tamper: true}, passkey.ErrVerificationFailed},
			"unknown credential": {newSoftAuthenticator(t), ceremony{}, passkey.ErrUnknownCredential},
		}
		for name, tc := range cases {
			before := e.counter(sa)
			if _, err := e.signIn(tc.sa, tc.c); !errors.Is(err, tc.want) {
				t.Errorf("%s: got %v, want %v", name, err, tc.want)
			}
			tc.sa.counter-- // the authenticator did not really sign
			if got := e.counter(sa); got != before {
				t.Errorf("%s: counter %d -> %d", name, before, got)
			}
		}

		// A passkey of another user while signed in.
		o, cookies := e.mustOptions("action=authenticate", &user)
		if _, _, err := e.callback(cookies, "authenticate", other.get(t, o, ceremony{origin: origin}), &user); !errors.Is(err, auth.ErrAccountNotLinked) {
			t.Errorf("another user's passkey while signed in: %v", err)
		}
		if got := e.counter(other); got != 0 {
			t.Errorf("other counter %d", got)
		}
		// The signed-in user's own passkey is fine.
		o, cookies = e.mustOptions("action=authenticate", &otherUser)
		if s, _, err := e.callback(cookies, "authenticate", other.get(t, o, ceremony{origin: origin}), &otherUser); err != nil || s.User.ID != otherUser.ID {
			t.Errorf("own passkey while signed in: %+v, %v", s, err)
		}
	})
}

func TestChallengeCookie(t *testing.T) {
	e := newEnv(t, memory.New())
	sa := newSoftAuthenticator(t)
	e.signUp("k@example.com", sa)

	o, cookies := e.mustOptions("", nil)
	data := sa.get(t, o, ceremony{origin: origin})
	if _, _, err := e.callback(nil, "authenticate", data, nil); !errors.Is(err, passkey.ErrChallengeMissing) {
		t.Errorf("no cookie: %v", err)
	}
	tampered := *cookies[0]
	tampered.Value = tampered.Value[:len(tampered.Value)-2] + "AA"
	if _, _, err := e.callback([]*http.Cookie{&tampered}, "authenticate", data, nil); !errors.Is(err, passkey.ErrChallengeMissing) {
		t.Errorf("tampered cookie: %v", err)
	}
	e.advance(2*time.Minute + time.Minute)
	if _, _, err := e.callback(cookies, "authenticate", data, nil); !errors.Is(err, passkey.ErrChallengeExpired) {
		t.Errorf("expired cookie: %v", err)
	}
	if got := e.counter(sa); got != 0 {
		t.Errorf("counter %d after refused callbacks", got)
	}
	// The cookie of a registration cannot serve an authentication.
	reg, regCookies := e.mustOptions("email=new@example.com", nil)
	if reg.Action != "register" {
		t.Fatal(reg.Action)
	}
	o2, _ := e.mustOptions("", nil)
	if _, _, err := e.callback(regCookies, "authenticate", sa.get(t, o2, ceremony{origin: origin}), nil); !errors.Is(err, passkey.ErrInvalidAction) {
		t.Errorf("registration cookie for an authentication: %v", err)
	}
}

func TestSecureCookieOnHTTPS(t *testing.T) {
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{provider.Passkey()}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, BaseURL: "https://example.com/auth"})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a, Secrets: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	body, err := pk.Options(context.Background(), w, httptest.NewRequest(http.MethodGet, "https://example.com/auth/webauthn-options/passkey", nil), "passkey", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != "__Secure-authjs.challenge" || !c[0].Secure || !c[0].HttpOnly || c[0].SameSite != http.SameSiteLaxMode || c[0].MaxAge <= 0 || c[0].MaxAge > int(passkey.DefaultTimeout/time.Second) {
		t.Fatalf("cookie on https: %+v", c)
	}
	raw, _ := json.Marshal(body)
	if !strings.Contains(string(raw), `"rpId":"example.com"`) || !strings.Contains(string(raw), `"action":"authenticate"`) {
		t.Fatalf("options on https: %s", raw)
	}
}

func TestRegistrationRules(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		sa := newSoftAuthenticator(t)
		user := e.signUp("owner@example.com", sa)

		// Not signed in, an existing user's e-mail: registering is refused,
		// with or without an explicit action; no action means sign in.
		if _, _, err := e.options("action=register&email=owner@example.com", nil); !errors.Is(err, passkey.ErrNotAllowed) {
			t.Errorf("register an existing e-mail: %v", err)
		}
		if o, _ := e.mustOptions("email=owner@example.com", nil); o.Action != "authenticate" {
			t.Errorf("no action, existing e-mail: %s", o.Action)
		}
		if _, _, err := e.options("action=register", nil); !errors.Is(err, passkey.ErrNotAllowed) {
			t.Errorf("register without e-mail: %v", err)
		}
		if _, _, err := e.options("action=register&email=not-an-address", nil); !errors.Is(err, passkey.ErrInvalidEmail) {
			t.Errorf("bad e-mail: %v", err)
		}
		if _, _, err := e.options("action=delete", nil); !errors.Is(err, passkey.ErrInvalidAction) {
			t.Errorf("bad action: %v", err)
		}

		// Signed in: a second passkey, with the first one excluded.
		second := newSoftAuthenticator(t)
		o, cookies := e.mustOptions("action=register", &user)
		if o.Action != "register" || len(o.Options.ExcludeCredentials) != 1 || o.Options.ExcludeCredentials[0].ID != b64u.EncodeToString(sa.credID) {
			t.Fatalf("options to add a passkey: %+v", o)
		}
		s, _, err := e.callback(cookies, "register", second.create(t, o, ceremony{origin: origin}), &user)
		if err != nil || s.User.ID != user.ID || s.IsNewUser {
			t.Fatalf("adding a passkey: %+v, %v", s, err)
		}
		list, err := e.adapter.ListAuthenticatorsByUserID(ctx, user.ID)
		if err != nil || len(list) != 2 {
			t.Fatalf("authenticators: %+v, %v", list, err)
		}
		if in, err := e.signIn(second, ceremony{}); err != nil || in.User.ID != user.ID {
			t.Fatalf("sign-in with the second passkey: %+v, %v", in, err)
		}
		// Signed in with passkeys already, no action: authenticate.
		if o, _ := e.mustOptions("", &user); o.Action != "authenticate" || len(o.Options.AllowCredentials) != 2 {
			t.Errorf("signed in, no action: %+v", o)
		}

		// Options made for a sign-up, while someone took the address in
		// between: refused at the callback, and nothing is stored.
		o, cookies = e.mustOptions("email=late@example.com", nil)
		if _, err := e.adapter.CreateUser(ctx, core.User{ID: "late-user", Email: "late@example.com"}); err != nil {
			t.Fatal(err)
		}
		late := newSoftAuthenticator(t)
		if _, _, err := e.callback(cookies, "register", late.create(t, o, ceremony{origin: origin}), nil); !errors.Is(err, auth.ErrAccountNotLinked) {
			t.Errorf("sign-up with an address taken meanwhile: %v", err)
		}
		if e.stored(late) != nil {
			t.Error("the refused registration stored its authenticator")
		}
	})
}

// A registration that fails verification stores nothing: no user, no
// account, no authenticator.
func TestRegistrationRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		cases := map[string]struct {
			c    ceremony
			data func(string) string
			want error
		}{
			"wrong origin":     {c: ceremony{origin: "https://localhost:3000"}, want: passkey.ErrOriginMismatch},
			"wrong RP ID":      {c: ceremony{origin: origin, rpID: "evil.example"}, want: passkey.ErrRPIDMismatch},
			"other challenge":  {c: ceremony{origin: origin, challenge: b64u.EncodeToString(make([]byte, 32))}, want: passkey.ErrChallengeMismatch},
			"not JSON":         {c: ceremony{origin: origin}, data: func(string) string { return "{not json" }, want: passkey.ErrInvalidCredential},
			"JSON, not a cred": {c: ceremony{origin: origin}, data: func(string) string { return `{"id":"x"}` }, want: passkey.ErrInvalidCredential},
			"cut attestation":  {c: ceremony{origin: origin}, data: func(s string) string { return strings.Replace(s, `"attestationObject":"o`, `"attestationObject":"`, 1) }, want: passkey.ErrInvalidCredential},
			"empty data field": {c: ceremony{origin: origin}, data: func(string) string { return "" }, want: passkey.ErrInvalidCredential},
		}
		for name, tc := range cases {
			email := strings.NewReplacer(" ", "-", ",", "").Replace(name) + "@example.com"
			sa := newSoftAuthenticator(t)
			o, cookies := e.mustOptions("email="+email, nil)
			data := sa.create(t, o, tc.c)
			if tc.data != nil {
				data = tc.data(data)
			}
			if _, _, err := e.callback(cookies, "register", data, nil); !errors.Is(err, tc.want) {
				t.Errorf("%s: got %v, want %v", name, err, tc.want)
			}
			if u, err := e.adapter.GetUserByEmail(ctx, email); err != nil || u != nil {
				t.Errorf("%s: user stored: %+v, %v", name, u, err)
			}
			if e.stored(sa) != nil {
				t.Errorf("%s: authenticator stored", name)
			}
		}
		// The action must be the one the options were made for.
		sa := newSoftAuthenticator(t)
		o, cookies := e.mustOptions("email=act@example.com", nil)
		if _, _, err := e.callback(cookies, "authenticate", sa.create(t, o, ceremony{origin: origin}), nil); !errors.Is(err, passkey.ErrInvalidAction) {
			t.Errorf("action mismatch: %v", err)
		}
		if _, _, err := e.callback(cookies, "sign-in", sa.create(t, o, ceremony{origin: origin}), nil); !errors.Is(err, passkey.ErrInvalidAction) {
			t.Errorf("bad action: %v", err)
		}
	})
}

func TestNew(t *testing.T) {
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{provider.Passkey()}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]passkey.Config{
		"no auth":        {Secrets: []string{"s"}},
		"no secret":      {Auth: a},
		"empty secret":   {Auth: a, Secrets: []string{""}},
		"IP RP ID":       {Auth: a, Secrets: []string{"s"}, RPID: "127.0.0.1"},
		"bad origin":     {Auth: a, Secrets: []string{"s"}, Origins: []string{"localhost:3000"}},
		"negative time":  {Auth: a, Secrets: []string{"s"}, Timeout: -time.Second},
		"origin w/ path": {Auth: a, Secrets: []string{"s"}, Origins: []string{"https://example.com/app"}},
	} {
		if _, err := passkey.New(cfg); !errors.Is(err, passkey.ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	pk, err := passkey.New(passkey.Config{Auth: a, Secrets: []string{"s"}, RPID: "example.com", Origins: []string{"https://example.com", "https://app.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	// Not a WebAuthn provider.
	if _, err := pk.Options(context.Background(), httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "http://x/", nil), "github", nil); !errors.Is(err, auth.ErrUnknownProvider) {
		t.Errorf("unknown provider: %v", err)
	}
}

// Config's RPID and Origins apply when the provider has none, and the
// provider's win when it has them.
func TestRelyingPartySettings(t *testing.T) {
	own := &provider.WebAuthnConfig{ID: "corp", Name: "Corp key", RPID: "corp.example", RPOrigin: "https://login.corp.example"}
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{provider.Passkey(), own}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a, Secrets: []string{"s"}, RPID: "example.com", RPName: "Example", Origins: []string{"https://example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"passkey": `"rp":{"name":"Example","id":"example.com"}`, "corp": `"rp":{"name":"Example","id":"corp.example"}`} {
		r := httptest.NewRequest(http.MethodGet, "https://whatever.test/auth/webauthn-options/"+id+"?action=register&email=a@b.c", nil)
		body, err := pk.Options(context.Background(), httptest.NewRecorder(), r, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(body)
		if !strings.Contains(string(raw), want) {
			t.Errorf("%s: %s lacks %s", id, raw, want)
		}
	}
}

func TestScript(t *testing.T) {
	e := newEnv(t, memory.New())
	js := string(e.pk.Script())
	for _, want := range []string{
		"form[data-authport-passkey]", "data-options-url", `"email"`, `"action"`, `"data"`,
		"navigator.credentials.create", "navigator.credentials.get", "authenticate", "register",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(js, "onclick") || strings.Contains(js, "eval(") {
		t.Error("script uses inline handlers or eval")
	}
	b := e.pk.Script()
	b[0] = 'X'
	if e.pk.Script()[0] == 'X' {
		t.Error("Script returns its own buffer")
	}
}
