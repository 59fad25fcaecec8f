// Command chi is the quickstart on the chi router (github.com/go-chi/chi/v5):
// the same sign-in (GitHub and e-mail links, bbolt), with the session read
// by middleware on one group of routes and required on another.
//
//	export AUTH_SECRET=$(go run github.com/authport/authport/core/cmd/authport-secret@v0.1.0)
//	export AUTH_GITHUB_ID=… AUTH_GITHUB_SECRET=…
//	go run ./chi    # in examples/quickstart; then open http://localhost:8080
package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
	"github.com/go-chi/chi/v5"
)

func main() {
	store, err := bboltadapter.Open(context.Background(), "auth.db")
	must(err)
	defer store.Close()
	h, err := newAuth(store, os.Getenv, func(_ context.Context, r provider.VerificationRequest) error {
		log.Printf("sign-in link for %s: %s", r.Identifier, r.URL) // or mail.SMTP, providers.Resend
		return nil
	})
	must(err)
	log.Fatal(http.ListenAndServe("localhost:"+port(os.Getenv), router(h)))
}

// newAuth configures GitHub and e-mail sign-in over store from the AUTH_*
// variables, as the quickstart does.
func newAuth(store any, getenv func(string) string, send func(context.Context, provider.VerificationRequest) error) (*handler.Handler, error) {
	github, err := providers.FromEnv(getenv, "github")
	if err != nil {
		return nil, err
	}
	cfg := auth.Config{Adapter: store, Providers: append(github, provider.Email("Example <no-reply@example.com>", send))}
	auth.SetEnvDefaults(&cfg, getenv)
	cfg.BaseURL = cmp.Or(cfg.BaseURL, "http://localhost:"+port(getenv)+"/auth")
	a, err := auth.New(cfg)
	if err != nil {
		return nil, err
	}
	return handler.New(handler.Config{Auth: a})
}

// port is the port the example listens on: PORT, or 8080.
func port(getenv func(string) string) string {
	return cmp.Or(getenv("PORT"), "8080")
}

// router mounts the auth routes and the site's pages on chi.
func router(h *handler.Handler) http.Handler {
	r := chi.NewRouter()
	r.Handle("/auth/*", h) // Auth.js's routes: /auth/signin, /auth/callback/github, …
	r.Group(func(r chi.Router) {
		r.Use(h.Middleware) // the session, when there is one, goes in the context
		r.Get("/", func(w http.ResponseWriter, r *http.Request) {
			if s, ok := handler.FromContext(r.Context()); ok {
				fmt.Fprintf(w, "Hello, user %s. Your account: /account\n", s.User.ID)
				return
			}
			fmt.Fprintln(w, "Hello, guest. Sign in: /auth/signin")
		})
	})
	r.Group(func(r chi.Router) {
		r.Use(h.Require) // signed out: 303 to the sign-in page, or 401 JSON for an API call
		r.Get("/account", func(w http.ResponseWriter, r *http.Request) {
			s, _ := handler.FromContext(r.Context())
			fmt.Fprintf(w, "Signed in as %s\n", deref(s.User.Email))
		})
	})
	return r
}

func deref(s *string) string {
	if s == nil {
		return "(no e-mail address)"
	}
	return *s
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
