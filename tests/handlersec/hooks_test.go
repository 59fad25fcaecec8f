package handlersec

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/oauth/oauthtest"
)

// The callbacks and events over HTTP against
// the handler on each real store (bbolt, PostgreSQL, Redis), with database
// and JWT sessions; the handler module runs the fuller set on the memory
// store. The OAuth provider is an in-process double (the store is what is
// under test here; dex runs in the handler module), and the e-mail provider
// keeps the link it is asked to send.

// hookPasskeys is the handler's side of the passkey contract: it signs in
// with the stored authenticator cred-1 through core/auth.
type hookPasskeys struct{ a *auth.Auth }

func (p *hookPasskeys) Options(context.Context, string, url.Values, *core.User) (any, string, error) {
	return map[string]any{}, "{}", nil
}

func (p *hookPasskeys) Callback(ctx context.Context, id string, _ url.Values, _ string, user *core.User) (*auth.SignIn, error) {
	return p.a.SignInWithPasskey(ctx, id, "cred-1", 0, user)
}

func (p *hookPasskeys) Timeout() time.Duration { return 5 * time.Minute }

func (p *hookPasskeys) Script() []byte { return nil }

type hookApp struct {
	t       *testing.T
	srv     *httptest.Server
	h       *handler.Handler
	a       *auth.Auth
	store   *coretest.Counting // counts the calls through checked
	checked *core.Store
	idp     *oauthtest.Fake
	client  *http.Client
	mu      sync.Mutex
	links   []string
}

func newHookApp(t *testing.T, store core.Adapter, strategy auth.Strategy, configure func(*auth.Config)) *hookApp {
	app := &hookApp{t: t, store: coretest.NewCounting(), idp: oauthtest.StartFake(t)}
	app.checked = core.NewStore(store, core.WithObserver(app.store))
	app.srv = httptest.NewServer(nil)
	t.Cleanup(app.srv.Close)
	email := provider.Email("auth@example.com", func(_ context.Context, v provider.VerificationRequest) error {
		app.mu.Lock()
		app.links = append(app.links, v.URL)
		app.mu.Unlock()
		return nil
	})
	cfg := auth.Config{Adapter: app.checked, Providers: []provider.Provider{app.idp.Provider("idp"), email, provider.Passkey()},
		Secrets: []string{secret}, BaseURL: app.srv.URL + "/auth", Session: auth.SessionOptions{Strategy: strategy}}
	configure(&cfg)
	a, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app.a = a
	if app.h, err = handler.New(handler.Config{Auth: a, Passkeys: &hookPasskeys{a: a}}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", app.h)
	app.srv.Config.Handler = mux
	jar, _ := cookiejar.New(nil)
	app.client = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	ctx := context.Background()
	u := core.User{ID: "0b7e3c1a-52f4-4d6e-8a9b-1c2d3e4f5a6b", Email: "pk@example.com"}
	if _, err := app.checked.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	// The passkey as a registration stores it (the account, then the
	// authenticator), without the SignIn callback the rules configure.
	if _, err := app.checked.LinkAccount(ctx, core.Account{UserID: u.ID, Provider: "passkey", Type: core.AccountTypeWebAuthn, ProviderAccountID: "cred-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.checked.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "cred-1", UserID: u.ID,
		ProviderAccountID: "cred-1", CredentialPublicKey: "pk", CredentialDeviceType: "singleDevice"}); err != nil {
		t.Fatal(err)
	}
	app.store.Reset()
	return app
}

type hookRes struct {
	*http.Response
	body string
}

func (app *hookApp) do(method, path string, form url.Values) hookRes {
	app.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	if !strings.HasPrefix(path, "http") {
		path = app.srv.URL + path
	}
	req, _ := http.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := app.client.Do(req)
	if err != nil {
		app.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return hookRes{res, string(b)}
}

func (app *hookApp) csrf() string {
	var v struct{ CSRFToken string }
	_ = json.Unmarshal([]byte(app.do("GET", "/auth/csrf", nil).body), &v)
	return v.CSRFToken
}

func (app *hookApp) session() map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(app.do("GET", "/auth/session", nil).body), &m)
	return m
}

