package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt/jwttest"
	"github.com/authport/authport/oauth/oauthtest"
)

// The callbacks (auth.Config.Callbacks) and events (auth.Config.Events)
// over HTTP against the handler, on the memory store, with database and JWT sessions.
// tests/handlersec runs the same checks on bbolt, PostgreSQL and Redis (a
// store driver here would reach every consumer of the handler module: the
// consumer check forbids it).

// hookStores are the stores the callback and event tests run on.
var hookStores = []struct {
	name string
	open func(t *testing.T, now func() time.Time) core.Adapter
}{
	{"memory", func(_ *testing.T, now func() time.Time) core.Adapter { return memory.New(memory.WithClock(now)) }},
}

var hookStrategies = []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT}

// hookEnv is an env with an OAuth provider (in process), an e-mail
// provider (a real SMTP exchange), passkeys (the handler's side of the
// contract), credentials (JWT only), and a store whose calls are counted.
type hookEnv struct {
	*env
	store   *coretest.Counting // counts the calls through checked
	checked *core.Store
	idp     *oauthtest.Fake
	smtp    *smtpServer
	logs    *coretest.SyncBuffer
}

func newHookEnv(t *testing.T, open func(*testing.T, func() time.Time) core.Adapter, strategy auth.Strategy, configure func(*auth.Config)) *hookEnv {
	t.Helper()
	he := &hookEnv{idp: oauthtest.StartFake(t), smtp: startSMTP(t), logs: &coretest.SyncBuffer{}}
	pk := &contractPasskeys{}
	he.env = newEnv(t, envOpts{
		strategy: strategy,
		providers: func(t *testing.T, _ string) []provider.Provider {
			ps := []provider.Provider{he.idp.Provider("idp"), he.smtp.emailProvider(t), provider.Passkey()}
			if strategy == auth.StrategyJWT {
				ps = append(ps, credentials())
			}
			return ps
		},
		adapter: func(t *testing.T, now func() time.Time) any {
			he.store = coretest.NewCounting()
			he.checked = core.NewStore(open(t, now), core.WithObserver(he.store))
			return he.checked
		},
		authConfig: func(c *auth.Config) {
			c.Logger = slog.New(slog.NewTextHandler(he.logs, nil))
			configure(c)
		},
		config: func(c *handler.Config) { pk.a = c.Auth; c.Passkeys = pk },
	})
	// A user with a passkey (cred-1), stored before the counting starts.
	ctx := context.Background()
	if _, err := he.checked.CreateUser(ctx, core.User{ID: "u-pk", Email: "pk@example.com"}); err != nil {
		t.Fatal(err)
	}
	storePasskey(t, he.checked, "u-pk")
	he.store.Reset()
	return he
}

func (he *hookEnv) signInPasskey() response {
	he.t.Helper()
	return he.post("/auth/callback/passkey", url.Values{"csrfToken": {he.csrf()}, "action": {"authenticate"}, "data": {`{"id":"cred-1"}`}})
}

func (he *hookEnv) requestEmail(address string) response {
	he.t.Helper()
	return he.post("/auth/signin/email", url.Values{"csrfToken": {he.csrf()}, "email": {address}})
}

// noSessionCookie fails when the response set a session cookie.
func noSessionCookie(t *testing.T, what string, res response) {
	t.Helper()
	for _, c := range res.Cookies() {
		if strings.Contains(c.Name, "session-token") {
			t.Errorf("%s set the session cookie %s", what, c.Name)
		}
	}
}

func forEachStore(t *testing.T, run func(t *testing.T, open func(*testing.T, func() time.Time) core.Adapter, strategy auth.Strategy)) {
	for _, st := range hookStores {
		for _, strategy := range hookStrategies {
			t.Run(st.name+"/"+string(strategy), func(t *testing.T) { run(t, st.open, strategy) })
		}
	}
}

