package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/oauth"
)

// An application serving the two routes of OAuth sign-in, and a browser
// (an http.Client with a cookie jar) signing in through them. The flow
// writes no cookies: the application keeps each sign-in's check values
// until the provider calls back. The handler module keeps them in Auth.js's
// sealed check cookies; this application keeps them in memory, under a
// random id in a cookie of its own. The provider is a small stand-in for
// an OAuth 2.0 provider such as GitHub; with a real one, only the provider
// configuration changes.
func ExampleFlow() {
	idp := exampleProvider()
	defer idp.Close()

	var flow *oauth.Flow
	var mu sync.Mutex
	pending := map[string]oauth.Checks{} // by the sign-in cookie's id
	mux := http.NewServeMux()
	// POST /auth/signin/{provider}: send the user to the provider.
	mux.HandleFunc("POST /auth/signin/{provider}", func(w http.ResponseWriter, r *http.Request) {
		// The request's prompt, login_hint, ui_locales, … go to the
		// provider (Auth.js's authorizationParams); see SignInParams.
		a, err := flow.Begin(r.Context(), r.PathValue("provider"), r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest) // auth.CodeOf(err) is auth.CodeOAuthSignin
			return
		}
		id := rand.Text()
		mu.Lock()
		pending[id] = a.Checks
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "signin", Value: id, Path: "/auth/callback/", HttpOnly: true,
			MaxAge: int(oauth.CheckMaxAge / time.Second), SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, a.URL, http.StatusSeeOther)
	})
	// GET /auth/callback/{provider}: check what comes back, sign in.
	mux.HandleFunc("GET /auth/callback/{provider}", func(w http.ResponseWriter, r *http.Request) {
		var checks oauth.Checks
		if c, err := r.Cookie("signin"); err == nil {
			mu.Lock()
			checks = pending[c.Value]
			delete(pending, c.Value) // each sign-in's values are used once
			mu.Unlock()
		}
		in, err := flow.Callback(r.Context(), r.PathValue("provider"), r.URL.Query(), checks, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden) // auth.CodeOf(err) is auth.CodeOAuthCallback
			return
		}
		fmt.Fprintf(w, "signed in as %s (new user: %v)", in.User.Email, in.IsNewUser)
	})
	app := httptest.NewServer(mux)
	defer app.Close()

	a, err := auth.New(auth.Config{
		Adapter: memory.New(),
		Providers: []provider.Provider{&provider.OAuth2Config[map[string]any]{
			ID: "example", Name: "Example",
			Authorization: provider.Endpoint{URL: idp.URL + "/authorize", Params: url.Values{"scope": {"profile email"}}},
			Token:         provider.TokenEndpoint{URL: idp.URL + "/token"},
			Userinfo:      provider.UserinfoEndpoint[map[string]any]{URL: idp.URL + "/user"},
			ClientID:      "client-id", ClientSecret: "client-secret",
		}},
		Secrets: []string{"at least 32 random bytes, e.g. AUTH_SECRET"},
		BaseURL: app.URL + "/auth",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	flow, err = oauth.New(oauth.Config{Auth: a})
	if err != nil {
		fmt.Println(err)
		return
	}

	// The browser: sign-in, the provider's consent, the callback.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	res, err := browser.Post(app.URL+"/auth/signin/example", "", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(string(body))
	// Output: signed in as ada@example.com (new user: true)
}

// Begin returns the authorization URL and the check values the provider's
// checks need: a GitHub provider has the PKCE check, so there is a code
// verifier to keep, and the URL carries its S256 challenge. Begin needs no
// network for a provider whose endpoints are configured.
func ExampleFlow_Begin() {
	flow, err := newFlow(auth.Config{
		Adapter:   memory.New(),
		Providers: []provider.Provider{providers.GitHub("client-id", "client-secret")},
		Secrets:   []string{"at least 32 random bytes, e.g. AUTH_SECRET"},
		BaseURL:   "https://app.example.com/auth",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	begun, err := flow.Begin(context.Background(), "github", url.Values{"login": {"ada"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	u, _ := url.Parse(begun.URL)
	q := u.Query()
	fmt.Println(u.Host + u.Path)
	fmt.Println("redirect_uri:", q.Get("redirect_uri"))
	fmt.Println("login:", q.Get("login"))
	fmt.Println("code_challenge_method:", q.Get("code_challenge_method"))
	fmt.Println("keep a code verifier:", begun.Checks.CodeVerifier != "")
	fmt.Println("keep a state:", begun.Checks.State != "")
	fmt.Println("form_post callback:", begun.FormPost)
	// Output:
	// github.com/login/oauth/authorize
	// redirect_uri: https://app.example.com/auth/callback/github
	// login: ada
	// code_challenge_method: S256
	// keep a code verifier: true
	// keep a state: false
	// form_post callback: false
}

// exampleProvider is a minimal OAuth 2.0 provider: /authorize consents at
// once, /token issues a token for the one code, /user returns a profile.
func exampleProvider() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		back, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"the-code"}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.FormValue("grant_type") == "refresh_token" && r.FormValue("refresh_token") == "refresh-1":
			// A rotating provider: a new refresh token each time.
			json.NewEncoder(w).Encode(map[string]any{"access_token": "the-token-2", "token_type": "bearer", "expires_in": 3600, "refresh_token": "refresh-2"})
		case r.FormValue("code") == "the-code" && r.FormValue("code_verifier") != "":
			json.NewEncoder(w).Encode(map[string]any{"access_token": "the-token", "token_type": "bearer", "expires_in": 3600, "refresh_token": "refresh-1"})
		default:
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		}
	})
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer the-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": 42, "email": "ada@example.com", "name": "Ada"})
	})
	return httptest.NewServer(mux)
}

