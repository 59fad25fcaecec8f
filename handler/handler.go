package handler

import (
	"cmp"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
	"github.com/authport/authport/tokens"
)

// Config configures a Handler. Secrets (CSRF, JWT sessions), the clock and
// the base URL are the Auth's (auth.Config.Secrets, Now and BaseURL):
// configured once, there.
type Config struct {
	// Auth is the configured library: providers, adapter, sessions.
	// Required.
	Auth *auth.Auth
	// OAuth runs OAuth and OIDC sign-in; nil builds one from Auth when
	// OAuth or OIDC providers are configured (set it to give the flow an
	// HTTP client of its own).
	OAuth *oauth.Flow
	// Passkeys runs the WebAuthn ceremonies; required when a WebAuthn
	// provider is configured.
	Passkeys Passkeys
	// Pages are custom pages replacing the built-in ones.
	Pages Pages
	// Theme styles the built-in pages.
	Theme Theme
	// RateLimit limits sign-in e-mails and other sign-in attempts per
	// identifier and per client; the zero value is on, with the default
	// limits, in process. See [RateLimit].
	RateLimit RateLimit
	// TrustedProxies are the addresses of the reverse proxies in front of
	// the handler (a load balancer's subnet, say 10.0.0.0/8). A request
	// from one of them is from the client its X-Forwarded-For names,
	// walked from the right past the trusted proxies (see [ClientIP]);
	// from any other address, the header is ignored, as any client can
	// set it. The client's address keys the per-client rate limits and is
	// recorded with the sessions it signs in (auth.Client). Empty (the
	// default) trusts no proxy.
	TrustedProxies []netip.Prefix
	// MultiSession is how many accounts one browser may hold signed in at
	// once, with database sessions: one active, the others kept aside
	// and switched to through the /accounts routes (see the cookie layout
	// in multisession.go's comment and the README). 0 or 1 (the default)
	// is one account, as in Auth.js: the /accounts routes answer 404.
	MultiSession int
	// Bearer lets Middleware, Require and Session (the embedded Reader)
	// read a session from an "Authorization: Bearer <token>" header, for
	// API clients; off by default. See ReaderConfig.Bearer. The handler's
	// own routes read the session cookie only.
	Bearer bool
	// Tokens serves tokens for native clients (mobile, desktop and
	// command-line applications) at /authorize, /token, /jwks, /revoke and
	// /introspect (see tokens.go); nil (the default) leaves those routes
	// out (404). Build it with tokens.New on the same Auth.
	Tokens *tokens.Issuer
	// FactorFreshness is how recently the user must have authenticated
	// (auth_time) to enrol or remove a second factor, or regenerate
	// recovery codes, through the /two-factor routes, and for a user who
	// has a second factor that authentication must include it (a code or
	// a passkey); an older or weaker session is sent to re-authenticate
	// (GET /reauth) first. Zero means
	// DefaultFactorFreshness (10 minutes); negative turns the check off.
	FactorFreshness time.Duration
	// Logger receives one record per failed sign-in (WARN, with the error
	// code and the reason) and per store or configuration error (ERROR);
	// nil means the Auth's logger (auth.Config.Logger), or slog.Default(),
	// read when New runs, when the Auth has none; give
	// slog.New(slog.DiscardHandler) to silence it. It never receives
	// tokens, cookies or secrets.
	Logger *slog.Logger
	// BetterAuth, when set, keeps database sessions in Better Auth's
	// signed session cookie instead of Auth.js's, so that a Better Auth
	// app with the same secret and sessions table accepts the sessions
	// the handler signs in (and the handler the app's): see
	// [BetterAuthCookies]. It needs database sessions.
	BetterAuth *BetterAuthCookies
}

// Pages are the URLs of custom pages (absolute, or paths on the site).
// When one is set, the handler's route redirects there with the same query,
// and error redirects go there, as Auth.js's pages option does.
type Pages struct {
	SignIn, SignOut, Error, VerifyRequest string
}