// The SignIn callback refuses every way to sign in: AccessDenied, no
// session cookie, and nothing written (the only writes are the OAuth
// callback's one-time check record, made before the provider is asked,
// and the e-mail link's use). For e-mail it runs before the link is sent:
// refused there, no e-mail goes out and no token is stored. A decision with
// a Redirect sends the browser there instead.
func TestSignInCallbackDenies(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T, func() time.Time) core.Adapter, strategy auth.Strategy) {
		var mu sync.Mutex
		var seen []auth.SignInParams
		he := newHookEnv(t, open, strategy, func(c *auth.Config) {
			c.Callbacks.SignIn = func(_ context.Context, p auth.SignInParams) (auth.SignInDecision, error) {
				mu.Lock()
				seen = append(seen, p)
				mu.Unlock()
				switch {
				case p.User.Email == "redirect@example.com":
					return auth.SignInDecision{Redirect: "/blocked"}, nil
				case p.User.Email == "late@example.com" && p.VerificationRequest:
					return auth.SignInDecision{}, nil // refused only when the link is used
				}
				return auth.SignInDecision{Deny: true}, nil
			}
		})
		denied := he.base + "/error?error=AccessDenied"

		res := fakeSignIn(t, he.idp, he.env, "idp", map[string]any{"id": "gh-1", "email": "octo@example.com"})
		wantHeader(t, res, "Location", denied)
		noSessionCookie(t, "a denied OAuth sign-in", res)
		if w := he.store.WritesExcept(core.MethodCreateVerificationToken); len(w) != 0 {
			t.Errorf("a denied OAuth sign-in wrote %v", w)
		}
		he.store.Reset()

		res = he.requestEmail("nope@example.com")
		wantHeader(t, res, "Location", denied)
		if n := len(he.smtp.Messages()); n != 0 {
			t.Errorf("a refused e-mail sign-in sent %d e-mails", n)
		}
		if w := he.store.Writes(); len(w) != 0 {
			t.Errorf("a refused e-mail sign-in wrote %v (no token may be stored)", w)
		}

		res = he.requestEmail("late@example.com")
		wantStatus(t, res, http.StatusSeeOther)
		link := he.smtp.link(t)
		he.store.Reset()
		res = he.get(link)
		wantHeader(t, res, "Location", denied)
		noSessionCookie(t, "a denied e-mail link", res)
		if w := he.store.WritesExcept(core.MethodUseVerificationToken); len(w) != 0 {
			t.Errorf("a denied e-mail link wrote %v", w)
		}
		he.store.Reset()

		res = he.signInPasskey()
		wantHeader(t, res, "Location", denied)
		noSessionCookie(t, "a denied passkey sign-in", res)
		// The assertion's counter check (advanceAuthenticatorCounter, which
		// the store offers; the counter stays 0 here) comes before the
		// callback decides: no other write.
		if w := he.store.WritesExcept(core.Method(core.ExtensionAdvanceAuthenticatorCounter)); len(w) != 0 {
			t.Errorf("a denied passkey sign-in wrote %v", w)
		}

		if strategy == auth.StrategyJWT {
			res = he.signInCredentials("ada", "lovelace", nil)
			wantHeader(t, res, "Location", denied)
			noSessionCookie(t, "a denied credentials sign-in", res)
		}

		he.store.Reset()
		res = fakeSignIn(t, he.idp, he.env, "idp", map[string]any{"id": "gh-2", "email": "redirect@example.com"})
		wantHeader(t, res, "Location", "/blocked")
		noSessionCookie(t, "a redirected sign-in", res)
		if w := he.store.WritesExcept(core.MethodCreateVerificationToken); len(w) != 0 {
			t.Errorf("a redirected OAuth sign-in wrote %v", w)
		}

		if s := he.session(); s != nil {
			t.Errorf("signed in after denied sign-ins: %v", s)
		}
		mu.Lock()
		defer mu.Unlock()
		var kinds []string
		for _, p := range seen {
			kinds = append(kinds, p.ProviderID)
		}
		want := []string{"idp", "email", "email", "email", "passkey"}
		if strategy == auth.StrategyJWT {
			want = append(want, "credentials")
		}
		want = append(want, "idp")
		if !slices.Equal(kinds, want) {
			t.Errorf("the SignIn callback ran for %v, want %v", kinds, want)
		}
		// What it was told: the OAuth account with the provider's tokens
		// and its profile, a new user not yet stored.
		oauth := seen[0]
		if oauth.Account == nil || oauth.Account.AccessToken == nil || !strings.HasPrefix(*oauth.Account.AccessToken, "at-") ||
			oauth.Profile == nil || oauth.Profile.ID != "gh-1" || !oauth.IsNewUser || oauth.User.ID != "" || oauth.User.Email != "octo@example.com" {
			t.Errorf("OAuth SignIn params: %+v", oauth)
		}
		if !seen[1].VerificationRequest || seen[3].VerificationRequest || seen[3].Account == nil || seen[3].Account.Type != core.AccountTypeEmail {
			t.Errorf("e-mail SignIn params: %+v / %+v", seen[1], seen[3])
		}
		if pk := seen[4]; pk.User.ID != "u-pk" || pk.Account == nil || pk.Account.Type != core.AccountTypeWebAuthn {
			t.Errorf("passkey SignIn params: %+v", pk)
		}
	})
}

