package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// Settings are the values configured once in [Config], as [New] parsed and
// checked them, defaults applied. Every module built on the Auth (handler,
// oauth, passkey) reads them here instead of taking them again.
type Settings struct {
	// BaseURL is [Config.BaseURL] without a trailing slash, e.g.
	// "https://example.com/auth", or "" when none was configured.
	BaseURL string
	// Origin is BaseURL's scheme and host, e.g. "https://example.com".
	Origin string
	// Hostname is BaseURL's host without a port, e.g. "example.com": the
	// default relying party id of passkeys.
	Hostname string
	// BasePath is BaseURL's path, escaped, without a trailing slash, e.g.
	// "/auth" ("" for a BaseURL at the root).
	BasePath string
	// HTTPS reports whether BaseURL is https.
	HTTPS bool
	// Cookies are [Config.Cookies], checked against BaseURL: whether
	// cookies are Secure (with the __Secure-/__Host- prefixes), their
	// SameSite and Domain.
	Cookies CookieSettings
	// Secrets are [Config.Secrets], newest first (a copy).
	Secrets []string
	// AllowShortSecrets is [Config.AllowShortSecrets].
	AllowShortSecrets bool
	// Now is the clock: [Config.Now], or time.Now.
	Now func() time.Time
	// Session is the session strategy and lifetime, defaults applied;
	// UpdateAge is never nil.
	Session SessionOptions
	// Logger is [Config.Logger], or nil when none was set.
	Logger *slog.Logger
	// AllowDangerousUnverifiedEmail is [Config.AllowDangerousUnverifiedEmail].
	AllowDangerousUnverifiedEmail bool
	// SecondFactors is [Config.SecondFactors] with its defaults applied
	// (PendingMaxAge, Attempts, Issuer), or the zero value when second
	// factors are off: whether they are Enabled (the adapter then has the
	// factor methods), whether every user needs one, how long a trusted
	// browser is trusted (TrustDevice; zero: never).
	SecondFactors SecondFactorOptions
}

// parseBaseURL checks Config.BaseURL, and the cookie options against it,
// and fills the settings' URL and cookie fields.
// An empty BaseURL is allowed here (nothing needs it without e-mail
// sign-in or the handler); the modules that need one say so.
func (s *Settings) parseBaseURL(raw string, cookies CookieOptions) error {
	raw = strings.TrimSuffix(raw, "/")
	if raw == "" {
		if cookies != (CookieOptions{}) {
			return fmt.Errorf("%w: Cookies are set but BaseURL is not: the cookie options are checked against it; set BaseURL (AUTH_URL)", core.ErrInvalidConfig)
		}
		s.Cookies = CookieSettings{SameSite: http.SameSiteLaxMode}
		return nil
	}
	u, err := parseBase(raw)
	if err != nil {
		return fmt.Errorf("%w: BaseURL %q must be an absolute http(s) URL without user, query or fragment, e.g. \"https://example.com/auth\": the auth routes are served there and e-mail links point at it (AUTH_URL sets it)", core.ErrInvalidConfig, raw)
	}
	s.Origin = u.Scheme + "://" + u.Host
	s.Hostname = u.Hostname()
	s.BasePath = strings.TrimSuffix(u.EscapedPath(), "/")
	s.BaseURL = s.Origin + s.BasePath
	s.HTTPS = u.Scheme == "https"
	s.Cookies, err = cookies.check(u)
	return err
}

// parseBase parses a base URL: an absolute http(s) URL without user,
// query or fragment. It is the one parser of the base URL, for New and
// for SetEnvDefaults' reading of AUTH_URL.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New("not an absolute http(s) URL without user, query or fragment")
	}
	// Host names are case-insensitive, and browsers send them lowercase
	// (in an Origin header, say): the settings keep them so.
	u.Host = strings.ToLower(u.Host)
	return u, nil
}

