package handler_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
)

var foreignTargets = []string{
	"https://evil.example/",
	"//evil.example/x",
	"///evil.example",
	"/\\evil.example",
	"\\\\evil.example",
	"/\t/evil.example",
	"javascript:alert(1)",
	"JavaScript:alert(1)",
	"data:text/html,<script>alert(1)</script>",
	"http://127.0.0.1.evil.example/",
	"http://user@evil.example/",
	"evil.example",
	"http:evil.example",
	"https:/\\evil.example",
	" //evil.example",
	"%2F%2Fevil.example",
	"/%0d%0aLocation:%20http://evil.example",
	"/\r\nSet-Cookie: x=y",
}

func TestSafeRedirect(t *testing.T) {
	const origin = "http://app.example:8080"
	for raw, want := range map[string]string{
		"/":                         "http://app.example:8080/",
		"/a/b?c=d#e":                "http://app.example:8080/a/b?c=d#e",
		"http://app.example:8080":   "http://app.example:8080/",
		"http://APP.example:8080/x": "http://app.example:8080/x",
		"/@evil.example":            "http://app.example:8080/@evil.example",
	} {
		got, ok := handler.SafeRedirect(raw, origin)
		if !ok || got != want {
			t.Errorf("SafeRedirect(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range append(foreignTargets, "", "https://app.example:8080/", "http://app.example/", "http://app.example:8080@evil.example/") {
		got, ok := handler.SafeRedirect(raw, origin)
		if ok && !strings.HasPrefix(got, origin+"/") {
			t.Errorf("SafeRedirect(%q) = %q, accepted", raw, got)
		}
		if ok {
			u, err := url.Parse(got)
			if err != nil || u.Host != "app.example:8080" {
				t.Errorf("SafeRedirect(%q) = %q, leaves the origin", raw, got)
			}
		}
	}
	for _, raw := range []string{"https://evil.example/", "javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x",
		"http://user@evil.example/", "evil.example", "//evil.example", "///evil.example", "http:evil.example", "/\\evil.example", "/\t/evil.example", "https://app.example:8080/"} {
		if got, ok := handler.SafeRedirect(raw, origin); ok {
			t.Errorf("SafeRedirect(%q) = %q, want refused", raw, got)
		}
	}
	if _, ok := handler.SafeRedirect("/x", "not an origin"); ok {
		t.Error("accepted with an invalid origin")
	}
}

// No route redirects off the site, whatever the callbackUrl in the query,
// the form or the cookie.
func TestNoOpenRedirect(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	u, _ := url.Parse(e.srv.URL)
	check := func(what string, res response) {
		t.Helper()
		loc := res.Header.Get("Location")
		if loc == "" {
			t.Fatalf("%s: no redirect (%d %s)", what, res.StatusCode, res.body)
		}
		l, err := url.Parse(loc)
		if err != nil || l.Scheme+"://"+l.Host != e.srv.URL {
			t.Errorf("%s: redirected to %q, off %s", what, loc, e.srv.URL)
		}
	}
	for _, target := range foreignTargets {
		// In the form of a sign-in.
		check("credentials callbackUrl "+target, e.signInCredentials("ada", "lovelace", url.Values{"callbackUrl": {target}}))
		// In the form of a sign-out.
		check("signout callbackUrl "+target, e.post("/auth/signout", url.Values{"csrfToken": {e.csrf()}, "callbackUrl": {target}}))
		// In the query of the sign-in page, then kept in the cookie.
		page := e.get("/auth/signin?callbackUrl=" + url.QueryEscape(target))
		if c := setCookie(page, "authjs.callback-url"); c != nil && !strings.HasPrefix(unescape(c.Value), e.srv.URL+"/") {
			t.Errorf("sign-in page with callbackUrl %q set the cookie to %q", target, c.Value)
		}
		if strings.Contains(page.body, `value="`+target) && !strings.HasPrefix(target, "/") {
			t.Errorf("sign-in page carries callbackUrl %q into its forms", target)
		}
		// Planted in the cookie itself.
		e.client.Jar.SetCookies(u, []*http.Cookie{{Name: "authjs.callback-url", Value: url.QueryEscape(target), Path: "/"}})
		check("cookie "+target, e.signInCredentials("ada", "lovelace", nil))
	}
}

func FuzzSafeRedirect(f *testing.F) {
	for _, s := range foreignTargets {
		f.Add(s)
	}
	f.Add("/ok?x=1#y")
	f.Add("http://app.example:8080/x")
	const origin = "http://app.example:8080"
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := handler.SafeRedirect(raw, origin)
		if !ok {
			if got != "" {
				t.Fatalf("refused %q but returned %q", raw, got)
			}
			return
		}
		if !strings.HasPrefix(got, origin+"/") {
			t.Fatalf("SafeRedirect(%q) = %q: not under the origin", raw, got)
		}
		for _, c := range []byte(got) {
			if c <= 0x20 || c >= 0x7f || c == '\\' {
				t.Fatalf("SafeRedirect(%q) = %q: holds %q, which browsers may reinterpret", raw, got, c)
			}
		}
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "http" || u.Host != "app.example:8080" || u.User != nil {
			t.Fatalf("SafeRedirect(%q) = %q: parses to another origin (%v)", raw, got, err)
		}
		// Idempotent: a checked URL passes again unchanged.
		if again, ok := handler.SafeRedirect(got, origin); !ok || again != got {
			t.Fatalf("SafeRedirect(%q) = %q, then %q, %v", raw, got, again, ok)
		}
	})
}

// The request's Host and X-Forwarded-* headers never choose where a
// redirect goes: relative callbackUrls resolve against the configured
// BaseURL's origin, and an absolute one naming the forged host is refused.
func TestRedirectIgnoresHostHeaders(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	forge := func(req *http.Request) {
		req.Host = "evil.example"
		req.Header.Set("X-Forwarded-Host", "evil.example")
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("Forwarded", "host=evil.example;proto=https")
	}
	for _, target := range []string{"/dashboard", "http://evil.example/dashboard", "https://evil.example/"} {
		token := e.csrf()
		form := url.Values{"csrfToken": {token}, "callbackUrl": {target}}
		req, _ := http.NewRequest("POST", e.srv.URL+"/auth/signout", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		forge(req)
		res := e.do(nil, req)
		loc := res.Header.Get("Location")
		if !strings.HasPrefix(loc, e.srv.URL+"/") {
			t.Errorf("sign-out with callbackUrl %q and forged host headers: %d, Location %q", target, res.StatusCode, loc)
		}
		// The page's links and form targets too.
		req, _ = http.NewRequest("GET", e.srv.URL+"/auth/signin?callbackUrl="+url.QueryEscape(target), nil)
		forge(req)
		page := e.do(nil, req)
		if strings.Contains(page.body, "evil.example") {
			t.Errorf("sign-in page with forged host headers names evil.example: %s", page.body)
		}
	}
}