// An error from the SignIn callback fails the sign-in as a configuration
// error, not as a denial, and writes nothing either.
func TestSignInCallbackError(t *testing.T) {
	he := newHookEnv(t, hookStores[0].open, auth.StrategyDatabase, func(c *auth.Config) {
		c.Callbacks.SignIn = func(context.Context, auth.SignInParams) (auth.SignInDecision, error) {
			return auth.SignInDecision{}, errors.New("policy store unreachable")
		}
	})
	res := fakeSignIn(t, he.idp, he.env, "idp", map[string]any{"id": "gh-1", "email": "octo@example.com"})
	wantHeader(t, res, "Location", he.base+"/error?error=Configuration")
	if w := he.store.WritesExcept(core.MethodCreateVerificationToken); len(w) != 0 {
		t.Errorf("wrote %v", w)
	}
}

// The Redirect callback is the policy for every callbackUrl; without it
// only the site's own origin is accepted.
func TestRedirectCallback(t *testing.T) {
	for _, widen := range []bool{false, true} {
		he := newHookEnv(t, hookStores[0].open, auth.StrategyDatabase, func(c *auth.Config) {
			if widen {
				c.Callbacks.Redirect = func(_ context.Context, p auth.RedirectParams) (string, bool) {
					if strings.HasPrefix(p.URL, "https://app.example.com/") || strings.HasPrefix(p.URL, "myapp://") {
						return p.URL, true
					}
					return handler.SafeRedirect(p.URL, p.Origin)
				}
			}
		})
		for _, target := range []string{"https://app.example.com/welcome", "myapp://signed-in", "https://evil.example/x", "/home"} {
			res := he.post("/auth/signout", url.Values{"csrfToken": {he.csrf()}, "callbackUrl": {target}})
			want := he.srv.URL + "/"
			switch {
			case target == "/home":
				want = he.srv.URL + "/home"
			case widen && target != "https://evil.example/x":
				want = target
			}
			if got := res.Header.Get("Location"); got != want {
				t.Errorf("widened %v: callbackUrl %s went to %s, want %s", widen, target, got, want)
			}
		}
	}
}

