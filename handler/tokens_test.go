package handler_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/tokens"
)

const (
	tokClient   = "example-ios"
	tokRedirect = "com.example.app:/oauth"
	tokVerifier = "a-pkce-code-verifier-of-43-characters-or-more-0123"
	tokIntro    = "introspection-secret-0123456789abcdef"
)

// tokensEnv is a handler with Config.Tokens, on JWT or database sessions,
// and the credentials user stored (token families need stored users).
func tokensEnv(t *testing.T, strategy auth.Strategy) *env {
	t.Helper()
	o := envOpts{strategy: strategy, config: func(c *handler.Config) {
		k, err := tokens.GenerateKey(tokens.ES256, "2026-03")
		if err != nil {
			t.Fatal(err)
		}
		ks, _ := tokens.NewKeySet(k)
		c.Tokens, err = tokens.New(tokens.Config{Auth: c.Auth, Keys: ks, Audience: []string{"https://api.example.com"},
			IntrospectionSecret: tokIntro, Clients: []tokens.Client{{ID: tokClient, Name: "Example for iOS", RedirectURIs: []string{tokRedirect}}}})
		if err != nil {
			t.Fatal(err)
		}
	}}
	if strategy == auth.StrategyDatabase {
		o.providers = noProviders
	}
	e := newEnv(t, o)
	if _, err := e.store.CreateUser(t.Context(), core.User{ID: "user-ada", Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	return e
}

func authorizeQuery() url.Values {
	sum := sha256.Sum256([]byte(tokVerifier))
	return url.Values{"response_type": {"code"}, "client_id": {tokClient}, "redirect_uri": {tokRedirect},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "state": {"s1"}}
}

func decode(t *testing.T, res response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(res.body), &m); err != nil {
		t.Fatalf("%d %s: %v", res.StatusCode, res.body, err)
	}
	return m
}

func TestTokenRoutes(t *testing.T) {
	e := tokensEnv(t, auth.StrategyJWT)
	authorize := "/auth/authorize?" + authorizeQuery().Encode()
	// Signed out: to the sign-in page, and back here afterwards.
	res := e.get(authorize)
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != 302 || loc.Path != "/auth/signin" || loc.Query().Get("callbackUrl") != e.base+strings.TrimPrefix(authorize, "/auth") {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res := e.signInCredentials("ada", "lovelace", url.Values{"callbackUrl": {loc.Query().Get("callbackUrl")}}); res.Header.Get("Location") != loc.Query().Get("callbackUrl") {
		t.Fatalf("sign-in went to %q", res.Header.Get("Location"))
	}
	res = e.get(authorize)
	back, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != 302 || !strings.HasPrefix(res.Header.Get("Location"), tokRedirect+"?") || back.Query().Get("state") != "s1" || back.Query().Get("code") == "" {
		t.Fatalf("signed in: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	code := back.Query().Get("code")
	res = e.post("/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {tokVerifier},
		"redirect_uri": {tokRedirect}, "client_id": {tokClient}}, "User-Agent", "ExampleApp/1.0 CFNetwork")
	tok := decode(t, res)
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-store" || tok["token_type"] != "Bearer" {
		t.Fatalf("POST /token: %d %v %s", res.StatusCode, res.Header, res.body)
	}
	// The family is listed among the user's sessions, named after the app.
	list, _ := e.store.ListSessionsByUserID(t.Context(), "user-ada")
	if len(list) != 1 || list[0].UserAgent != "Example for iOS (ExampleApp/1.0 CFNetwork)" {
		t.Fatalf("sessions: %+v", list)
	}
	// The code is used up.
	res = e.post("/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {tokVerifier},
		"redirect_uri": {tokRedirect}, "client_id": {tokClient}})
	if m := decode(t, res); res.StatusCode != 400 || m["error"] != "invalid_grant" || m["error_description"] == "" {
		t.Fatalf("reused code: %d %s", res.StatusCode, res.body)
	}
	// JWKS.
	res = e.get("/auth/jwks")
	if !strings.Contains(res.body, `"kid":"2026-03"`) || !strings.Contains(res.body, `"crv":"P-256"`) || strings.Contains(res.body, `"d":`) {
		t.Fatalf("GET /jwks: %s", res.body)
	}
	// Refresh.
	res = e.post("/auth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {tokClient}})
	next := decode(t, res)
	if res.StatusCode != 200 || next["refresh_token"] == tok["refresh_token"] {
		t.Fatalf("refresh: %d %s", res.StatusCode, res.body)
	}
	// Introspection needs the secret.
	form := url.Values{"token": {next["access_token"].(string)}}
	if res := e.post("/auth/introspect", form); res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("introspect without the secret: %d", res.StatusCode)
	}
	if res := e.post("/auth/introspect", form, "Authorization", "Bearer "+tokIntro); res.StatusCode != 200 || decode(t, res)["active"] != true {
		t.Fatalf("introspect: %d %s", res.StatusCode, res.body)
	}
	// Revoke the family.
	if res := e.post("/auth/revoke", url.Values{"token": {next["refresh_token"].(string)}, "client_id": {tokClient}}); res.StatusCode != 200 {
		t.Fatalf("revoke: %d %s", res.StatusCode, res.body)
	}
	res = e.post("/auth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}, "client_id": {tokClient}})
	if m := decode(t, res); res.StatusCode != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("refresh after revoke: %d %s", res.StatusCode, res.body)
	}
	if res := e.post("/auth/introspect", form, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("svc:"+tokIntro))); decode(t, res)["active"] != false {
		t.Fatalf("introspect after revoke: %s", res.body)
	}
}

