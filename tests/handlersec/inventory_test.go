package handlersec

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
)

// headers adds fixed headers to every request: a browser's User-Agent, and
// the X-Forwarded-For a trusted proxy in front would add.
type headers struct {
	base http.RoundTripper
	set  map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.set {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// browser switches app to a new browser (its own cookie jar) that sends
// the User-Agent and, through the trusted proxy, the client address.
func (app *hookApp) browser(userAgent, forwardedFor string) *http.Client {
	jar, _ := cookiejar.New(nil)
	app.client = &http.Client{Jar: jar, CheckRedirect: app.client.CheckRedirect,
		Transport: headers{http.DefaultTransport, map[string]string{"User-Agent": userAgent, "X-Forwarded-For": forwardedFor}}}
	return app.client
}

// remount serves app through a new handler configured by cfg (its Auth and
// Passkeys are app's).
func (app *hookApp) remount(cfg handler.Config) {
	app.t.Helper()
	cfg.Auth, cfg.Passkeys = app.a, &hookPasskeys{a: app.a}
	h, err := handler.New(cfg)
	if err != nil {
		app.t.Fatal(err)
	}
	app.h = h
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	app.srv.Config.Handler = mux
}

// inventory is GET /auth/sessions in the current browser.
func (app *hookApp) inventory() []auth.SessionInfo {
	app.t.Helper()
	res := app.do("GET", "/auth/sessions", nil)
	var list []auth.SessionInfo
	if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(res.body), &list) != nil {
		app.t.Fatalf("GET /auth/sessions = %d %s; want 200 and a list", res.StatusCode, res.body)
	}
	return list
}

// revoke posts /auth/sessions/{action} in the current browser and returns
// the count or flag revoked.
func (app *hookApp) revoke(action, id string) any {
	app.t.Helper()
	return app.postAPI("/auth/sessions/"+action, id)["revoked"]
}

// postAPI posts the CSRF token and the id to a JSON route of the handler
// in the current browser, and returns the JSON object it answered 200.
func (app *hookApp) postAPI(path, id string) map[string]any {
	app.t.Helper()
	res := app.do("POST", path, url.Values{"csrfToken": {app.csrf()}, "id": {id}})
	var v map[string]any
	if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(res.body), &v) != nil {
		app.t.Fatalf("POST %s = %d %s; want 200 and an object", path, res.StatusCode, res.body)
	}
	return v
}

