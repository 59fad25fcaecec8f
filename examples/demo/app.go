package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/mail"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/totp"
)

// appConfig is everything the demo can be told, by flags (main) or by a
// test building the app in-process.
type appConfig struct {
	// URL is the origin the browser uses, e.g. http://localhost:8080; the
	// auth routes are under URL/auth. Passkeys need a host name (not an IP
	// address) as relying party id: use localhost, not 127.0.0.1.
	URL string
	// DB names the adapter; see openStore. Empty means bbolt in the temp
	// directory.
	DB string
	// Secret signs and encrypts cookies and hashes tokens (AUTH_SECRET).
	Secret string
	// SMTP is the mail server for sign-in links, e.g.
	// smtp://user:pass@smtp.example.com:587 (STARTTLS required),
	// smtps://…:465, or smtp://127.0.0.1:2525?tls=none; empty prints the
	// links to Console instead.
	SMTP string
	// From is the sender of the sign-in e-mails.
	From string
	// OIDC signs in with an OpenID provider when Issuer is set.
	OIDC oidcConfig
	// Credentials, "user:password", adds a credentials provider accepting
	// that one pair (demo only: a real app checks a password hash). With
	// it, sessions are JWT cookies (credentials need them).
	Credentials string
	// Console receives the sign-in links when no SMTP server is set, and
	// the start-up lines.
	Console io.Writer
	// Logger logs the handler's errors; nil discards them.
	Logger *slog.Logger
	// Now is the clock of sign-in (sessions, pending sign-ins, TOTP time
	// steps, the attempt caps); nil means time.Now. Tests set it to step
	// through TOTP codes without waiting for them.
	Now func() time.Time
}

// oidcConfig is an OpenID provider, e.g. dex or Keycloak.
type oidcConfig struct {
	ID, Name     string // "dex", "Dex" by default
	Issuer       string
	ClientID     string
	ClientSecret string
}

// app is the demo: its routes, and the adapter it signs users in through.
type app struct {
	http.Handler
	auth  *handler.Handler
	store *store
	base  string // URL of the auth routes
	// passwords says password sign-up is on (the adapter keeps password
	// hashes).
	passwords bool
	// factors says second factors are on (the adapter keeps factors):
	// authenticator apps, recovery codes and passkeys as a second step.
	factors bool
}

// Close releases the adapter's connections or file.
func (a *app) Close() error { return a.store.close() }

