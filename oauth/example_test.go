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
	"sync/atomic"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// An application serving the two routes of OAuth sign-in, and a browser
// (an http.Client with a cookie jar) signing in through them. The
// provider is a small stand-in for an OAuth 2.0 provider such as GitHub;
// with a real one, only the provider configuration changes.
func ExampleFlow() {
	idp := exampleProvider()
	defer idp.Close()

	var flow *oauth.Flow
	mux := http.NewServeMux()
	// POST /auth/signin/{provider}: send the user to the provider.
	mux.HandleFunc("POST /auth/signin/{provider}", func(w http.ResponseWriter, r *http.Request) {
		// The request's prompt, login_hint, ui_locales, … go to the
		// provider (Auth.js's authorizationParams); see SignInParams.
		to, err := flow.Begin(r.Context(), w, r.PathValue("provider"), r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	})
	// GET /auth/callback/{provider}: check what comes back, sign in.
	mux.HandleFunc("GET /auth/callback/{provider}", func(w http.ResponseWriter, r *http.Request) {
		in, err := flow.Callback(r.Context(), w, r, r.PathValue("provider"), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden) // errors.Is(err, oauth.ErrStateMismatch), …
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
	a, err := auth.New(auth.Config{
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
	flow, err := oauth.New(oauth.Config{Auth: a})
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
	if errors.Is(err, oauth.ErrInvalidGrant) || errors.Is(err, oauth.ErrNoRefreshToken) {
		fmt.Println("the user must sign in with the provider again")
		return
	}
	fmt.Println(token, err)
	// Output:
	// the-token <nil>
	// the-token-2 <nil>
}

// exampleSignIn signs a user in through the flow without a browser: Begin,
// the provider's consent, Callback. It returns the user's id.
func exampleSignIn(flow *oauth.Flow) (string, error) {
	rec := httptest.NewRecorder()
	to, err := flow.Begin(context.Background(), rec, "example")
	if err != nil {
		return "", err
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(to)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	back := httptest.NewRequest(http.MethodGet, res.Header.Get("Location"), nil)
	for _, c := range rec.Result().Cookies() {
		back.AddCookie(c)
	}
	in, err := flow.Callback(context.Background(), httptest.NewRecorder(), back, "example", nil)
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