// TestSessionInventoryOnStores drives every route of the session
// inventory on each real store: two browsers of one user and one of
// another, through the OAuth sign-in behind a trusted proxy; list (the
// current session marked, the client recorded where the store keeps it, no
// token shown), revoke another user's session (refused, nothing changes),
// a POST without its CSRF token (refused), revoke the others, revoke one,
// revoke all. With JWT sessions, which are not stored, the routes answer
// 404 saying why.
func TestSessionInventoryOnStores(t *testing.T) {
	forStores(t, func(t *testing.T, store core.Adapter, strategy auth.Strategy) {
		app := newHookApp(t, store, strategy, func(*auth.Config) {})
		app.remount(handler.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
		ada := map[string]any{"id": "gh-ada", "email": "ada@example.com"}

		laptop := app.browser("Mozilla/5.0 (X11; Linux x86_64) Firefox/145.0", "198.51.100.7")
		app.signInOAuth(ada)
		if strategy == auth.StrategyJWT {
			res := app.do("GET", "/auth/sessions", nil)
			if res.StatusCode != http.StatusNotFound || !strings.Contains(res.body, "database sessions") {
				t.Errorf("GET /auth/sessions with JWT sessions = %d %s; want 404 saying it needs database sessions", res.StatusCode, res.body)
			}
			return
		}
		phone := app.browser("Mozilla/5.0 (iPhone; CPU iPhone OS 19_0)", "2001:db8:1:2::9")
		app.signInOAuth(ada)
		other := app.browser("curl/8.11", "203.0.113.5")
		app.signInOAuth(map[string]any{"id": "gh-eve", "email": "eve@example.com"})
		eveSessions := app.inventory()
		if len(eveSessions) != 1 {
			t.Fatalf("the other user's sessions = %+v; want 1", eveSessions)
		}

		app.client = laptop
		list := app.inventory()
		if len(list) != 2 || list[0].Current == list[1].Current {
			t.Fatalf("the laptop's list = %+v; want 2 sessions, one current", list)
		}
		current, theirs := list[0], list[1]
		if !current.Current {
			current, theirs = theirs, current
		}
		res := app.do("GET", "/auth/sessions", nil)
		for _, c := range laptop.Jar.Cookies(mustURL(t, app.srv.URL)) {
			if strings.Contains(c.Name, "session-token") && strings.Contains(res.body, c.Value) {
				t.Errorf("GET /auth/sessions shows the session token: %s", res.body)
			}
		}
		if core.KeepsSessionMetadata(store) {
			if current.IPAddress != "198.51.100.7" || !strings.Contains(current.UserAgent, "Firefox") || current.CreatedAt.IsZero() ||
				theirs.IPAddress != "2001:db8:1:2::9" || !strings.Contains(theirs.UserAgent, "iPhone") {
				t.Errorf("the list = %+v; want each session's client (behind the trusted proxy) and sign-in time", list)
			}
		}

		// Another user's session id, a POST without the CSRF token and a
		// GET without a session change nothing.
		if got := app.revoke("revoke", eveSessions[0].ID); got != false {
			t.Errorf("revoking another user's session = %v; want false", got)
		}
		if res := app.do("POST", "/auth/sessions/revoke-all", url.Values{"id": {theirs.ID}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("POST without the CSRF token = %d %s; want 403", res.StatusCode, res.body)
		}
		app.browser("curl/8.11", "")
		if res := app.do("GET", "/auth/sessions", nil); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /auth/sessions without a session = %d %s; want 401", res.StatusCode, res.body)
		}
		app.client = other
		if app.session() == nil {
			t.Fatal("the other user was signed out by a refused revocation")
		}
		app.client = laptop
		if len(app.inventory()) != 2 {
			t.Fatal("a refused request changed the laptop's sessions")
		}

		// Revoke the others: the phone is signed out, the laptop not.
		if got := app.revoke("revoke-others", ""); got != float64(1) {
			t.Errorf("revoke-others = %v; want 1", got)
		}
		app.client = phone
		if s := app.session(); s != nil {
			t.Errorf("the phone's session after revoke-others = %v; want none", s)
		}
		app.signInOAuth(ada)
		app.client = laptop
		if app.session() == nil {
			t.Fatal("revoke-others signed the laptop out")
		}

		// Revoke one by id (as JSON), then all.
		list = app.inventory()
		var phoneID string
		for _, si := range list {
			if !si.Current {
				phoneID = si.ID
			}
		}
		body, _ := json.Marshal(map[string]string{"csrfToken": app.csrf(), "id": phoneID})
		req, _ := http.NewRequest("POST", app.srv.URL+"/auth/sessions/revoke", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		r, err := app.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Revoked bool }
		if err := decodeJSON(r, &v); err != nil || !v.Revoked {
			t.Errorf("revoke by JSON = %+v, %v; want revoked", v, err)
		}
		app.client = phone
		if s := app.session(); s != nil {
			t.Errorf("the phone's session after it was revoked = %v; want none", s)
		}
		app.client = laptop
		if got := app.revoke("revoke-all", ""); got != float64(1) {
			t.Errorf("revoke-all = %v; want 1", got)
		}
		if s := app.session(); s != nil {
			t.Errorf("the laptop's session after revoke-all = %v; want none", s)
		}
		app.client = other
		if app.session() == nil {
			t.Error("revoke-all of one user signed another out")
		}
	})
}

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