// newApp builds the demo from cfg: it opens the adapter (creating tables or
// indexes where needed), configures the providers and mounts the routes.
func newApp(ctx context.Context, cfg appConfig) (*app, error) {
	origin, err := url.Parse(cfg.URL)
	if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || origin.Host == "" || (origin.Path != "" && origin.Path != "/") {
		return nil, fmt.Errorf("URL %q: want an origin such as http://localhost:8080", cfg.URL)
	}
	origin.Path = ""
	if cfg.Secret == "" {
		return nil, errors.New("no secret: set AUTH_SECRET (e.g. openssl rand -base64 33)")
	}
	if cfg.Console == nil {
		cfg.Console = io.Discard
	}
	base := origin.String() + "/auth"

	from, send, err := mailer(cfg)
	if err != nil {
		return nil, err
	}
	providers := []provider.Provider{provider.Email(from, send)}
	if cfg.OIDC.Issuer != "" {
		o := cfg.OIDC
		if o.ID == "" {
			o.ID = "dex"
		}
		if o.Name == "" {
			o.Name = "Dex"
		}
		if o.ClientID == "" {
			return nil, fmt.Errorf("OIDC issuer %s: set its client id (-oidc-client-id)", o.Issuer)
		}
		providers = append(providers, &provider.OIDCConfig[map[string]any]{OAuth2Config: provider.OAuth2Config[map[string]any]{
			ID: o.ID, Name: o.Name, Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			Checks: provider.Checks{provider.CheckPKCE, provider.CheckState, provider.CheckNonce},
		}})
	}
	if cfg.Credentials != "" {
		c, err := credentialsProvider(cfg.Credentials)
		if err != nil {
			return nil, err
		}
		providers = append(providers, c)
	}
	pk := provider.Passkey()
	pk.RPID, pk.RPName, pk.RPOrigin = origin.Hostname(), "authport demo", origin.String()
	providers = append(providers, pk)

	st, err := openStore(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = st.close()
		}
	}()
	// Auth.js (and the handler) refuse credentials with database
	// sessions: with -credentials every session is an Auth.js JWT cookie.
	sessions := auth.SessionOptions{Strategy: auth.StrategyDatabase}
	if cfg.Credentials != "" {
		sessions.Strategy = auth.StrategyJWT
	}
	// Password sign-up, its mails sent like the sign-in links, with a
	// one-time code beside each link; on an adapter that keeps password
	// hashes (and, with database sessions, can end a user's sessions when
	// the password is reset).
	passwords := keepsPasswords(st.adapter, sessions.Strategy)
	if passwords {
		pw := provider.Password(from, send)
		pw.Codes = true
		providers = append(providers[:1], append([]provider.Provider{pw}, providers[1:]...)...)
	} else {
		fmt.Fprintf(cfg.Console, "password sign-up is off: %s keeps no password hashes\n", st.desc)
	}
	// Second factors (an authenticator app, recovery codes, a passkey as
	// the second step, trusted browsers) where the adapter keeps them.
	var second auth.SecondFactorOptions
	factors := keepsFactors(st.adapter)
	if factors {
		codes, err := totp.New(totp.Options{})
		if err != nil {
			return nil, fmt.Errorf("configure TOTP: %w", err)
		}
		second = auth.SecondFactorOptions{Enabled: true, TOTP: codes, Issuer: "authport demo", TrustDevice: 30 * 24 * time.Hour}
	} else {
		fmt.Fprintf(cfg.Console, "second factors are off: %s keeps no factors\n", st.desc)
	}
	// The attempt caps count on the sign-in clock (the in-process store
	// core/auth makes by itself counts on time.Now).
	var limiter ratelimit.Store
	if cfg.Now != nil {
		limiter = ratelimit.NewMemory(ratelimit.WithClock(cfg.Now))
	}
	a, err := auth.New(auth.Config{
		Adapter: st.adapter, Providers: providers, Secrets: []string{cfg.Secret}, BaseURL: base, Session: sessions,
		SecondFactors: second, Now: cfg.Now, RateLimiter: limiter,
	})
	if err != nil {
		return nil, fmt.Errorf("configure authport: %w", err)
	}
	keys, err := passkey.New(passkey.Config{
		Auth: a, RPID: pk.RPID, RPName: pk.RPName, Origins: []string{pk.RPOrigin},
	})
	if err != nil {
		return nil, fmt.Errorf("configure passkeys: %w", err)
	}
	h, err := handler.New(handler.Config{
		Auth: a, Passkeys: keys, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("configure the auth routes: %w", err)
	}

	d := &app{auth: h, store: st, base: base, passwords: passwords, factors: factors}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.Handle("GET /{$}", h.Middleware(http.HandlerFunc(d.home)))
	mux.Handle("GET /protected", h.Require(http.HandlerFunc(d.protected)))
	d.Handler = securityHeaders(mux)
	ok = true
	return d, nil
}

// keepsPasswords reports whether the adapter keeps password hashes
// (swapPasswordHash) and, with database sessions, ends a user's sessions
// (deleteSessionsByUserId), as password sign-in needs.
func keepsPasswords(adapter any, strategy auth.Strategy) bool {
	caps := core.Probe(adapter)
	return caps.HasExtension(core.ExtensionSwapPasswordHash) &&
		(strategy != auth.StrategyDatabase || caps.HasExtension(core.ExtensionDeleteSessionsByUserID))
}

// keepsFactors reports whether the adapter keeps second factors (the
// factor methods are all-or-none: core.FactorMethods).
func keepsFactors(adapter any) bool {
	return core.Probe(adapter).HasExtension(core.ExtensionListFactorsByUserID)
}