// A valid access token for calling the provider's API on the user's
// behalf, later: AccessToken refreshes it with the stored refresh token
// once it has expired, and stores the rotated tokens. Here the clock moves
// two hours on after the sign-in.
func ExampleFlow_AccessToken() {
	idp := exampleProvider()
	defer idp.Close()
	var later atomic.Bool
	clock := func() time.Time {
		if later.Load() {
			return time.Now().Add(2 * time.Hour)
		}
		return time.Now()
	}
	flow, err := newFlow(auth.Config{
		Adapter: memory.New(), // updateAccount and listAccountsByUserId are needed
		Providers: []provider.Provider{&provider.OAuth2Config[map[string]any]{
			ID: "example", Name: "Example",
			Authorization: provider.Endpoint{URL: idp.URL + "/authorize"},
			Token:         provider.TokenEndpoint{URL: idp.URL + "/token"},
			Userinfo:      provider.UserinfoEndpoint[map[string]any]{URL: idp.URL + "/user"},
			ClientID:      "client-id", ClientSecret: "client-secret",
		}},
		Secrets: []string{"at least 32 random bytes, e.g. AUTH_SECRET"},
		BaseURL: "http://localhost:8080/auth",
		Now:     clock,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	userID, err := exampleSignIn(flow)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	token, err := flow.AccessToken(ctx, userID, "example")
	fmt.Println(token, err)

	later.Store(true) // the access token has expired
	token, err = flow.AccessToken(ctx, userID, "example")
	if errors.Is(err, oauth.ErrSignInAgain) {
		fmt.Println("the user must sign in with the provider again")
		return
	}
	fmt.Println(token, err)
	// Output:
	// the-token <nil>
	// the-token-2 <nil>
}

// newFlow configures core/auth with c and makes its OAuth flow, as
// ExampleFlow does.
func newFlow(c auth.Config) (*oauth.Flow, error) {
	a, err := auth.New(c)
	if err != nil {
		return nil, err
	}
	return oauth.New(oauth.Config{Auth: a})
}

// exampleSignIn signs a user in through the flow without a browser: Begin,
// the provider's consent, Callback with the check values Begin returned.
// It returns the user's id.
func exampleSignIn(flow *oauth.Flow) (string, error) {
	begun, err := flow.Begin(context.Background(), "example")
	if err != nil {
		return "", err
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(begun.URL)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		return "", err
	}
	in, err := flow.Callback(context.Background(), "example", back.Query(), begun.Checks, nil)
	if err != nil {
		return "", err
	}
	return in.User.ID, nil
}

// A provider that authenticates clients with private_key_jwt (RFC 7523):
// the flow signs a client assertion with the key for each token request
// (code exchange and refresh). client_secret_jwt signs with ClientSecret
// instead (HS256 by default; at least 32 bytes).
func ExampleFlow_privateKeyJWT() {
	key, err := rsa.GenerateKey(rand.Reader, 2048) // in production: loaded, or a KMS crypto.Signer
	if err != nil {
		fmt.Println(err)
		return
	}
	p := &provider.OIDCConfig[map[string]any]{OAuth2Config: provider.OAuth2Config[map[string]any]{
		ID: "corp", Name: "Corp", Issuer: "https://login.corp.example", ClientID: "authport",
		Client: provider.ClientOptions{
			TokenEndpointAuthMethod: "private_key_jwt",
			PrivateKey:              key,
			PrivateKeyID:            "2026-11", // the kid the provider knows the public key by
			// TokenEndpointAuthSigningAlg: "PS256", // default RS256 for an RSA key
		},
	}}
	_, err = auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{p},
		Secrets: []string{"at least 32 random bytes, e.g. AUTH_SECRET"}, BaseURL: "https://app.example/auth"})
	fmt.Println(err)
	// Output: <nil>
}