// The JWT callback runs with its trigger: signUp and signIn with the
// account (with the provider's tokens) and the profile, refresh on every
// GET /session, update with the client's data on POST /session. The
// Session callback shapes the JSON with what it put in the token; with
// database sessions it receives the user.
func TestJWTAndSessionCallbacks(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T, func() time.Time) core.Adapter, strategy auth.Strategy) {
		var mu sync.Mutex
		var triggers []auth.JWTTrigger
		he := newHookEnv(t, open, strategy, func(c *auth.Config) {
			c.Callbacks.JWT = func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
				mu.Lock()
				triggers = append(triggers, p.Trigger)
				mu.Unlock()
				switch p.Trigger {
				case auth.JWTSignUp, auth.JWTSignIn:
					if p.User == nil || p.Account == nil || p.Account.AccessToken == nil || p.Profile == nil || p.Profile.ID != "gh-1" {
						return nil, errors.New("sign-in without user, account tokens or profile")
					}
					p.Token["role"] = "reader"
					p.Token["provider_token"] = *p.Account.AccessToken
				case auth.JWTUpdate:
					if m, ok := p.Update.(map[string]any); ok {
						p.Token["role"] = m["role"]
					}
				}
				return p.Token, nil
			}
			c.Callbacks.Session = func(_ context.Context, p auth.SessionParams) (map[string]any, error) {
				if p.User != nil {
					p.Session["role"] = "db:" + p.User.Email
				} else {
					p.Session["role"] = p.Token["role"]
				}
				return p.Session, nil
			}
		})
		res := fakeSignIn(t, he.idp, he.env, "idp", map[string]any{"id": "gh-1", "email": "octo@example.com"})
		wantStatus(t, res, http.StatusFound)
		s := he.session()
		if strategy == auth.StrategyDatabase {
			if s["role"] != "db:octo@example.com" {
				t.Errorf("database session JSON %v, want the Session callback's role", s)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(triggers) != 0 {
				t.Errorf("the JWT callback ran with database sessions: %v", triggers)
			}
			return
		}
		if s["role"] != "reader" {
			t.Errorf("session %v, want role reader from the JWT callback", s)
		}
		body, _ := json.Marshal(map[string]any{"csrfToken": he.csrf(), "data": map[string]any{"role": "admin"}})
		req, _ := http.NewRequest(http.MethodPost, he.abs("/auth/session"), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res = he.do(nil, req)
		wantStatus(t, res, http.StatusOK)
		if !strings.Contains(res.body, `"role":"admin"`) {
			t.Errorf("POST /session answered %s, want the updated role", res.body)
		}
		if s := he.session(); s["role"] != "admin" {
			t.Errorf("after update: %v", s)
		}
		cookie := setCookie(he.get("/auth/session"), "authjs.session-token")
		if cookie == nil {
			t.Fatal("no session cookie re-issued")
		}
		read, err := he.h.Session(requestWith(cookie))
		if err != nil || read == nil || read.Claims["provider_token"] == nil || read.Claims["role"] != "admin" {
			t.Errorf("the Reader sees %+v, %v; want the callback's claims", read, err)
		}
		he.post("/auth/signout", url.Values{"csrfToken": {he.csrf()}})
		fakeSignIn(t, he.idp, he.env, "idp", map[string]any{"id": "gh-1", "email": "octo@example.com"})
		mu.Lock()
		defer mu.Unlock()
		want := []auth.JWTTrigger{auth.JWTSignUp, auth.JWTRefresh, auth.JWTUpdate, auth.JWTRefresh, auth.JWTRefresh, auth.JWTSignIn}
		if !slices.Equal(triggers, want) {
			t.Errorf("triggers %v, want %v", triggers, want)
		}
	})
}