// mailer returns the sender of the e-mails (sign-in links, and the
// password provider's verification and reset mails) and how they are
// sent: through cfg.SMTP, or printed to cfg.Console when there is no SMTP
// server.
func mailer(cfg appConfig) (from string, send func(context.Context, provider.VerificationRequest) error, err error) {
	from = cfg.From
	if from == "" {
		from = "authport demo <demo@localhost>"
	}
	if cfg.SMTP == "" {
		console := cfg.Console
		return from, func(_ context.Context, req provider.VerificationRequest) error {
			_, err := fmt.Fprintf(console, "\n%s for %s (valid until %s):\n\n    %s\n\n",
				mailTitle(req.Purpose), req.Identifier, req.Expires.Format(time.Kitchen), req.URL)
			if err == nil && req.Code != "" {
				// The demo's console is the user's mailbox: the code goes
				// where the link goes.
				_, err = fmt.Fprintf(console, "    or the code %s, in the browser that asked for it\n\n", req.Code)
			}
			return err
		}, nil
	}
	mc, err := smtpConfig(cfg.SMTP)
	if err != nil {
		return "", nil, err
	}
	mc.From = from
	s, err := mail.New(mc)
	if err != nil {
		return "", nil, fmt.Errorf("-smtp: %w", err)
	}
	return from, s.SendVerificationRequest, nil
}

// mailTitle names a mail of the purpose on the console.
func mailTitle(p provider.Purpose) string {
	switch p {
	case provider.PurposeVerifyEmail:
		return "Verification link"
	case provider.PurposeResetPassword:
		return "Password reset link"
	case provider.PurposeAccountExists:
		return "Someone signed up again with your address; sign in at"
	}
	return "Sign-in link"
}

// smtpConfig reads smtp://[user:pass@]host[:port][?tls=mandatory|opportunistic|none]
// or smtps://… (TLS from the first byte).
func smtpConfig(raw string) (mail.Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return mail.Config{}, fmt.Errorf("-smtp %q: want smtp://[user:pass@]host[:port][?tls=none|opportunistic|mandatory] or smtps://…", raw)
	}
	var c mail.Config
	c.Host = u.Hostname()
	if p := u.Port(); p != "" {
		if c.Port, err = strconv.Atoi(p); err != nil {
			return mail.Config{}, fmt.Errorf("-smtp: bad port %q", p)
		}
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	switch tls := u.Query().Get("tls"); {
	case u.Scheme == "smtps":
		c.TLS = mail.TLSImplicit
	case u.Scheme != "smtp":
		return mail.Config{}, fmt.Errorf("-smtp: scheme %q, want smtp or smtps", u.Scheme)
	case tls == "" || tls == "mandatory":
		c.TLS = mail.TLSMandatory
	case tls == "opportunistic":
		c.TLS = mail.TLSOpportunistic
	case tls == "none":
		c.TLS = mail.TLSNone
	default:
		return mail.Config{}, fmt.Errorf("-smtp: tls=%q, want mandatory, opportunistic or none", tls)
	}
	return c, nil
}

// credentialsProvider accepts the one "user:password" pair it is given.
func credentialsProvider(pair string) (*provider.CredentialsConfig, error) {
	user, pass, ok := strings.Cut(pair, ":")
	if !ok || user == "" || pass == "" {
		return nil, errors.New("-credentials: want user:password")
	}
	c := provider.Credentials(func(_ context.Context, req provider.AuthorizeRequest) (*provider.User, error) {
		u, p := req.Credentials["username"], req.Credentials["password"]
		if subtle.ConstantTimeCompare([]byte(u), []byte(user))&subtle.ConstantTimeCompare([]byte(p), []byte(pass)) != 1 {
			return nil, nil
		}
		name := user
		return &provider.User{ID: "demo-" + user, Email: user + "@example.com", Name: &name}, nil
	})
	c.Name = "Demo credentials"
	c.Fields = []provider.CredentialField{
		{Name: "username", Label: "Username", Type: "text"},
		{Name: "password", Label: "Password", Type: "password"},
	}
	return c, nil
}

// securityHeaders sets the headers every page of the demo carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}
