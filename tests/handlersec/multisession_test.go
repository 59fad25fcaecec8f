package handlersec

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
)

// account is one entry of GET /auth/accounts.
type account struct {
	ID     string
	Active bool
	User   struct{ Email string }
}

// accounts is GET /auth/accounts in the current browser.
func (app *hookApp) accounts() []account {
	app.t.Helper()
	res := app.do("GET", "/auth/accounts", nil)
	var list []account
	if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(res.body), &list) != nil {
		app.t.Fatalf("GET /auth/accounts = %d %s; want 200 and a list", res.StatusCode, res.body)
	}
	return list
}

// emails returns the accounts' addresses, the active one marked with "*".
func emails(list []account) string {
	var out []string
	for _, a := range list {
		out = append(out, map[bool]string{true: "*"}[a.Active]+a.User.Email)
	}
	return strings.Join(out, " ")
}

// TestMultiSessionOnStores signs three accounts into one browser (the cap)
// on each store with database sessions: add, list, switch, the cap,
// signing one out (the active one: the next takes over), the session
// cookie always holding the active session so that GET /auth/session reads
// it, an id of another browser's session refused, and POST /auth/signout
// ending them all. With JWT sessions the routes answer 404 saying why.
func TestMultiSessionOnStores(t *testing.T) {
	forStores(t, func(t *testing.T, store core.Adapter, strategy auth.Strategy) {
		app := newHookApp(t, store, strategy, func(*auth.Config) {})
		app.remount(handler.Config{MultiSession: 3})
		signIn := func(who string) {
			t.Helper()
			app.signInOAuth(map[string]any{"id": "gh-" + who, "email": who + "@example.com"})
		}
		activeEmail := func() string {
			t.Helper()
			s := app.session()
			if s == nil {
				return ""
			}
			return s["user"].(map[string]any)["email"].(string)
		}
		signIn("ada")
		if strategy == auth.StrategyJWT {
			res := app.do("GET", "/auth/accounts", nil)
			if res.StatusCode != http.StatusNotFound || !strings.Contains(res.body, "database sessions") {
				t.Errorf("GET /auth/accounts with JWT sessions = %d %s; want 404 saying it needs database sessions", res.StatusCode, res.body)
			}
			return
		}
		for _, who := range []string{"bob", "cy"} {
			if v := app.postAPI("/auth/accounts/add", ""); v["ok"] != true {
				t.Fatalf("add = %v", v)
			}
			if got := activeEmail(); got != "" {
				t.Fatalf("after add the browser is still signed in as %q; want signed out until the next sign-in", got)
			}
			signIn(who)
		}
		if got := emails(app.accounts()); got != "*cy@example.com bob@example.com ada@example.com" {
			t.Fatalf("accounts = %q; want cy active, then bob and ada", got)
		}
		// The cap: a fourth is refused, nothing changes.
		if res := app.do("POST", "/auth/accounts/add", map[string][]string{"csrfToken": {app.csrf()}}); res.StatusCode != http.StatusConflict {
			t.Errorf("a fourth add = %d %s; want 409", res.StatusCode, res.body)
		}
		// Switch to ada: GET /auth/session reads her session.
		list := app.accounts()
		if v := app.postAPI("/auth/accounts/switch", list[2].ID); v["switched"] != true {
			t.Fatalf("switch = %v", v)
		}
		if got := activeEmail(); got != "ada@example.com" {
			t.Errorf("the active session after switching to ada is %q", got)
		}
		// Another browser's session id is refused and changes nothing.
		other := app.client
		app.browser("curl/8.11", "")
		signIn("eve")
		eve := app.accounts()[0].ID
		app.client = other
		if v := app.postAPI("/auth/accounts/switch", eve); v["switched"] != false {
			t.Errorf("switching to another browser's session = %v; want false", v)
		}
		if v := app.postAPI("/auth/accounts/sign-out", eve); v["signedOut"] != false {
			t.Errorf("signing out another browser's session = %v; want false", v)
		}
		// Sign the active one (ada) out: the newest other takes over.
		list = app.accounts()
		if v := app.postAPI("/auth/accounts/sign-out", list[0].ID); v["signedOut"] != true {
			t.Fatalf("sign-out = %v", v)
		}
		if got := emails(app.accounts()); got != "*cy@example.com bob@example.com" {
			t.Errorf("accounts after ada signed out = %q; want cy active, then bob", got)
		}
		// POST /auth/signout ends every session of the browser.
		app.do("POST", "/auth/signout", map[string][]string{"csrfToken": {app.csrf()}})
		if got := activeEmail(); got != "" {
			t.Errorf("after sign-out the browser is signed in as %q", got)
		}
		if got := app.accounts(); len(got) != 0 {
			t.Errorf("accounts after sign-out = %q; want none", emails(got))
		}
		for _, who := range []string{"ada", "bob", "cy"} {
			u, err := app.checked.GetUserByEmail(app.t.Context(), who+"@example.com")
			if err != nil || u == nil {
				t.Fatalf("user %s: %v, %v", who, u, err)
			}
			if ss, err := app.checked.ListSessionsByUserID(app.t.Context(), u.ID); err != nil || len(ss) != 0 {
				t.Errorf("%s's sessions after the browser signed out = %d, %v; want none", who, len(ss), err)
			}
		}
	})
}