func TestTokenRoutesRefuse(t *testing.T) {
	e := tokensEnv(t, auth.StrategyDatabase)
	for name, q := range map[string]func(url.Values){
		"unknown client":     func(q url.Values) { q.Set("client_id", "evil") },
		"foreign redirect":   func(q url.Values) { q.Set("redirect_uri", "https://evil.example/") },
		"no redirect":        func(q url.Values) { q.Del("redirect_uri") },
		"redirect with path": func(q url.Values) { q.Set("redirect_uri", tokRedirect+"/x") },
	} {
		v := authorizeQuery()
		q(v)
		res := e.get("/auth/authorize?" + v.Encode())
		if res.StatusCode != 400 || res.Header.Get("Location") != "" || !strings.Contains(res.body, "not valid") {
			t.Errorf("%s: %d %q", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	// A request error the client should hear of goes back to it.
	v := authorizeQuery()
	v.Set("code_challenge_method", "plain")
	if res := e.get("/auth/authorize?" + v.Encode()); !strings.HasPrefix(res.Header.Get("Location"), tokRedirect+"?error=invalid_request") {
		t.Errorf("plain PKCE: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	for name, tc := range map[string]struct {
		form   url.Values
		ct     string
		status int
		code   string
	}{
		"no grant":        {url.Values{}, "", 400, "invalid_request"},
		"password grant":  {url.Values{"grant_type": {"password"}}, "", 400, "unsupported_grant_type"},
		"json body":       {url.Values{"grant_type": {"refresh_token"}}, "application/json", 400, "invalid_request"},
		"twice":           {url.Values{"grant_type": {"refresh_token", "refresh_token"}}, "", 400, "invalid_request"},
		"unknown client":  {url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"evil"}}, "", 401, "invalid_client"},
		"junk refresh":    {url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {tokClient}}, "", 400, "invalid_grant"},
		"junk code":       {url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "code_verifier": {tokVerifier}, "redirect_uri": {tokRedirect}, "client_id": {tokClient}}, "", 400, "invalid_grant"},
		"revoke unknown":  {url.Values{"token": {"x"}, "client_id": {"evil"}}, "", 401, "invalid_client"},
		"revoke no token": {url.Values{"client_id": {tokClient}}, "", 400, "invalid_request"},
	} {
		path := "/auth/token"
		if strings.HasPrefix(name, "revoke") {
			path = "/auth/revoke"
		}
		var header []string
		if tc.ct != "" {
			header = []string{"Content-Type", tc.ct}
		}
		res := e.post(path, tc.form, header...)
		if m := decode(t, res); res.StatusCode != tc.status || m["error"] != tc.code || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d %s", name, res.StatusCode, res.body)
		}
	}
	if res := e.get("/auth/token"); res.StatusCode != 405 {
		t.Errorf("GET /token: %d", res.StatusCode)
	}
	// Without Config.Tokens the routes are not there.
	plain := newEnv(t, envOpts{strategy: auth.StrategyJWT})
	for _, p := range []string{"/auth/authorize", "/auth/jwks"} {
		if res := plain.get(p); res.StatusCode != 404 {
			t.Errorf("GET %s without Tokens: %d", p, res.StatusCode)
		}
	}
	if res := plain.post("/auth/token", url.Values{}); res.StatusCode != 404 {
		t.Errorf("POST /token without Tokens: %d", res.StatusCode)
	}
}
