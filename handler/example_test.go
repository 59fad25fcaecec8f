package handler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// Mount Auth.js's routes under /auth with a credentials provider and JWT
// sessions, and protect an API route.
func Example() {
	login := provider.Credentials(func(_ context.Context, req provider.AuthorizeRequest) (*provider.User, error) {
		if req.Credentials["username"] == "ada" && req.Credentials["password"] == "lovelace" {
			return &provider.User{ID: "1", Email: "ada@example.com"}, nil
		}
		return nil, nil // refused: the user sees CredentialsSignin
	})
	login.Fields = []provider.CredentialField{{Name: "username", Label: "Username"}, {Name: "password", Label: "Password", Type: "password"}}
	a, err := auth.New(auth.Config{
		Adapter:   memory.New(),
		Providers: []provider.Provider{login},
		Secrets:   []string{"at least 32 random bytes, e.g. AUTH_SECRET"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   "http://localhost:8080/auth",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := handler.New(handler.Config{Auth: a})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.Handle("/api/me", h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := handler.FromContext(r.Context())
		fmt.Fprintln(w, "hello", s.User.ID)
	})))

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "http://localhost:8080/auth/providers", nil))
	fmt.Println(w.Code, w.Body)
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "http://localhost:8080/api/me", nil))
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	// Output:
	// 200 {"credentials":{"id":"credentials","name":"Credentials","type":"credentials","signinUrl":"http://localhost:8080/auth/signin/credentials","callbackUrl":"http://localhost:8080/auth/callback/credentials"}}
	// 401 {"error":"Unauthorized","message":"sign in to use this resource"}
}

// A Go API behind a Next.js app that signs users in with Auth.js (JWT
// sessions): the same AUTH_SECRET reads its session cookie, no routes
// needed.
func ExampleNewReader() {
	sessions, err := handler.NewReader(handler.ReaderConfig{
		Secrets: []string{"the Next.js app's AUTH_SECRET (32+ bytes)"},
		Secure:  true, // the app is served over https: __Secure-authjs.session-token
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	api := sessions.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := handler.FromContext(r.Context())
		fmt.Fprintln(w, "user", s.User.ID)
	}))
	w := httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequest("GET", "https://app.example.com/api/orders", nil))
	fmt.Println(w.Code)
	// Output: 401
}

// SafeRedirect keeps callbackUrl on the site.
func ExampleSafeRedirect() {
	for _, raw := range []string{"/dashboard?tab=2", "https://evil.example/", "//evil.example", "javascript:alert(1)"} {
		u, ok := handler.SafeRedirect(raw, "https://app.example.com")
		fmt.Printf("%v %q\n", ok, u)
	}
	// Output:
	// true "https://app.example.com/dashboard?tab=2"
	// false ""
	// false ""
	// false ""
}