func (app *hookApp) signInOAuth(profile map[string]any) hookRes {
	app.idp.SetProfile(profile)
	res := app.do("POST", "/auth/signin/idp", url.Values{"csrfToken": {app.csrf()}})
	back := app.do("GET", res.Header.Get("Location"), nil)
	return app.do("GET", back.Header.Get("Location"), nil)
}

func (app *hookApp) lastLink() string {
	app.mu.Lock()
	defer app.mu.Unlock()
	if len(app.links) == 0 {
		app.t.Fatal("no e-mail link sent")
	}
	return app.links[len(app.links)-1]
}

func noSession(t *testing.T, what string, res hookRes) {
	t.Helper()
	for _, c := range res.Cookies() {
		if strings.Contains(c.Name, "session-token") {
			t.Errorf("%s set %s", what, c.Name)
		}
	}
}

func forStores(t *testing.T, run func(t *testing.T, store core.Adapter, strategy auth.Strategy)) {
	for _, st := range testStores {
		for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
			t.Run(st.name+"/"+string(strategy), func(t *testing.T) { run(t, st.open(t), strategy) })
		}
	}
}

// A denied sign-in writes nothing on any store, whichever the way: OAuth
// (only the callback's one-time check record), e-mail before the link is
// sent (no link, no token), e-mail when the link is used (only its use),
// passkeys.
func TestSignInDenyOnStores(t *testing.T) {
	forStores(t, func(t *testing.T, store core.Adapter, strategy auth.Strategy) {
		app := newHookApp(t, store, strategy, func(c *auth.Config) {
			c.Callbacks.SignIn = func(_ context.Context, p auth.SignInParams) (auth.SignInDecision, error) {
				if p.User.Email == "late@example.com" && p.VerificationRequest {
					return auth.SignInDecision{}, nil
				}
				return auth.SignInDecision{Deny: true}, nil
			}
		})
		denied := app.srv.URL + "/auth/error?error=AccessDenied"
		// refused checks a denial: to the error page, no session cookie,
		// and no write but the one allowed.
		refused := func(what string, res hookRes, allowed core.Method) {
			t.Helper()
			if got := res.Header.Get("Location"); got != denied {
				t.Errorf("%s: %s, want %s", what, got, denied)
			}
			noSession(t, what, res)
			if w := app.store.WritesExcept(allowed); len(w) != 0 {
				t.Errorf("%s wrote %v", what, w)
			}
		}
		refused("a denied OAuth sign-in", app.signInOAuth(map[string]any{"id": "gh-1", "email": "octo@example.com"}), core.MethodCreateVerificationToken)
		app.store.Reset()
		res := app.do("POST", "/auth/signin/email", url.Values{"csrfToken": {app.csrf()}, "email": {"nope@example.com"}})
		app.mu.Lock()
		sent := len(app.links)
		app.mu.Unlock()
		if got := res.Header.Get("Location"); got != denied || sent != 0 || len(app.store.Writes()) != 0 {
			t.Errorf("e-mail refused before sending: %s, %d links, writes %v", got, sent, app.store.Writes())
		}
		app.do("POST", "/auth/signin/email", url.Values{"csrfToken": {app.csrf()}, "email": {"late@example.com"}})
		app.store.Reset()
		refused("a denied e-mail link", app.do("GET", app.lastLink(), nil), core.MethodUseVerificationToken)
		app.store.Reset()
		res = app.do("POST", "/auth/callback/passkey", url.Values{"csrfToken": {app.csrf()}})
		// The assertion's counter check (advanceAuthenticatorCounter, on
		// the stores that offer it; the counter stays 0 here) comes before
		// the callback decides: no other write.
		if got, w := res.Header.Get("Location"), app.store.WritesExcept(core.Method(core.ExtensionAdvanceAuthenticatorCounter)); got != denied || len(w) != 0 {
			t.Errorf("passkey: %s, writes %v", got, w)
		}
		if s := app.session(); s != nil {
			t.Errorf("signed in after denied sign-ins: %v", s)
		}
	})
}

