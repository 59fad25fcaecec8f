package handler_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/oauth/oauthtest"
)

// dropsCookie reports whether the response tells the browser to drop the
// cookie.
func dropsCookie(res response, name string) bool {
	c := setCookie(res, name)
	return c != nil && c.MaxAge < 0
}

// OAuth sign-in over HTTP: the sign-in sets the check cookies, the
// callback drops every one it is sent, signs in, and refuses the same
// callback brought back with the same cookies (OAuthCallbackError); a
// callback whose state cookie was altered is refused with its reason in
// the log, drops the cookies and stores nothing.
func TestOAuthCheckCookiesOverHTTP(t *testing.T) {
	fake := oauthtest.StartFake(t)
	fake.SetProfile(map[string]any{"id": "ada", "email": "ada@example.com"})
	logs := &coretest.SyncBuffer{}
	e := newEnv(t, envOpts{
		providers: func(*testing.T, string) []provider.Provider {
			p := fake.Provider("fake")
			p.Checks = provider.Checks{provider.CheckPKCE, provider.CheckState}
			return []provider.Provider{p}
		},
		authConfig: func(c *auth.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) },
	})
	names := []string{"authjs.pkce.code_verifier", "authjs.state"}

	// signIn posts the sign-in, follows the fake's consent and returns
	// the callback URL and the check cookies set.
	signIn := func() (string, []*http.Cookie) {
		t.Helper()
		res := e.post("/auth/signin/fake", url.Values{"csrfToken": {e.csrf()}})
		wantStatus(t, res, http.StatusSeeOther)
		var set []*http.Cookie
		for _, n := range names {
			c := setCookie(res, n)
			if c == nil || c.MaxAge != 900 {
				t.Fatalf("sign-in set %s as %+v; Set-Cookie %v", n, c, res.Header["Set-Cookie"])
			}
			set = append(set, c)
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		r, err := noRedirect.Get(res.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		return r.Header.Get("Location"), set
	}
	// callback brings back the callback URL with exactly cookies, in a
	// browser of its own.
	callback := func(back string, cookies []*http.Cookie) response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, back, nil)
		for _, c := range cookies {
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
		return e.do(e.newClient(), req)
	}

	back, cookies := signIn()
	res := callback(back, cookies)
	wantStatus(t, res, http.StatusFound)
	if setCookie(res, "authjs.session-token") == nil {
		t.Fatalf("no session after the callback: %v", res.Header["Set-Cookie"])
	}
	for _, n := range names {
		if !dropsCookie(res, n) {
			t.Errorf("the callback did not drop %s: %v", n, res.Header["Set-Cookie"])
		}
	}
	// A captured callback with the victim's cookies: used already.
	res = callback(back, cookies)
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthCallbackError")
	for _, n := range names {
		if !dropsCookie(res, n) {
			t.Errorf("the refused replay did not drop %s", n)
		}
	}

	before := e.store.Snapshot()
	back, cookies = signIn()
	cookies[1].Value = cookies[1].Value[:len(cookies[1].Value)-4] + "AAAA"
	res = callback(back, cookies)
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthCallbackError")
	for _, n := range names {
		if !dropsCookie(res, n) {
			t.Errorf("the refused callback did not drop %s", n)
		}
	}
	if !strings.Contains(logs.String(), "authjs.state cookie cannot be opened") || !strings.Contains(logs.String(), "state missing") {
		t.Errorf("the log does not say the state cookie would not open:\n%s", logs.String())
	}
	if after := e.store.Snapshot(); len(after.Sessions) != len(before.Sessions) || len(after.Users) != 1 {
		t.Errorf("a refused callback stored %+v", after)
	}
}