// Theme styles the built-in pages.
type Theme struct {
	// BrandColor colours the page's accents, e.g. "#1d4ed8".
	BrandColor string
	// Logo is the URL of a logo shown above the forms.
	Logo string
	// ButtonText is the text colour of accent buttons, e.g. "#fff".
	ButtonText string
	// ProviderLogos is where the built-in providers' logos are: a
	// provider logo that starts with "/" (the built-ins' "/github.svg", as
	// in Auth.js) is shown from ProviderLogos + that path, e.g.
	// "https://authjs.dev/img/providers" (Auth.js's own, an external
	// request) or a path where the site serves such files. Empty (the
	// default) omits those logos, so that no image points at a path nothing
	// serves; a logo given as an absolute URL is always shown.
	ProviderLogos string
}

// Handler serves Auth.js's routes under BaseURL's path: providers, csrf,
// signin, callback, session, signout, verify-request, error, and for
// passkeys webauthn-options and passkey.js. It is an http.Handler; mount it
// with its path prefix, e.g. mux.Handle("/auth/", h). It is safe for
// concurrent use.
type Handler struct {
	// Reader reads the sessions; it also holds the Auth, the codec, the
	// cookie names, the logger and the clock the handler uses.
	*Reader
	flow      *oauth.Flow
	passkeys  Passkeys
	secrets   []string
	cookies   auth.CookieSettings // the checked auth.Config.Cookies
	base      string              // BaseURL without a trailing slash
	basePath  string              // its path, e.g. "/auth"
	prefix    string              // basePath + "/", the routes' path prefix
	origin    string              // scheme://host
	providers []provider.Provider
	byID      map[string]provider.Provider
	sessions  auth.SessionOptions
	pages     Pages
	theme     Theme
	tmpl      *template.Template
	limits    *limiter // nil: no rate limits
	trusted   []netip.Prefix
	// multiSession is Config.MultiSession.
	multiSession int
	// freshness is Config.FactorFreshness, its default applied.
	freshness time.Duration
	routes    map[routeKey]route
	tokens    *tokens.Issuer // Config.Tokens
	// mountWarned makes the BaseURL/mount mismatch log once.
	mountWarned sync.Once
	// originWarned makes the BaseURL/request host mismatch log once.
	originWarned sync.Once
}