// The JWT and Session callbacks and the events on each store.
func TestCallbacksAndEventsOnStores(t *testing.T) {
	forStores(t, func(t *testing.T, store core.Adapter, strategy auth.Strategy) {
		var mu sync.Mutex
		var events []string
		add := func(s string) { mu.Lock(); events = append(events, s); mu.Unlock() }
		app := newHookApp(t, store, strategy, func(c *auth.Config) {
			c.Callbacks.JWT = func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
				add("jwt:" + string(p.Trigger))
				if p.Account != nil && p.Account.AccessToken != nil {
					p.Token["role"] = "reader"
				}
				if m, ok := p.Update.(map[string]any); ok {
					p.Token["role"] = m["role"]
				}
				return p.Token, nil
			}
			c.Callbacks.Session = func(_ context.Context, p auth.SessionParams) (map[string]any, error) {
				if p.User != nil {
					p.Session["role"] = "db"
				} else {
					p.Session["role"] = p.Token["role"]
				}
				return p.Session, nil
			}
			c.Events = auth.Events{
				SignIn:     func(_ context.Context, e auth.SignInEvent) error { add("signIn:" + e.ProviderID); return nil },
				SignOut:    func(context.Context, auth.SignOutEvent) error { add("signOut"); return nil },
				CreateUser: func(context.Context, core.User) error { add("createUser"); return nil },
				UpdateUser: func(context.Context, core.User) error { add("updateUser"); return nil },
				LinkAccount: func(_ context.Context, e auth.LinkAccountEvent) error {
					add("linkAccount:" + e.Account.Provider)
					return nil
				},
				Session: func(context.Context, auth.SessionEvent) error { add("session"); return nil },
			}
		})
		// The passkey user adds a second passkey while signed in.
		if _, err := app.a.RegisterPasskey(context.Background(), "passkey", &core.User{ID: "0b7e3c1a-52f4-4d6e-8a9b-1c2d3e4f5a6b", Email: "pk@example.com"}, core.User{},
			core.Authenticator{CredentialID: "cred-2", ProviderAccountID: "cred-2", CredentialPublicKey: "pk", CredentialDeviceType: "singleDevice"}); err != nil {
			t.Fatal(err)
		}
		app.signInOAuth(map[string]any{"id": "gh-1", "email": "octo@example.com"})
		s := app.session()
		wantRole := "reader"
		if strategy == auth.StrategyDatabase {
			wantRole = "db"
		}
		if s["role"] != wantRole {
			t.Errorf("session %v, want role %s", s, wantRole)
		}
		if strategy == auth.StrategyJWT {
			body, _ := json.Marshal(map[string]any{"csrfToken": app.csrf(), "data": map[string]any{"role": "admin"}})
			req, _ := http.NewRequest(http.MethodPost, app.srv.URL+"/auth/session", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			res, err := app.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if s := app.session(); s["role"] != "admin" {
				t.Errorf("after update(): %v", s)
			}
		}
		app.do("POST", "/auth/signout", url.Values{"csrfToken": {app.csrf()}})
		app.do("POST", "/auth/signin/email", url.Values{"csrfToken": {app.csrf()}, "email": {"octo@example.com"}})
		app.do("GET", app.lastLink(), nil)
		// The added passkey was linked first.
		want := []string{"linkAccount:passkey", "signIn:passkey", "createUser", "linkAccount:idp", "signIn:idp"}
		if strategy == auth.StrategyJWT {
			want = append(want, "jwt:signUp", "jwt:refresh", "session", "jwt:update", "session", "jwt:refresh", "session")
		} else {
			want = append(want, "session")
		}
		want = append(want, "signOut", "updateUser", "linkAccount:email", "signIn:email")
		if strategy == auth.StrategyJWT {
			want = append(want, "jwt:signIn")
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(events, want) {
			t.Errorf("events and callbacks:\n got %v\nwant %v", events, want)
		}
	})
}
