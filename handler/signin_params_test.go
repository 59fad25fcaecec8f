package handler_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// TestSignInAuthorizationParams: the authorization parameters of POST
// /signin/{provider} (in the query, as Auth.js's signIn(id, options,
// authorizationParams) sends them, or in the form) reach the provider's
// authorization URL; only the flow's allow-list does, never the
// parameters that decide the client, the redirect or the checks.
func TestSignInAuthorizationParams(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, providers: func(*testing.T, string) []provider.Provider {
		return []provider.Provider{&provider.OAuth2Config[map[string]any]{
			ID: "idp", Name: "IdP", ClientID: "client-id", ClientSecret: "secret",
			Authorization: provider.Endpoint{URL: "https://idp.example/authorize", Params: url.Values{"prompt": {"consent"}}},
			Token:         provider.TokenEndpoint{URL: "https://idp.example/token"},
			Userinfo:      provider.UserinfoEndpoint[map[string]any]{URL: "https://idp.example/userinfo"},
			Checks:        []provider.Check{provider.CheckPKCE, provider.CheckState},
		}}
	}})
	query := url.Values{"prompt": {"login"}, "login_hint": {"ada@example.com"}, "client_id": {"evil"},
		"redirect_uri": {"https://evil.example/cb"}, "state": {"attacker"}}
	res := e.post("/auth/signin/idp?"+query.Encode(), url.Values{"csrfToken": {e.csrf()}, "ui_locales": {"de"}, "prompt": {"none"}})
	wantStatus(t, res, http.StatusSeeOther)
	to, err := url.Parse(res.Header.Get("Location"))
	if err != nil || to.Host != "idp.example" {
		t.Fatalf("redirected to %q, want the authorization endpoint", res.Header.Get("Location"))
	}
	q := to.Query()
	for k, want := range map[string]string{
		"prompt": "login", "login_hint": "ada@example.com", "ui_locales": "de",
		"client_id": "client-id", "redirect_uri": e.base + "/callback/idp", "code_challenge_method": "S256",
	} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q (URL %s)", k, q.Get(k), want, to)
		}
	}
	if q.Get("state") == "attacker" || q.Get("state") == "" {
		t.Errorf("state %q: want the flow's own", q.Get("state"))
	}
	if q.Has("csrfToken") {
		t.Error("the CSRF token reached the provider")
	}

	// Without a valid CSRF token nothing is sent anywhere.
	res = e.post("/auth/signin/idp?prompt=login", url.Values{"csrfToken": {"wrong"}})
	if loc := res.Header.Get("Location"); res.StatusCode == http.StatusSeeOther && len(loc) > 0 {
		if u, _ := url.Parse(loc); u != nil && u.Host == "idp.example" {
			t.Errorf("a sign-in without a valid CSRF token went to the provider: %s", loc)
		}
	}
}
