// Command quickstart is the README's quickstart: a site whose users sign in
// with GitHub or by e-mail link, kept in a bbolt file (auth.db).
//
//	export AUTH_SECRET=$(go run github.com/authport/authport/core/cmd/authport-secret@v0.1.0)
//	export AUTH_GITHUB_ID=… AUTH_GITHUB_SECRET=…  # callback: http://localhost:8080/auth/callback/github
//	go run .                                      # then open http://localhost:8080
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
)

func main() {
	store, err := bboltadapter.Open(context.Background(), "auth.db") // the default adapter: one file, one process
	must(err)
	defer store.Close()
	github, err := providers.FromEnv(os.Getenv, "github") // AUTH_GITHUB_ID, AUTH_GITHUB_SECRET
	must(err)
	// Prints the sign-in link; in production send it with mail.SMTP or providers.Resend.
	email := provider.Email("Example <no-reply@example.com>", func(_ context.Context, r provider.VerificationRequest) error {
		log.Printf("sign-in link for %s: %s", r.Identifier, r.URL)
		return nil
	})
	cfg := auth.Config{Adapter: store, Providers: append(github, email)}
	auth.SetEnvDefaults(&cfg, os.Getenv) // AUTH_SECRET, AUTH_URL
	port := cmp.Or(os.Getenv("PORT"), "8080")
	cfg.BaseURL = cmp.Or(cfg.BaseURL, "http://localhost:"+port+"/auth") // links and redirects go to this origin
	a, err := auth.New(cfg)
	must(err)
	h, err := handler.New(handler.Config{Auth: a})
	must(err)

	mux := http.NewServeMux()
	mux.Handle("/auth/", h) // sign-in page: /auth/signin
	mux.Handle("GET /{$}", h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := handler.FromContext(r.Context()) // Require let the request in: s is set
		fmt.Fprintf(w, "Signed in as user %s; sign out at /auth/signout. The session:\n", s.User.ID)
		json.NewEncoder(w).Encode(s) // {"user":{"name","email","image"},"expires"}, as /auth/session
	})))
	log.Fatal(http.ListenAndServe("localhost:"+port, mux))
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
