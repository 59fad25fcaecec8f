package tokens_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/tokens"
)

// An issuer for one native client, a token family started through the Go
// API, a refresh, and an API guarded by Require. With the handler, set
// handler.Config.Tokens to the issuer: it serves /authorize, /token,
// /jwks, /revoke and /introspect.
func Example() {
	ctx := context.Background()
	store := memory.New()
	store.CreateUser(ctx, core.User{ID: "user-1", Email: "ada@example.com"})
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{"example-secret-0123456789abcdefghij"},
		BaseURL: "https://id.example.com/auth"})
	if err != nil {
		log.Fatal(err)
	}
	// Keep the key set (MarshalPrivateJSON) where you keep secrets, and
	// read it back with ParseKeySet: a new key on every start would cut
	// off every token already issued.
	key, err := tokens.GenerateKey(tokens.EdDSA, "2026-03")
	if err != nil {
		log.Fatal(err)
	}
	keys, err := tokens.NewKeySet(key)
	if err != nil {
		log.Fatal(err)
	}
	iss, err := tokens.New(tokens.Config{
		Auth: a, Keys: keys, Audience: []string{"https://api.example.com"},
		Clients: []tokens.Client{{ID: "example-cli", Name: "Example CLI", RedirectURIs: []string{"http://127.0.0.1/callback"}}},
	})
	if err != nil {
		log.Fatal(err)
	}

	first, err := iss.Issue(ctx, "user-1", "example-cli", tokens.IssueOptions{})
	if err != nil {
		log.Fatal(err)
	}
	next, err := iss.Refresh(ctx, first.RefreshToken, "example-cli")
	if err != nil {
		log.Fatal(err)
	}

	api := iss.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := tokens.FromContext(r.Context())
		fmt.Fprintf(w, "hello %s from %s", c.Subject, c.ClientID)
	}))
	req := httptest.NewRequest("GET", "https://api.example.com/me", nil)
	req.Header.Set("Authorization", "Bearer "+next.AccessToken)
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Body)

	// The first refresh token was rotated: presented again, it ends the
	// family.
	_, err = iss.Refresh(ctx, first.RefreshToken, "example-cli")
	fmt.Println(err)
	// Output:
	// 200 hello user-1 from example-cli
	// tokens: invalid_grant: the refresh token was used before: its family is ended; sign in again
}
