// Command demo is authport working in a minute: a small web app whose users
// sign in by e-mail link, with an e-mail address and a password, with an
// OpenID provider, or with a passkey, through any of authport's adapters.
//
//	go run ./examples/demo                      # bbolt in the temp directory
//	go run ./examples/demo -db memory
//	go run ./examples/demo -db 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./examples/demo -db 'redis://127.0.0.1:6379/0?prefix=demo:'
//
// Open http://localhost:8080 and sign in. Without -smtp the sign-in,
// verification and reset links (and codes) are printed here, on the console. See README.md for every flag.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run parses the flags (defaults from the environment), builds the app and
// serves it on 127.0.0.1 until interrupted.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, port, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	cfg.Console = stdout
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	setup, cancel := context.WithTimeout(ctx, time.Minute)
	a, err := newApp(setup, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }()

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d (is another program using it? try -port): %w", port, err)
	}
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "authport demo: data in %s\nopen %s and sign in (Ctrl-C stops)\n", a.store.desc, cfg.URL)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// parseFlags reads the command line; every flag has an environment
// variable for its default.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (appConfig, int, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg appConfig
	port := fs.Int("port", 8080, "port to listen on, on 127.0.0.1 (env PORT)")
	fs.StringVar(&cfg.DB, "db", env("DATABASE_URL", ""), "adapter: bbolt:PATH, memory, postgres://…, mysql://… (or user@tcp(host)/db), sqlite:PATH, redis://…[?prefix=P], mongodb://…/DB (env DATABASE_URL; default bbolt in "+defaultBoltPath()+")")
	fs.StringVar(&cfg.Secret, "secret", getenv("AUTH_SECRET"), "secret for cookies and tokens (env AUTH_SECRET; default: a random one, so sessions end when the demo stops)")
	fs.StringVar(&cfg.SMTP, "smtp", getenv("SMTP_URL"), "mail server for sign-in links: smtp://user:pass@host:587, smtps://…, smtp://host:25?tls=none (env SMTP_URL; default: print the links here)")
	fs.StringVar(&cfg.From, "from", getenv("EMAIL_FROM"), "sender of the sign-in e-mails (env EMAIL_FROM)")
	fs.StringVar(&cfg.OIDC.Issuer, "oidc-issuer", getenv("OIDC_ISSUER"), "OpenID provider's issuer URL (env OIDC_ISSUER); its redirect URI is URL/auth/callback/ID")
	fs.StringVar(&cfg.OIDC.ClientID, "oidc-client-id", getenv("OIDC_CLIENT_ID"), "OIDC client id (env OIDC_CLIENT_ID)")
	fs.StringVar(&cfg.OIDC.ClientSecret, "oidc-client-secret", getenv("OIDC_CLIENT_SECRET"), "OIDC client secret (env OIDC_CLIENT_SECRET)")
	fs.StringVar(&cfg.OIDC.ID, "oidc-id", env("OIDC_ID", "dex"), "OIDC provider id, part of the redirect URI (env OIDC_ID)")
	fs.StringVar(&cfg.OIDC.Name, "oidc-name", env("OIDC_NAME", "Dex"), "OIDC provider name on the sign-in button (env OIDC_NAME)")
	fs.StringVar(&cfg.Credentials, "credentials", getenv("DEMO_CREDENTIALS"), "user:password accepted by a credentials form (env DEMO_CREDENTIALS; default: no form)")
	if p := getenv("PORT"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return cfg, 0, fmt.Errorf("PORT=%q is not a number", p)
		}
		*port = n
	}
	if err := fs.Parse(args); err != nil {
		return cfg, 0, err
	}
	if fs.NArg() > 0 {
		return cfg, 0, fmt.Errorf("unexpected arguments %q: every setting is a flag (see -help)", fs.Args())
	}
	if *port < 1 || *port > 65535 {
		return cfg, 0, fmt.Errorf("-port %d: want 1-65535", *port)
	}
	// localhost, not 127.0.0.1: a passkey's relying party id must be a
	// host name, and browsers treat http://localhost as a secure context.
	cfg.URL = "http://localhost:" + strconv.Itoa(*port)
	if cfg.Secret == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return cfg, 0, err
		}
		cfg.Secret = base64.RawURLEncoding.EncodeToString(b)
	}
	return cfg, *port, nil
}