// The events run after the fact, in the documented order, for database and
// JWT sessions.
func TestEvents(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T, func() time.Time) core.Adapter, strategy auth.Strategy) {
		var mu sync.Mutex
		var got []string
		add := func(s string) {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		}
		take := func() []string {
			mu.Lock()
			defer mu.Unlock()
			out := got
			got = nil
			return out
		}
		he := newHookEnv(t, open, strategy, func(c *auth.Config) {
			c.Events = auth.Events{
				SignIn: func(_ context.Context, e auth.SignInEvent) error {
					if holdsProviderToken(e.Account, e) {
						add("signIn:providerToken")
					}
					add("signIn:" + e.ProviderID + ":" + map[bool]string{true: "new", false: "old"}[e.IsNewUser])
					return nil
				},
				SignOut: func(_ context.Context, e auth.SignOutEvent) error {
					if (strategy == auth.StrategyDatabase) != (e.Session != nil) || (strategy == auth.StrategyJWT) != (e.Token != nil) ||
						(strategy == auth.StrategyDatabase) != (e.SessionID != "") {
						add("signOut:wrong")
					}
					if e.Session != nil && (e.Session.SessionToken != "" || e.Session.UserID == "") {
						add("signOut:sessionToken")
					}
					add("signOut")
					return nil
				},
				CreateUser: func(_ context.Context, u core.User) error { add("createUser:" + u.Email); return nil },
				UpdateUser: func(_ context.Context, u core.User) error {
					add("updateUser:" + map[bool]string{true: "verified", false: "unverified"}[u.EmailVerified != nil])
					return nil
				},
				LinkAccount: func(_ context.Context, e auth.LinkAccountEvent) error {
					if holdsProviderToken(&e.Account, e) {
						add("linkAccount:providerToken")
					}
					add("linkAccount:" + e.Account.Provider)
					return nil
				},
				Session: func(_ context.Context, e auth.SessionEvent) error {
					add("session:" + map[bool]string{true: "token", false: "db"}[e.Token != nil])
					return nil
				},
			}
		})
		if e := take(); len(e) != 0 {
			t.Errorf("setting up: events %v, want none", e)
		}
		// The passkey user adds a second passkey while signed in.
		if _, err := he.a.RegisterPasskey(context.Background(), "passkey", &core.User{ID: "u-pk", Email: "pk@example.com"}, core.User{}, core.Authenticator{CredentialID: "cred-2",
			ProviderAccountID: "cred-2", CredentialPublicKey: "pk", CredentialDeviceType: "singleDevice"}); err != nil {
			t.Fatal(err)
		}
		if e := take(); !slices.Equal(e, []string{"linkAccount:passkey", "signIn:passkey:old"}) {
			t.Errorf("registering a passkey: events %v, want its linkAccount, then signIn", e)
		}
		fakeSignIn(t, he.idp, he.env, "idp", map[string]any{"id": "gh-1", "email": "octo@example.com"})
		if e, want := take(), []string{"createUser:octo@example.com", "linkAccount:idp", "signIn:idp:new"}; !slices.Equal(e, want) {
			t.Errorf("OAuth sign-up: events %v, want %v", e, want)
		}
		he.session()
		kind := "db"
		if strategy == auth.StrategyJWT {
			kind = "token"
		}
		if e, want := take(), []string{"session:" + kind}; !slices.Equal(e, want) {
			t.Errorf("GET /session: events %v, want %v", e, want)
		}
		he.post("/auth/signout", url.Values{"csrfToken": {he.csrf()}})
		if e, want := take(), []string{"signOut"}; !slices.Equal(e, want) {
			t.Errorf("sign-out: events %v, want %v", e, want)
		}
		// The OAuth user proves its address with an e-mail link.
		wantStatus(t, he.requestEmail("octo@example.com"), http.StatusSeeOther)
		wantStatus(t, he.get(he.smtp.link(t)), http.StatusFound)
		if e, want := take(), []string{"updateUser:verified", "linkAccount:email", "signIn:email:old"}; !slices.Equal(e, want) {
			t.Errorf("e-mail sign-in: events %v, want %v", e, want)
		}
		he.post("/auth/signout", url.Values{"csrfToken": {he.csrf()}})
		take()
		wantStatus(t, he.signInPasskey(), http.StatusSeeOther)
		if e, want := take(), []string{"signIn:passkey:old"}; !slices.Equal(e, want) {
			t.Errorf("passkey sign-in: events %v, want %v", e, want)
		}
	})
}

// holdsProviderToken reports whether an event (ev, whose account is acc)
// carries an OAuth provider's token: a token field of the account set, or
// the fake provider's access token ("at-…") anywhere in the event's JSON,
// which unlike %+v follows pointers.
func holdsProviderToken(acc *core.Account, ev any) bool {
	if acc != nil && (acc.AccessToken != nil || acc.RefreshToken != nil || acc.IDToken != nil || acc.PasswordHash != nil) {
		return true
	}
	b, err := json.Marshal(ev)
	return err != nil || bytes.Contains(b, []byte(`"at-`))
}

// An event that fails or panics never fails the sign-in: its error goes to
// the logger.
func TestFailingEventsDoNotFailSignIn(t *testing.T) {
	for _, strategy := range hookStrategies {
		fail := func(context.Context, core.User) error { return errors.New("audit log down") }
		he := newHookEnv(t, hookStores[0].open, strategy, func(c *auth.Config) {
			c.Events = auth.Events{
				CreateUser:  fail,
				LinkAccount: func(context.Context, auth.LinkAccountEvent) error { panic("provisioning bug") },
				SignIn:      func(context.Context, auth.SignInEvent) error { return errors.New("audit log down") },
				Session:     func(context.Context, auth.SessionEvent) error { return errors.New("metrics down") },
			}
		})
		res := fakeSignIn(t, he.idp, he.env, "idp", map[string]any{"id": "gh-1", "email": "octo@example.com"})
		wantStatus(t, res, http.StatusFound)
		if u, _ := he.session()["user"].(map[string]any); u == nil || u["email"] != "octo@example.com" {
			t.Errorf("%s: not signed in after failing events", strategy)
		}
		logs := he.logs.String()
		for _, want := range []string{"event=createUser", "event=linkAccount", "provisioning bug", "event=signIn", "event=session"} {
			if !strings.Contains(logs, want) {
				t.Errorf("%s: the log lacks %q:\n%s", strategy, want, logs)
			}
		}
	}
}