// Settings returns the configured settings, parsed and with defaults
// applied (a copy: changing it changes nothing).
func (a *Auth) Settings() Settings {
	s := a.settings
	s.Secrets = append([]string(nil), s.Secrets...)
	updateAge := a.updateAge
	s.Session = SessionOptions{Strategy: a.strategy, MaxAge: a.maxAge, UpdateAge: &updateAge}
	if a.logSet {
		s.Logger = a.log
	}
	s.SecondFactors = a.sf
	return s
}

// Edge is what authport's own web modules (handler, oauth, passkey) use of
// an [Auth] beyond its public methods: provider lookups by type,
// single-use records, reading and ending sessions with the callbacks and
// events that go with them. An application
// has no need of it; get it with [Auth.Edge].
type Edge struct{ a *Auth }

// Edge returns the Auth's [Edge].
func (a *Auth) Edge() Edge { return Edge{a} }

// OAuthProvider returns the configured OAuth or OIDC provider with the
// id, as [New] validated it (defaults applied). The error matches
// [core.ErrNotFound] when no provider has the id, and
// [core.ErrInvalidInput] when it is not an OAuth or OIDC provider.
func (e Edge) OAuthProvider(id string) (provider.OAuthProvider, error) {
	return providerOf[provider.OAuthProvider](e.a, id)
}

// WebAuthnProvider returns the configured WebAuthn provider with the id,
// with errors as [Edge.OAuthProvider]'s.
func (e Edge) WebAuthnProvider(id string) (*provider.WebAuthnConfig, error) {
	return providerOf[*provider.WebAuthnConfig](e.a, id)
}

// CheckSecrets is [CheckSecrets] with the Auth's
// [Config.AllowShortSecrets]: a module that takes secrets of its own (the
// handler's Reader) checks them with it, so that one setting governs them
// all.
func (e Edge) CheckSecrets(secrets []string) error {
	return CheckSecrets(secrets, e.a.allowShortSecrets)
}

// UseOnce records, through the adapter, that the single-use value key of
// the kind scope (e.g. "oauth-callback") has been used, and returns an
// error matching [core.ErrAlreadyExists] when it was recorded before and
// the record has not expired. The record is a verification token (identifier
// [UseOnceIdentifierPrefix]+scope, token the hex SHA-256 of scope and key,
// expiring at expires): every instance sharing the store sees it, the
// store's uniqueness of (identifier, token) makes two concurrent uses give
// one success, and PurgeExpired or a TTL removes it afterwards. key itself
// is never stored.
//
// An adapter without createVerificationToken gives an error matching
// [core.ErrMissingAdapterMethod]; the caller then keeps the record itself
// (in process). Any other adapter failure comes back as an [*AdapterError].
func (e Edge) UseOnce(ctx context.Context, scope, key string, expires time.Time) error {
	return e.a.useOnce(ctx, scope, key, expires)
}

// WebAuthnAuthenticator returns the stored authenticator with the
// credential id, or nil.
func (e Edge) WebAuthnAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	return call(e.a, "WebAuthn authentication", func(g core.AuthenticatorGetter) (*core.Authenticator, error) {
		return g.GetAuthenticator(ctx, credentialID)
	})
}

// Redirect applies [Callbacks.Redirect] to a callbackUrl: the URL to go
// to and true, or false to refuse it. Without a Redirect callback,
// fallback decides (the handler's same-origin policy).
func (e Edge) Redirect(ctx context.Context, p RedirectParams, fallback func(raw, origin string) (string, bool)) (string, bool) {
	if e.a.callbacks.Redirect == nil {
		return fallback(p.URL, p.Origin)
	}
	// A panicking callback refuses the URL (runCallback logs it).
	type answer struct {
		target string
		ok     bool
	}
	r, err := runCallback(e.a, ctx, "Redirect", func() (answer, error) {
		target, ok := e.a.callbacks.Redirect(ctx, p)
		return answer{target, ok}, nil
	})
	if err != nil || !r.ok || r.target == "" {
		return "", false
	}
	return r.target, true
}