// New checks cfg and returns the Handler. Its error matches
// core.ErrInvalidConfig and says what to fix.
func New(cfg Config) (*Handler, error) {
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: Config.Auth is required (build it with auth.New)", core.ErrInvalidConfig)
	}
	// The base URL, the secrets, the clock and the cookie options are the
	// Auth's, parsed and checked once by auth.New.
	settings := cfg.Auth.Settings()
	if settings.BaseURL == "" {
		return nil, fmt.Errorf("%w: auth.Config.BaseURL is empty; set it (or AUTH_URL) to the absolute URL of the auth routes, e.g. \"https://example.com/auth\": the handler serves its routes there (its path is where the handler is mounted; with https cookies are Secure and carry the __Secure-/__Host- prefixes)", core.ErrInvalidConfig)
	}
	logger := cmp.Or(cfg.Logger, settings.Logger, slog.Default())
	h := &Handler{
		passkeys: cfg.Passkeys,
		secrets:  settings.Secrets,
		sessions: settings.Session,
		cookies:  settings.Cookies,
		pages:    cfg.Pages,
		theme:    cfg.Theme,
		byID:     map[string]provider.Provider{},
		routes:   routeTable(),
		origin:   settings.Origin,
		basePath: settings.BasePath,
		base:     settings.BaseURL,
		prefix:   settings.BasePath + "/",
	}
	// The Reader holds what the handler shares with it: the Auth, the one
	// codec of its secrets (which opens the session cookie and seals the
	// session JWT and the sign-in cookies), the cookie names, the logger
	// and the clock.
	// RequireFresh sends a stale session to /reauth, which needs second
	// factors on; without them the way to a fresh session is signing in
	// again, so it goes to the sign-in page instead.
	signIn, reauth := h.pageURL(h.pages.SignIn, "signin"), h.base+"/reauth"
	if !settings.SecondFactors.Enabled {
		reauth = signIn
	}
	var err error
	h.Reader, err = NewReader(ReaderConfig{
		Auth: cfg.Auth, Secrets: h.secrets, Strategy: h.sessions.Strategy, Secure: h.cookies.Secure, Bearer: cfg.Bearer,
		SignInURL: signIn, ReauthURL: reauth, Logger: logger, Now: settings.Now,
		BetterAuth: cfg.BetterAuth,
	})
	if err != nil {
		return nil, err
	}
	if !h.secure && settings.HTTPS {
		h.log.Warn("authport: Cookies.Secure is SecureOff with an https BaseURL: cookies are sent over plain http and lose the __Secure-/__Host- protections; use it for development only")
	}

	h.providers = cfg.Auth.Providers()
	needOAuth := false
	for _, p := range h.providers {
		c := p.Common()
		h.byID[c.ID] = p
		switch c.Type {
		case provider.TypeOAuth, provider.TypeOIDC:
			needOAuth = true
		case provider.TypeCredentials:
			if h.sessions.Strategy != auth.StrategyJWT {
				return nil, fmt.Errorf("%w: the credentials provider %q needs JWT sessions (auth.SessionOptions{Strategy: auth.StrategyJWT}), as in Auth.js: its users are not stored, so no database session can refer to them", core.ErrInvalidConfig, c.ID)
			}
		case provider.TypeWebAuthn:
			if cfg.Passkeys == nil {
				return nil, fmt.Errorf("%w: the WebAuthn provider %q needs Config.Passkeys (passkey.New)", core.ErrInvalidConfig, c.ID)
			}
		}
	}
	h.flow = cfg.OAuth
	if h.flow == nil && needOAuth {
		h.flow, err = oauth.New(oauth.Config{Auth: cfg.Auth})
		if err != nil {
			return nil, fmt.Errorf("%w: building the OAuth flow: %w", core.ErrInvalidConfig, err)
		}
	}
	if h.flow != nil && settings.HTTPS && !h.secure {
		return nil, fmt.Errorf("%w: Cookies.Secure is SecureOff, but the OAuth check cookies stay Secure on an https BaseURL, as Auth.js's do, and a browser on plain http would drop them: for http development use an http BaseURL", core.ErrInvalidConfig)
	}
	for _, p := range cfg.TrustedProxies {
		if !p.IsValid() {
			return nil, fmt.Errorf("%w: TrustedProxies holds an invalid prefix %v: give netip.MustParsePrefix(\"10.0.0.0/8\") and the like", core.ErrInvalidConfig, p)
		}
	}
	h.trusted = slices.Clone(cfg.TrustedProxies)
	if cfg.MultiSession < 0 {
		return nil, fmt.Errorf("%w: MultiSession must not be negative (0 or 1 is one account per browser)", core.ErrInvalidConfig)
	}
	h.multiSession = cfg.MultiSession
	h.freshness = cfg.FactorFreshness
	if h.freshness == 0 {
		h.freshness = DefaultFactorFreshness
	}
	if err := checkTokens(cfg.Tokens, settings); err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalidConfig, err)
	}
	h.tokens = cfg.Tokens
	if h.limits, err = newLimiter(cfg.RateLimit, h.trusted, settings.Now); err != nil {
		return nil, err
	}
	if h.tmpl, err = parsePages(); err != nil {
		return nil, fmt.Errorf("handler: built-in pages: %w", err)
	}
	return h, nil
}

// pageURL is a custom page's URL, or the built-in route's.
func (h *Handler) pageURL(custom, route string) string {
	if custom != "" {
		return custom
	}
	return h.base + "/" + route
}

