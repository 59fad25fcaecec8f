package handler_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/jwt/jwttest"
)

type appReq struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Cookie string `json:"cookie,omitempty"`
	Body   string `json:"body,omitempty"`
}

type appRes struct {
	Status     int
	Location   string
	SetCookies []string
	Body       string
}

// authjsApp runs requests through Auth.js's own Auth() (testdata/authjs-app.mjs).
func authjsApp(t *testing.T, reqs ...appReq) []appRes {
	t.Helper()
	var res []appRes
	jwttest.RunNode(t, "", filepath.Join("testdata", "authjs-app.mjs"), filepath.Join(jwttest.AuthCore(), "index.js"),
		map[string]any{"secret": secret, "requests": reqs}, &res)
	if len(res) != len(reqs) {
		t.Fatalf("authjs-app.mjs answered %d responses to %d requests", len(res), len(reqs))
	}
	return res
}

// cookieOf returns name=value of a Set-Cookie line for name, or "".
func cookieOf(setCookies []string, name string) string {
	for _, sc := range setCookies {
		if nv, _, _ := strings.Cut(sc, ";"); strings.HasPrefix(nv, name+"=") {
			return nv
		}
	}
	return ""
}

// The handler and an Auth.js app with the same secret accept each other's
// CSRF cookies and session cookies, and answer /session alike.
func TestAuthjsAppInterop(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	const app = "http://localhost:3000/auth"

	// Auth.js's CSRF cookie and token sign in with the handler.
	res := authjsApp(t, appReq{Method: "GET", URL: app + "/csrf"})[0]
	var body struct{ CSRFToken string }
	json.Unmarshal([]byte(res.Body), &body)
	csrfCookie := cookieOf(res.SetCookies, "authjs.csrf-token")
	if body.CSRFToken == "" || csrfCookie == "" {
		t.Fatalf("Auth.js /csrf: %+v", res)
	}
	c := e.newClient()
	req, _ := http.NewRequest("POST", e.base+"/callback/credentials",
		strings.NewReader(url.Values{"csrfToken": {body.CSRFToken}, "username": {"ada"}, "password": {"lovelace"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", csrfCookie)
	ours := e.do(c, req)
	if ours.StatusCode != http.StatusSeeOther || setCookie(ours, "authjs.session-token") == nil {
		t.Fatalf("handler refused Auth.js's CSRF cookie %s: %d %s", csrfCookie, ours.StatusCode, ours.Header.Get("Location"))
	}
	ourSession := setCookie(ours, "authjs.session-token")

	// The handler's CSRF cookie and token sign in with Auth.js.
	token := e.csrf()
	u, _ := url.Parse(e.srv.URL)
	var ourCSRF string
	for _, ck := range e.client.Jar.Cookies(u) {
		if ck.Name == "authjs.csrf-token" {
			ourCSRF = ck.Name + "=" + ck.Value
		}
	}
	form := url.Values{"csrfToken": {token}, "username": {"ada"}, "password": {"lovelace"}}.Encode()
	out := authjsApp(t,
		appReq{Method: "POST", URL: app + "/callback/credentials", Cookie: ourCSRF, Body: form},
		appReq{Method: "GET", URL: app + "/session", Cookie: ourSession.Name + "=" + ourSession.Value},
		appReq{Method: "GET", URL: app + "/providers"},
		appReq{Method: "GET", URL: app + "/session"},
	)
	// /providers: the same JSON, but for the host.
	if want, got := strings.ReplaceAll(out[2].Body, "http://localhost:3000", e.srv.URL), e.get("/auth/providers").body; got != want {
		t.Errorf("/providers: handler %s, Auth.js %s", got, want)
	}
	// Failures go where Auth.js sends them: a wrong password, a missing
	// CSRF token.
	fails := authjsApp(t,
		appReq{Method: "POST", URL: app + "/callback/credentials", Cookie: ourCSRF,
			Body: url.Values{"csrfToken": {token}, "username": {"ada"}, "password": {"wrong"}}.Encode()},
		appReq{Method: "POST", URL: app + "/callback/credentials", Body: url.Values{"username": {"ada"}, "password": {"lovelace"}}.Encode()},
	)
	for i, ourRes := range []response{
		e.signInCredentials("ada", "wrong", nil),
		e.post("/auth/callback/credentials", url.Values{"username": {"ada"}, "password": {"lovelace"}}),
	} {
		theirLoc, _ := url.Parse(fails[i].Location)
		ourLoc, _ := url.Parse(ourRes.Header.Get("Location"))
		if theirLoc == nil || ourLoc == nil || theirLoc.Path != ourLoc.Path || theirLoc.Query().Get("error") != ourLoc.Query().Get("error") ||
			theirLoc.Query().Get("code") != ourLoc.Query().Get("code") {
			t.Errorf("failure %d: Auth.js redirects to %q, the handler to %q", i, fails[i].Location, ourRes.Header.Get("Location"))
		}
	}
	// Signed out: both answer null.
	if got := e.newClientSession(); out[3].Body != "null" || got != "null" {
		t.Errorf("signed-out /session: Auth.js %s, handler %s", out[3].Body, got)
	}
	if strings.Contains(out[0].Location, "error=") || cookieOf(out[0].SetCookies, "authjs.session-token") == "" {
		t.Fatalf("Auth.js refused the handler's CSRF cookie: %d %s %v", out[0].Status, out[0].Location, out[0].SetCookies)
	}
	// Auth.js reads the handler's session cookie.
	var theirs, mine map[string]any
	json.Unmarshal([]byte(out[1].Body), &theirs)
	if u, _ := theirs["user"].(map[string]any); u == nil || u["email"] != "ada@example.com" || u["name"] != "Ada Lovelace" {
		t.Errorf("Auth.js /session on the handler's cookie: %s", out[1].Body)
	}
	// The handler reads Auth.js's session cookie, and answers as Auth.js does.
	authjsSession := cookieOf(out[0].SetCookies, "authjs.session-token")
	req, _ = http.NewRequest("GET", e.base+"/session", nil)
	req.Header.Set("Cookie", authjsSession)
	got := e.do(e.newClient(), req)
	json.Unmarshal([]byte(got.body), &mine)
	delete(theirs, "expires")
	delete(mine, "expires")
	a, _ := json.Marshal(theirs)
	b, _ := json.Marshal(mine)
	if string(a) != string(b) {
		t.Errorf("/session differs: Auth.js %s, handler %s", a, b)
	}
}
