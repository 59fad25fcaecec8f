package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/postgres-gorm/pgxread"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/oauth"
	"github.com/authport/authport/totp"
)

// Config is what the application needs to run; see the README for the
// environment variables it comes from.
type Config struct {
	// DatabaseURL is the PostgreSQL connection string. When it is empty
	// the application keeps its users in the bbolt file DatabaseFile.
	DatabaseURL string
	// DatabaseFile is the bbolt file used when DatabaseURL is empty.
	DatabaseFile string
	// BaseURL is where the auth routes are served, e.g.
	// https://app.example.com/auth.
	BaseURL string
	// Secrets sign and encrypt cookies and tokens, newest first.
	Secrets []string
	// Issuer, ClientID and ClientSecret configure the company's OpenID
	// provider (Okta, Entra ID, Keycloak, dex …).
	Issuer, ClientID, ClientSecret string
	// AllowedDomains are the e-mail domains that may sign in.
	AllowedDomains []string
	// Admins are the addresses that get the admin role when they first
	// sign in.
	Admins []string
	// Logger receives the application's and authport's errors.
	Logger *slog.Logger
	// FreshFor is how recently a user must have proven who they are to
	// open /settings; zero means DefaultFreshFor.
	FreshFor time.Duration
}

// DefaultFreshFor is Config.FreshFor's default: /settings asks users who
// signed in more than five minutes ago to prove who they are again.
const DefaultFreshFor = 5 * time.Minute

// providerID is the id of the OpenID provider in URLs (/auth/signin/sso)
// and on the stored accounts.
const providerID = "sso"

// Role is the application's own field on users: a column "role" of the
// users table, which authport reads and writes with the user.
var Role = core.UserField[string]{Name: "role"}

// App is the running application: its HTTP handler and what it closes.
type App struct {
	http.Handler
	close func() error
}

// Close closes the database connections.
func (a *App) Close() error { return a.close() }

// New connects to the database (PostgreSQL, or the bbolt file when no
// DatabaseURL is given), creates the tables (authport's and the
// application's role column) and wires sign-in.
func New(ctx context.Context, cfg Config) (*App, error) {
	if cfg.DatabaseURL == "" {
		if cfg.DatabaseFile == "" {
			return nil, errors.New("no database: set DATABASE_URL to a PostgreSQL URL (Config.DatabaseURL), or Config.DatabaseFile to a bbolt file")
		}
		store, err := bboltadapter.Open(ctx, cfg.DatabaseFile, bboltadapter.WithLockTimeout(time.Second))
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", cfg.DatabaseFile, err)
		}
		// bbolt keeps the role with the user's record: no column to add.
		app, err := newApp(cfg, store)
		if err != nil {
			store.Close()
			return nil, err
		}
		return &App{Handler: app, close: store.Close}, nil
	}
	db, err := gorm.Open(postgres.Open(cfg.DatabaseURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL (DATABASE_URL): %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	store, err := migratePostgres(ctx, db)
	var app http.Handler
	if err == nil {
		app, err = newApp(cfg, store)
	}
	if err != nil {
		sqlDB.Close()
		return nil, err
	}
	return &App{Handler: app, close: sqlDB.Close}, nil
}

// migratePostgres creates authport's tables, then the application's own
// column on its users table, which authport reads and writes as the "role"
// field. The session read of every request goes through pgx itself
// (pgxread), which a PostgreSQL program links anyway.
func migratePostgres(ctx context.Context, db *gorm.DB) (*gormadapter.Adapter, error) {
	store, err := gormadapter.New(ctx, db, gormadapter.WithRowReader(pgxread.New()))
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		return nil, err
	}
	if err := db.WithContext(ctx).Exec(`ALTER TABLE users ADD COLUMN IF NOT EXISTS role TEXT`).Error; err != nil {
		return nil, fmt.Errorf("adding the role column: %w", err)
	}
	return store, nil
}

