// Command webapp is an application built on authport, the shape a Go team
// starts from: its users sign in with the company's OpenID provider, their
// accounts live in PostgreSQL, only the company's e-mail domains get in, a
// role on the user shows in the session, and an API accepts the session
// cookie (browsers) or a bearer token (a CLI, a mobile app) and calls the
// provider's API with an access token that authport refreshes.
//
// In a clone of the repository, with nothing configured:
//
//	cd examples/webapp && go run .
//
// starts the repository's dex as the OpenID provider (with the users
// ada@example.com, an admin, and bob@example.com, password "password") and
// keeps users in the bbolt file webapp.db. With a real provider and
// PostgreSQL:
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
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, slog.Default()); err != nil {
		log.Fatal(err)
	}
}

// run reads the configuration from getenv, starts what is missing for
// development (dex, a bbolt file) and serves until ctx is done.
func run(ctx context.Context, getenv func(string) string, logger *slog.Logger) error {
	cfg, addr, closeDev, err := configFromEnv(ctx, getenv, logger)
	if err != nil {
		return err
	}
	defer closeDev()
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	app, err := New(startCtx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer app.Close()
	srv := &http.Server{Addr: addr, Handler: app, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	logger.Info("webapp: listening; open " + strings.TrimSuffix(cfg.BaseURL, "/auth") + "/")
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// configFromEnv reads the variables the README lists. Left unset,
// OIDC_ISSUER starts the repository's dex, DATABASE_URL keeps users in the
// bbolt file webapp.db, and AUTH_SECRET is random for this run; the
// returned function stops dex.
func configFromEnv(ctx context.Context, getenv func(string) string, logger *slog.Logger) (cfg Config, addr string, closeDev func(), err error) {
	closeDev = func() {}
	port := cmp.Or(getenv("PORT"), "8080")
	cfg = Config{
		DatabaseURL:    getenv("DATABASE_URL"),
		BaseURL:        cmp.Or(getenv("AUTH_URL"), "http://localhost:"+port+"/auth"),
		Secrets:        list(getenv("AUTH_SECRET")),
		Issuer:         getenv("OIDC_ISSUER"),
		ClientID:       getenv("OIDC_CLIENT_ID"),
		ClientSecret:   getenv("OIDC_CLIENT_SECRET"),
		AllowedDomains: list(getenv("ALLOWED_DOMAINS")),
		Admins:         list(getenv("ADMINS")),
		Logger:         logger,
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseFile = "webapp.db"
		logger.Info("webapp: DATABASE_URL is not set: users, accounts and sessions are kept in webapp.db (bbolt) in this directory; set DATABASE_URL=postgres://… to use PostgreSQL")
	}
	if len(cfg.Secrets) == 0 {
		secret, err := randomSecret()
		if err != nil {
			return cfg, "", closeDev, err
		}
		cfg.Secrets = []string{secret}
		logger.Warn("webapp: AUTH_SECRET is not set: a random secret for this run, so sessions end when it stops; set AUTH_SECRET=$(go run github.com/authport/authport/core/cmd/authport-secret) to keep them")
	}
	if cfg.Issuer != "" {
		var missing []string
		if cfg.ClientID == "" {
			missing = append(missing, "OIDC_CLIENT_ID")
		}
		if len(cfg.AllowedDomains) == 0 {
			missing = append(missing, "ALLOWED_DOMAINS (the e-mail domains that may sign in, e.g. example.com)")
		}
		if len(missing) > 0 {
			return cfg, "", closeDev, fmt.Errorf("OIDC_ISSUER is set (%s), so set %s too (and OIDC_CLIENT_SECRET), with %s/callback/%s registered as the client's redirect URI at the provider; or unset OIDC_ISSUER to sign in with the repository's dex",
				cfg.Issuer, strings.Join(missing, " and "), cfg.BaseURL, providerID)
		}
		return cfg, "localhost:" + port, closeDev, nil
	}
	if cfg.ClientID != "" || cfg.ClientSecret != "" {
		return cfg, "", closeDev, errors.New("OIDC_CLIENT_ID or OIDC_CLIENT_SECRET is set without OIDC_ISSUER: set OIDC_ISSUER to your provider's issuer URL, or unset them to sign in with the repository's dex")
	}
	dex, err := startDevDex(ctx, cfg.BaseURL, func(format string, args ...any) { logger.Info("webapp: " + fmt.Sprintf(format, args...)) })
	if err != nil {
		return cfg, "", closeDev, fmt.Errorf("OIDC_ISSUER is not set and the repository's dex could not be started (%w): set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET to your OpenID provider, or AUTHPORT_DEX_BIN to a dex binary", err)
	}
	cfg.Issuer, cfg.ClientID, cfg.ClientSecret = dex.Issuer, dex.ClientID, dex.ClientSecret
	if len(cfg.AllowedDomains) == 0 {
		cfg.AllowedDomains = []string{"example.com"}
	}
	if len(cfg.Admins) == 0 {
		cfg.Admins = devUsers[:1]
	}
	logger.Info(fmt.Sprintf("webapp: OIDC_ISSUER is not set: signing in with the repository's dex at %s as %s (password %q); admins: %s. Set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET to use your provider",
		dex.Issuer, strings.Join(devUsers, " or "), devPassword, strings.Join(cfg.Admins, ", ")))
	return cfg, "localhost:" + port, dex.Close, nil
}

// randomSecret returns 32 random bytes, base64: what authport-secret prints.
func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
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
