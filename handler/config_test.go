package handler_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
)

func TestNewRefusesBadConfig(t *testing.T) {
	// The base URL (like the secrets and the clock) is the Auth's.
	jwtConfig := func(base string) auth.Config {
		return auth.Config{Adapter: memoryStore(), Secrets: []string{secret}, BaseURL: base, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}}
	}
	jwtAuthAt := func(base string) *auth.Auth {
		a, err := auth.New(jwtConfig(base))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// auth.New parses the base URL, once, for every module.
	for _, base := range []string{"/auth", "ftp://x/auth", "https://x/auth?q=1", "https://user@x/auth"} {
		if _, err := auth.New(jwtConfig(base)); !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), "BaseURL") {
			t.Errorf("auth.New with BaseURL %q: %v, want core.ErrInvalidConfig naming BaseURL", base, err)
		}
	}
	for name, tc := range map[string]struct {
		cfg  handler.Config
		want string
	}{
		"no auth":     {handler.Config{}, "Config.Auth"},
		"no base URL": {handler.Config{Auth: jwtAuthAt("")}, "BaseURL"},
	} {
		_, err := handler.New(tc.cfg)
		if !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want core.ErrInvalidConfig naming %q", name, err, tc.want)
		}
	}
	if _, err := handler.New(handler.Config{Auth: jwtAuthAt("http://x/auth")}); err != nil {
		t.Errorf("secrets, clock and base URL from the Auth: %v", err)
	}
}

// On https every cookie is Secure and carries Auth.js's prefix.
func TestHTTPSCookieNames(t *testing.T) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{tls: true, providers: func(t *testing.T, base string) []provider.Provider {
		return []provider.Provider{smtp.emailProvider(t)}
	}})
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"ada@example.com"}, "callbackUrl": {"/x"}})
	wantStatus(t, res, http.StatusSeeOther)
	if c := setCookie(res, "__Secure-authjs.callback-url"); c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || unescape(c.Value) != e.srv.URL+"/x" {
		t.Errorf("callback-url cookie on https: %v", res.Header["Set-Cookie"])
	}
	res = e.get(smtp.link(t))
	wantLocation(t, e, res, "/x")
	if c := setCookie(res, "__Secure-authjs.session-token"); c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("session cookie on https: %v", res.Header["Set-Cookie"])
	}
	if u := e.session()["user"].(map[string]any); u["email"] != "ada@example.com" {
		t.Errorf("session on https: %v", u)
	}
}

func TestSignInPageStyles(t *testing.T) {
	mk := func(id string, st provider.ButtonStyle) provider.Provider {
		p := providers.GitHub("id", "secret")
		p.ID, p.Name, p.Style = id, strings.ToUpper(id), st
		return p
	}
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, providers: func(*testing.T, string) []provider.Provider {
		return []provider.Provider{
			mk("brand", provider.ButtonStyle{BrandColor: "#24292f", Bg: "#ffffff"}),
			mk("legacy", provider.ButtonStyle{Bg: "#ffffff", Text: "#123456"}),
			mk("hostile", provider.ButtonStyle{BrandColor: "red;background:url(https://evil.example)", Logo: "javascript:alert(1)"}),
			credentials(),
		}
	}, config: func(c *handler.Config) {
		c.Theme = handler.Theme{BrandColor: "#0f766e", Logo: "https://img.example/logo.png"}
	}})
	page := e.get("/auth/signin")
	wantStatus(t, page, 200)
	wantHeader(t, page, "Content-Type", "text/html; charset=utf-8")
	wantHeader(t, page, "Cache-Control", "private, no-cache, no-store")
	for _, want := range []string{
		`style="--provider-bg:#24292f;--provider-color:#fff"`,    // BrandColor wins over Bg, text derived
		`style="--provider-bg:#ffffff;--provider-color:#123456"`, // deprecated Bg and Text honoured
		">Sign in with BRAND</span>", ">Sign in with HOSTILE</span>",
		`<label for="input-username-for-credentials">Username</label>`, `type="password"`, ">Sign in with Credentials</button>",
		`--brand:#0f766e`, `src="https://img.example/logo.png"`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("sign-in page lacks %s", want)
		}
	}
	for _, bad := range []string{"evil.example", "javascript:"} {
		if strings.Contains(page.body, bad) {
			t.Errorf("sign-in page carries %q", bad)
		}
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
}
