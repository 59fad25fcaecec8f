// Command quickstart is the README's quickstart: a site whose users sign in
// with GitHub, by e-mail link, or with an e-mail address and a password,
// kept in a bbolt file (auth.db).
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
	// Prints the links; in production send them with mail.SMTP or providers.Resend.
	send := func(_ context.Context, r provider.VerificationRequest) error {
		log.Printf("%s link for %s: %s", cmp.Or(string(r.Purpose), "sign-in"), r.Identifier, r.URL)
		return nil
	}
	email := provider.Email("Example <no-reply@example.com>", send)
	// Sign-up at /auth/password/signup; the address is verified by a link
	// (the same sender), then the password signs in. Argon2id hashes.
	passwords := provider.Password("Example <no-reply@example.com>", send)
	cfg := auth.Config{Adapter: store, Providers: append(github, email, passwords)}
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