// A form_post callback with an endless body is refused
// (OAuthCallbackError), read no further than its bound.
func TestOAuthCallbackEndlessForm(t *testing.T) {
	fake := oauthtest.StartFake(t)
	e := newEnv(t, envOpts{providers: func(*testing.T, string) []provider.Provider {
		return []provider.Provider{fake.Provider("fake")}
	}})
	req := httptest.NewRequest(http.MethodPost, "/auth/callback/fake", &endless{})
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	loc, _ := url.Parse(w.Header().Get("Location"))
	if w.Code != http.StatusSeeOther || loc == nil || loc.Query().Get("error") != "OAuthCallbackError" {
		t.Errorf("endless form body: %d %s", w.Code, w.Header().Get("Location"))
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// A sign-in the flow refuses to start (its discovery fails, an
// authorization parameter cannot be sent) goes to the sign-in page with
// OAuthSignin, and sets no check cookie.
func TestOAuthSigninRefusals(t *testing.T) {
	fake := oauthtest.StartFake(t)
	e := newEnv(t, envOpts{providers: func(*testing.T, string) []provider.Provider {
		p := &provider.OIDCConfig[map[string]any]{}
		p.ID, p.Name, p.Issuer, p.ClientID, p.ClientSecret = "idp", "IdP", "http://127.0.0.1:1", "client", "secret"
		return []provider.Provider{p, fake.Provider("fake")}
	}})
	for _, target := range []string{"/auth/signin/idp", "/auth/signin/fake?login_hint=" + url.QueryEscape("a\x01b")} {
		res := e.post(target, url.Values{"csrfToken": {e.csrf()}})
		wantLocation(t, e, res, "/auth/signin", "error", "OAuthSignin")
		for _, c := range res.Cookies() {
			if strings.Contains(c.Name, "pkce") || strings.Contains(c.Name, "state") || strings.Contains(c.Name, "nonce") {
				t.Errorf("%s: a refused sign-in set %s", target, c.Name)
			}
		}
	}
}

// FuzzOAuthCallback sends arbitrary callback queries, form bodies and
// check cookies to the handler: it refuses them (OAuthCallbackError on the
// sign-in page), never panics nor answers 500, drops the check cookie it
// was sent, and stores nothing.
func FuzzOAuthCallback(f *testing.F) {
	f.Add("code=abc&state=xyz", "", "authjs.state", "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0..a.b.c")
	f.Add("error=access_denied&state=s", "", "authjs.nonce", "%%%")
	f.Add("", "code=1&user=%7B%22name%22%3A1%7D", "authjs.pkce.code_verifier", "")
	f.Add("code=%00&state=%ff", "state=a&state=b", "authjs.state", strings.Repeat("A", 5000))
	store := memory.New()
	p := &provider.OIDCConfig[map[string]any]{}
	p.ID, p.Name, p.Issuer, p.ClientID, p.ClientSecret = "idp", "IdP", "https://idp.example", "client", "client-secret"
	p.Authorization = provider.Endpoint{URL: "https://idp.example/authorize"}
	p.Token = provider.TokenEndpoint{URL: "https://idp.example/token"}
	p.Userinfo = provider.UserinfoEndpoint[map[string]any]{URL: "https://idp.example/userinfo"}
	p.JWKSEndpoint = "https://idp.example/jwks"
	p.Checks = provider.Checks{provider.CheckPKCE, provider.CheckState, provider.CheckNonce}
	a, err := auth.New(auth.Config{Adapter: store, Providers: []provider.Provider{p}, Secrets: []string{secret}, BaseURL: "http://app.example/auth"})
	if err != nil {
		f.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query, form, cookieName, cookieValue string) {
		method, body := http.MethodGet, ""
		if form != "" {
			method, body = http.MethodPost, form
		}
		r := httptest.NewRequestWithContext(context.Background(), method, "http://app.example/auth/callback/idp", strings.NewReader(body))
		r.URL.RawQuery = query
		if method == http.MethodPost {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		r.Header.Set("Cookie", cookieName+"="+cookieValue)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		loc, _ := url.Parse(w.Header().Get("Location"))
		if (w.Code != http.StatusFound && w.Code != http.StatusSeeOther) || loc == nil || loc.Path != "/auth/signin" || loc.Query().Get("error") != "OAuthCallbackError" {
			t.Fatalf("callback %.100q %.100q with %.100s=%.100q: %d %s", query, form, cookieName, cookieValue, w.Code, w.Header().Get("Location"))
		}
		// The check cookies are these three names (on http): a name that
		// only ends like one (authjs.code_verifier) is no check cookie.
		checkCookie := cookieName == "authjs.state" || cookieName == "authjs.nonce" || cookieName == "authjs.pkce.code_verifier"
		if _, err := r.Cookie(cookieName); err == nil && checkCookie {
			dropped := false
			for _, c := range w.Result().Cookies() {
				dropped = dropped || (c.Name == cookieName && c.MaxAge < 0)
			}
			if !dropped {
				t.Errorf("check cookie %s not dropped", cookieName)
			}
		}
		if snap := store.Snapshot(); len(snap.Users)+len(snap.Sessions) != 0 {
			t.Fatalf("stored %+v", snap)
		}
	})
}
