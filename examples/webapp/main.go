// Command webapp is an application built on authport, the shape a Go team
// starts from: its users sign in with the company's OpenID provider, their
// accounts live in PostgreSQL, only the company's e-mail domains get in, a
// role on the user shows in the session, and an API accepts the session
// cookie (browsers) or a bearer token (a CLI, a mobile app) and calls the
// provider's API with an access token that authport refreshes.
//
//	export DATABASE_URL=postgres://app@localhost:5432/app?sslmode=disable
//	export AUTH_SECRET=$(go run github.com/authport/authport/core/cmd/authport-secret@latest)
//	export AUTH_URL=http://localhost:8080/auth
//	export OIDC_ISSUER=https://sso.example.com OIDC_CLIENT_ID=… OIDC_CLIENT_SECRET=…
//	export ALLOWED_DOMAINS=example.com ADMINS=ada@example.com
//	go run .
//
// See README.md.
package main

import (
	"cmp"
	"context"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	cfg := Config{
		DatabaseURL:    os.Getenv("DATABASE_URL"),
		BaseURL:        cmp.Or(os.Getenv("AUTH_URL"), "http://localhost:8080/auth"),
		Secrets:        list(os.Getenv("AUTH_SECRET")),
		Issuer:         os.Getenv("OIDC_ISSUER"),
		ClientID:       os.Getenv("OIDC_CLIENT_ID"),
		ClientSecret:   os.Getenv("OIDC_CLIENT_SECRET"),
		AllowedDomains: list(os.Getenv("ALLOWED_DOMAINS")),
		Admins:         list(os.Getenv("ADMINS")),
		Logger:         slog.Default(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	app, err := New(ctx, cfg)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	defer app.Close()
	srv := &http.Server{Addr: "localhost:" + cmp.Or(os.Getenv("PORT"), "8080"), Handler: app, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// list splits a comma-separated variable, dropping empty items.
func list(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