// URL returns the absolute URL of a route under BaseURL, e.g. URL("signin").
func (h *Handler) URL(route string) string { return h.base + "/" + strings.TrimPrefix(route, "/") }

// route is one action of ServeHTTP.
type route struct {
	methods string // the methods allowed, as the Allow header lists them
	serve   func(*Handler, http.ResponseWriter, *http.Request, string)
}

// allows reports whether the route takes method.
func (rt route) allows(method string) bool {
	for m := range strings.SplitSeq(rt.methods, ", ") {
		if m == method {
			return true
		}
	}
	return false
}

// routeKey names a route: the first path segment, and whether the path
// carries a provider id (/action/{id}).
type routeKey struct {
	action string
	withID bool
}

// routeTable returns Auth.js's actions, each with the methods it takes and
// what serves it. signin is two: the page, and /signin/{id}.
func routeTable() map[routeKey]route {
	m := map[routeKey]route{
		{"providers", false}:       {"GET", (*Handler).serveProviders},
		{"csrf", false}:            {"GET", (*Handler).serveCSRF},
		{"session", false}:         {"GET, POST", (*Handler).serveSession},
		{"signin", false}:          {"GET", (*Handler).serveSignInPage},
		{"signin", true}:           {"GET, POST", (*Handler).serveSignIn},
		{"signout", false}:         {"GET, POST", (*Handler).serveSignOut},
		{"verify-request", false}:  {"GET", (*Handler).serveVerifyRequest},
		{"error", false}:           {"GET", (*Handler).serveError},
		{"callback", true}:         {"GET, POST", (*Handler).serveCallback},
		{"webauthn-options", true}: {"GET", (*Handler).serveWebAuthnOptions},
		{"passkey.js", false}:      {"GET", (*Handler).servePasskeyScript},
		{"sessions", false}:        {"GET", (*Handler).serveSessions},
		{"sessions", true}:         {"POST", (*Handler).serveSessions},
		{"accounts", false}:        {"GET", (*Handler).serveAccounts},
		{"accounts", true}:         {"POST", (*Handler).serveAccounts},
		// The method check of /password/{action} is its own (per action).
		{"password", true}:          {"GET, POST", (*Handler).servePassword},
		{"email-code", true}:        {"POST", (*Handler).serveEmailCode},
		{"email-code-verify", true}: {"POST", (*Handler).serveEmailCodeVerify},
		// Second factors and step-up (factors.go, stepup.go); their
		// actions may hold a "/" (nestedActions) and check their methods
		// themselves.
		{"two-factor", false}: {"GET", (*Handler).serveTwoFactor},
		{"two-factor", true}:  {"GET, POST", (*Handler).serveTwoFactor},
		{"account", true}:     {"GET", (*Handler).serveSecurityPage},
		{"reauth", false}:     {"GET, POST", (*Handler).serveReauth},
		{"reauth", true}:      {"GET, POST", (*Handler).serveReauth},
	}
	tokenRoutes(m)
	return m
}

// nestedActions are the routes whose {id} may hold a "/" (e.g.
// /two-factor/passkey/options): each checks its actions itself.
var nestedActions = map[string]bool{"two-factor": true, "reauth": true}

// maxBody bounds a POST body (forms and the passkey credential JSON).
const maxBody = 1 << 20