// newApp wires sign-in on store, an authport adapter.
func newApp(cfg Config, store any) (http.Handler, error) {
	sso := &provider.OIDCConfig[map[string]any]{}
	sso.ID, sso.Name, sso.Issuer = providerID, "Company SSO", cfg.Issuer
	sso.ClientID, sso.ClientSecret = cfg.ClientID, cfg.ClientSecret
	// offline_access: a refresh token, so that the API below can call the
	// provider after the access token has expired.
	sso.Authorization.Params = url.Values{"scope": {"openid email profile offline_access"}}

	// Second factors: users may add an authenticator app (TOTP) at
	// /auth/account/security; it is asked for at sign-in and proves who
	// they are again when /settings wants a fresh session.
	codes, err := totp.New(totp.Options{})
	if err != nil {
		return nil, err
	}
	var a *auth.Auth
	a, err = auth.New(auth.Config{
		Adapter:       store,
		Providers:     []provider.Provider{sso},
		Secrets:       cfg.Secrets,
		BaseURL:       cfg.BaseURL,
		Logger:        cfg.Logger,
		SecondFactors: auth.SecondFactorOptions{Enabled: true, TOTP: codes},
		Callbacks: auth.Callbacks{
			// Only the company's domains: anyone else gets the
			// AccessDenied page, and nothing is written.
			SignIn: func(_ context.Context, p auth.SignInParams) (auth.SignInDecision, error) {
				_, domain, _ := strings.Cut(p.User.Email, "@")
				return auth.SignInDecision{Deny: !slices.Contains(cfg.AllowedDomains, domain)}, nil
			},
			// The role, in GET /auth/session and in handler.FromContext.
			Session: func(_ context.Context, p auth.SessionParams) (map[string]any, error) {
				user, _ := p.Session["user"].(map[string]any)
				if user != nil {
					user["role"] = roleOf(p.User)
				}
				return p.Session, nil
			},
		},
		Events: auth.Events{
			// First sign-in of an admin's address: give it the role.
			CreateUser: func(ctx context.Context, u core.User) error {
				if !slices.Contains(cfg.Admins, u.Email) {
					return nil
				}
				up := core.UserUpdate{ID: u.ID}
				if err := Role.Set(&up, "admin"); err != nil {
					return err
				}
				_, err := a.UpdateUser(ctx, up)
				return err
			},
		},
	})
	if err != nil {
		return nil, err
	}
	flow, err := oauth.New(oauth.Config{Auth: a})
	if err != nil {
		return nil, err
	}
	// Bearer: API clients (a CLI, a mobile app) send the session token in
	// Authorization: Bearer; browsers keep using the cookie.
	h, err := handler.New(handler.Config{Auth: a, OAuth: flow, Bearer: true})
	if err != nil {
		return nil, err
	}
	api := &api{flow: flow, issuer: cfg.Issuer, client: &http.Client{Timeout: 10 * time.Second}}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.Handle("GET /{$}", h.Require(http.HandlerFunc(home)))
	mux.Handle("GET /api/me", h.Require(http.HandlerFunc(api.me)))
	mux.Handle("GET /api/profile", h.Require(http.HandlerFunc(api.profile)))
	mux.Handle("GET /api/admin", h.Require(requireRole("admin", http.HandlerFunc(api.me))))
	// A sensitive page: only a session whose user proved who they are
	// within FreshFor. A browser is sent to /auth/reauth and back; an API
	// client gets 401 with RFC 9470's challenge.
	freshFor := cfg.FreshFor
	if freshFor <= 0 {
		freshFor = DefaultFreshFor
	}
	mux.Handle("GET /settings", h.RequireFresh(auth.StepUp{MaxAge: freshFor})(http.HandlerFunc(settings)))
	return mux, nil
}

// settings is the page behind a fresh session: it shows when and how the
// user last proved who they are.
func settings(w http.ResponseWriter, r *http.Request) {
	s, _ := handler.FromContext(r.Context())
	au := s.Authentication()
	fmt.Fprintf(w, "Settings of %s: you proved who you are at %s (%s). Second factors: /auth/account/security.\n",
		s.CoreUser().Email, au.Time.UTC().Format(time.RFC3339), strings.Join(au.Methods, ", "))
}

// roleOf is the user's role; users without one are members.
func roleOf(u *core.User) string {
	if r, ok, err := Role.Get(u); ok && err == nil {
		return r
	}
	return "member"
}

func home(w http.ResponseWriter, r *http.Request) {
	s, _ := handler.FromContext(r.Context())
	fmt.Fprintf(w, "Signed in as %s (%s). Sign out at /auth/signout.\n", s.CoreUser().Email, roleOf(s.CoreUser()))
}

// requireRole lets only users with the role through.
func requireRole(role string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := handler.FromContext(r.Context())
		if roleOf(s.CoreUser()) != role {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// api is the application's JSON API: it accepts the session cookie or a
// bearer token (handler.Require does both).
type api struct {
	flow   *oauth.Flow
	issuer string
	client *http.Client

	mu       sync.Mutex
	userinfo string // the provider's userinfo endpoint, once discovered
}

// me answers who is signed in, with the role.
func (a *api) me(w http.ResponseWriter, r *http.Request) {
	s, _ := handler.FromContext(r.Context())
	u := s.CoreUser()
	writeJSON(w, http.StatusOK, map[string]any{"id": u.ID, "email": u.Email, "role": roleOf(u)})
}

// profile calls the provider's API (its userinfo endpoint) for the user,
// with an access token that authport refreshes when it has expired.
func (a *api) profile(w http.ResponseWriter, r *http.Request) {
	s, _ := handler.FromContext(r.Context())
	token, err := a.flow.AccessToken(r.Context(), s.User.ID, providerID)
	if errors.Is(err, oauth.ErrSignInAgain) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "sign in again"})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	userinfo, err := a.userinfoURL(r.Context())
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, userinfo, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := a.client.Do(req)
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	defer res.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(res.StatusCode)
	io.Copy(w, io.LimitReader(res.Body, 1<<20))
}

// userinfoURL reads the provider's userinfo endpoint from its discovery
// document, once: a failed discovery is tried again on the next call.
func (a *api) userinfoURL(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.userinfo != "" {
		return a.userinfo, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(a.issuer, "/")+"/.well-known/openid-configuration", nil)
	if err != nil {
		return "", err
	}
	res, err := a.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("provider discovery: %w", err)
	}
	defer res.Body.Close()
	var doc struct {
		Userinfo string `json:"userinfo_endpoint"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&doc); err != nil || doc.Userinfo == "" {
		return "", fmt.Errorf("provider discovery: no userinfo_endpoint (%v)", err)
	}
	a.userinfo = doc.Userinfo
	return a.userinfo, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