// Claims the JWT callback adds are decoded by Auth.js's @auth/core, and
// claims an Auth.js jwt callback added (a token Auth.js encoded) are seen by
// the handler's Reader and handed to the JWT and Session callbacks.
func TestJWTCallbackClaimsInteropWithAuthjs(t *testing.T) {
	var refreshed map[string]any
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, authConfig: func(c *auth.Config) {
		c.Callbacks.JWT = func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
			switch p.Trigger {
			case auth.JWTSignIn, auth.JWTSignUp:
				p.Token["role"] = "admin"
				p.Token["tenant"] = map[string]any{"id": "t-42", "plan": "pro"}
			case auth.JWTRefresh:
				refreshed = p.Token
			}
			return p.Token, nil
		}
		c.Callbacks.Session = func(_ context.Context, p auth.SessionParams) (map[string]any, error) {
			p.Session["role"] = p.Token["role"]
			return p.Session, nil
		}
	}})
	c := setCookie(e.signInCredentials("ada", "lovelace", nil), "authjs.session-token")
	if c == nil {
		t.Fatal("no session cookie")
	}
	got := authjs(t, jwttest.Request{Op: "decode", Secret: secret, Salt: "authjs.session-token", Token: c.Value})[0].Claims
	tenant, _ := got["tenant"].(map[string]any)
	if got["role"] != "admin" || tenant["id"] != "t-42" || got["sub"] != "user-ada" {
		t.Errorf("Auth.js decoded %v, want the JWT callback's role and tenant", got)
	}

	// A token an Auth.js app's jwt callback shaped.
	maxAge := 3600
	minted := authjs(t, jwttest.Request{Op: "encode", Secret: secret, Salt: "authjs.session-token", MaxAge: &maxAge,
		Claims: map[string]any{"sub": "user-grace", "email": "grace@example.com", "role": "editor", "orgs": []any{"a", "b"}}})[0].Token
	s, err := e.h.Session(requestWith(&http.Cookie{Name: "authjs.session-token", Value: minted}))
	if err != nil || s == nil || s.Claims["role"] != "editor" || len(s.Claims["orgs"].([]any)) != 2 {
		t.Fatalf("the Reader read %+v, %v; want Auth.js's added claims", s, err)
	}
	fresh := e.newClient()
	u, _ := url.Parse(e.srv.URL)
	fresh.Jar.SetCookies(u, []*http.Cookie{{Name: "authjs.session-token", Value: minted, Path: "/"}})
	req, _ := http.NewRequest(http.MethodGet, e.abs("/auth/session"), nil)
	res := e.do(fresh, req)
	if !strings.Contains(res.body, `"role":"editor"`) || refreshed["role"] != "editor" {
		t.Errorf("GET /session with Auth.js's token: %s (JWT callback saw %v), want its role", res.body, refreshed)
	}
}

// A JWT callback that returns no claims on a read ends the session: null,
// and the cookie is cleared (a revoked user, say).
func TestJWTCallbackEndsSession(t *testing.T) {
	var mu sync.Mutex
	revoked := false
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, authConfig: func(c *auth.Config) {
		c.Callbacks.JWT = func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
			mu.Lock()
			defer mu.Unlock()
			if revoked && p.Trigger == auth.JWTRefresh {
				return nil, nil
			}
			return p.Token, nil
		}
	}})
	e.signInCredentials("ada", "lovelace", nil)
	if u, _ := e.session()["user"].(map[string]any); u == nil {
		t.Fatal("not signed in")
	}
	mu.Lock()
	revoked = true
	mu.Unlock()
	res := e.get("/auth/session")
	if strings.TrimSpace(res.body) != "null" {
		t.Errorf("GET /session after the JWT callback ended it: %s", res.body)
	}
	if c := setCookie(res, "authjs.session-token"); c == nil || c.MaxAge >= 0 {
		t.Errorf("the session cookie was not cleared: %v", res.Header["Set-Cookie"])
	}
}