// ServeHTTP routes the request to Auth.js's actions.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.warnOrigin(r)
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), h.prefix)
	if !ok {
		h.mountMismatch(w, r)
		return
	}
	action, id, _ := strings.Cut(rest, "/")
	if id != "" {
		if unescaped, err := url.PathUnescape(id); err == nil {
			id = unescaped
		} else {
			h.notFound(w, r)
			return
		}
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	}
	rt, found := h.routes[routeKey{action, id != ""}]
	if !found || strings.Contains(id, "/") && !nestedActions[action] {
		h.notFound(w, r)
		return
	}
	// HEAD is GET without a body, except on a callback: a link checker's
	// HEAD must not use up the OAuth check cookies or an e-mail link.
	if !rt.allows(r.Method) && (r.Method != http.MethodHead || action == "callback" || !rt.allows(http.MethodGet)) {
		w.Header().Set("Allow", rt.methods)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "MethodNotAllowed", Message: r.Method + " is not supported here"}, true)
		return
	}
	rt.serve(h, w, r, id)
}

// mountMismatch answers a request whose path is not under BaseURL's path:
// the handler is mounted somewhere else than BaseURL says (or behind
// http.StripPrefix). The 404 and, once, an ERROR record name both.
func (h *Handler) mountMismatch(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("the auth handler got %s, but its BaseURL %s puts the routes under %s/: mount it there (mux.Handle(%q, h), without http.StripPrefix) or set BaseURL (AUTH_URL) to where it is mounted",
		r.URL.EscapedPath(), h.base, h.basePath, h.basePath+"/")
	h.mountWarned.Do(func() { h.log.ErrorContext(r.Context(), "authport: "+msg) })
	writeJSON(w, http.StatusNotFound, errorBody{Error: "UnknownAction", Message: msg}, true)
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, errorBody{Error: "UnknownAction", Message: "no such auth route"}, true)
}

// form parses a POST's form (URL-encoded or multipart) and returns false,
// answering 400, when the body cannot be read.
func (h *Handler) form(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return true
	}
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(maxBody)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "BadRequest", Message: "the request body could not be read as a form"}, true)
		return false
	}
	return true
}

// callbackURL returns where to go after the action: the request's
// callbackUrl parameter (query or form) when it passes SafeRedirect, then
// the callback-url cookie, then the site's root. A new parameter is kept in
// the callback-url cookie, as Auth.js does.
func (h *Handler) callbackURL(w http.ResponseWriter, r *http.Request) string {
	if raw := r.FormValue("callbackUrl"); raw != "" {
		target, ok := h.redirectPolicy(r, raw)
		if !ok {
			h.log.InfoContext(r.Context(), "authport: callbackUrl refused: not on this site")
			target = h.origin + "/"
		}
		if h.callbackCookie(r) != target {
			// Percent-encoded, as Auth.js's cookie serializer writes it.
			h.setCookie(w, h.names.CallbackURL, url.QueryEscape(target), 0, true)
		}
		return target
	}
	if c := h.callbackCookie(r); c != "" {
		if target, ok := h.redirectPolicy(r, c); ok {
			return target
		}
	}
	return h.origin + "/"
}

// redirectPolicy is auth.Callbacks.Redirect, or by default SafeRedirect:
// same origin only.
func (h *Handler) redirectPolicy(r *http.Request, raw string) (string, bool) {
	return h.auth.Edge().Redirect(r.Context(), auth.RedirectParams{URL: raw, BaseURL: h.base, Origin: h.origin}, SafeRedirect)
}

// callbackCookie returns the callback-url cookie's value, decoded, or "".
func (h *Handler) callbackCookie(r *http.Request) string {
	c, err := r.Cookie(h.names.CallbackURL)
	if err != nil {
		return ""
	}
	if v, err := url.PathUnescape(c.Value); err == nil {
		return v
	}
	return c.Value
}

// redirect sends the browser to target: 302 for GET, 303 after a POST; a
// request from Auth.js's client (X-Auth-Return-Redirect) gets {"url":…}.
func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, target string) {
	if r.Header.Get("X-Auth-Return-Redirect") != "" {
		writeJSON(w, http.StatusOK, map[string]string{"url": target}, true)
		return
	}
	noStore(w)
	code := http.StatusFound
	if r.Method == http.MethodPost {
		code = http.StatusSeeOther
	}
	http.Redirect(w, r, target, code)
}
