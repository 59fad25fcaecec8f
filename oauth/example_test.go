package oauth_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"

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
		to, err := flow.Begin(r.Context(), w, r.PathValue("provider"))
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
		if r.FormValue("code") != "the-code" || r.FormValue("code_verifier") == "" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "the-token", "token_type": "bearer", "expires_in": 3600})
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
