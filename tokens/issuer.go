package tokens

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// Defaults of [Config].
const (
	DefaultAccessTokenTTL = 10 * time.Minute
	DefaultRetryAfter     = time.Second
	DefaultRetryWindow    = 30 * time.Second
	// CodeTTL is how long an authorization code can be exchanged.
	CodeTTL = 60 * time.Second
)

// Config configures an [Issuer].
type Config struct {
	// Auth is the configured library: its adapter keeps the token
	// families (database sessions), its secrets seal refresh tokens and
	// authorization codes, its BaseURL is the tokens' issuer (iss), its
	// Session.MaxAge is how long a family lives unused. Required. Its
	// adapter needs createSession, getSessionAndUser, deleteSession and
	// createVerificationToken, and the extendSession extension (every
	// built-in adapter has them), whatever the session strategy.
	Auth *auth.Auth
	// Keys sign the access tokens and are published at the JWKS route.
	// Required. See [KeySet] for rotation.
	Keys *KeySet
	// Audience is the access tokens' aud: the resource servers (APIs)
	// that accept them, e.g. "https://api.example.com". Required: a
	// verifier checks that a token was meant for it.
	Audience []string
	// Clients are the registered native clients; at least one.
	Clients []Client
	// AccessTokenTTL is how long an access token is valid; zero means
	// [DefaultAccessTokenTTL]. Access tokens are verified without the
	// store, so one stays valid until it expires even after its family
	// ended: keep this short.
	AccessTokenTTL time.Duration
	// RetryAfter and RetryWindow bound the lost-reply retry: a rotated
	// refresh token presented again at least RetryAfter and at most
	// RetryWindow after its rotation, by the same client, for the first
	// time, gets the same successor once (the client did not receive the
	// first reply). Presented sooner, it is a concurrent use, which
	// counts as reuse (RFC 9700 §4.14.2); later, or twice, too. Zero means
	// [DefaultRetryAfter] (1 s, the least allowed: rotation times are known
	// to the second) and [DefaultRetryWindow] (30 s); a negative
	// RetryWindow turns retries off.
	RetryAfter, RetryWindow time.Duration
	// IntrospectionSecret protects POST {base}/introspect: a caller
	// presents it as the password of HTTP Basic authentication (any user
	// name) or as a Bearer token. Empty turns the route off (404). Make
	// it with the authport-secret command, as AUTH_SECRET.
	IntrospectionSecret string
	// Logger receives WARN records of reused refresh tokens and ERROR
	// records of failures; nil means the Auth's logger, or slog.Default().
	// It never receives tokens.
	Logger *slog.Logger
}

// Client is a registered public client: a native application (mobile,
// desktop, CLI) that signs users in through the browser with the
// authorization code flow and PKCE (RFC 8252). Public clients hold no
// secret; PKCE binds the code to the app instance that asked for it, and
// the exact redirect URIs keep codes away from other apps.
type Client struct {
	// ID is the client_id. Required, unique.
	ID string
	// Name names the application, e.g. "Example for iOS": the user agent
	// its sessions show in the session inventory (followed by the
	// token request's User-Agent). Empty means ID.
	Name string
	// RedirectURIs are where authorization codes may be sent, compared
	// exactly, except that a loopback redirect (http://127.0.0.1/… or
	// http://[::1]/…, RFC 8252 §7.3) matches on any port. Allowed: a
	// private-use scheme (com.example.app:/callback, RFC 8252 §7.1),
	// https (claimed URLs, §7.2), http on a loopback address (§7.3). At
	// least one.
	RedirectURIs []string
	// Scopes are the scopes the client may ask for; a request for
	// another is refused with invalid_scope. Empty: none.
	Scopes []string
}

// Issuer issues, rotates, revokes and verifies the tokens of native
// clients. Build it with [New]; it is safe for concurrent use. The handler
// module serves its HTTP routes (handler.Config.Tokens); an API server
// verifies access tokens with [Issuer.Verify] or [Issuer.Require].
type Issuer struct {
	auth        *auth.Auth
	edge        auth.Edge
	keys        *KeySet
	issuer      string // BaseURL
	audience    []string
	clients     map[string]*Client
	accessTTL   time.Duration
	retryAfter  time.Duration
	retryWindow time.Duration
	maxAge      time.Duration
	refresh     *sealer
	codes       *sealer
	introspect  []byte // SHA-256 of IntrospectionSecret, nil when off
	now         func() time.Time
	log         *slog.Logger
}

// New checks cfg and returns the Issuer. A configuration error matches
// [core.ErrInvalidConfig] and says what to fix; an adapter without the
// methods the token families need gives a [*core.MissingMethodsError].
func New(cfg Config) (*Issuer, error) {
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: tokens.Config.Auth is required (build it with auth.New)", core.ErrInvalidConfig)
	}
	st := cfg.Auth.Settings()
	if st.BaseURL == "" {
		return nil, fmt.Errorf("%w: tokens: auth.Config.BaseURL is empty; set it (AUTH_URL): it is the access tokens' issuer (iss) and where the token routes are", core.ErrInvalidConfig)
	}
	if cfg.Keys == nil || len(cfg.Keys.keys) == 0 {
		return nil, fmt.Errorf("%w: tokens.Config.Keys is required: make a key with tokens.GenerateKey and keep it (tokens.KeySet.MarshalPrivateJSON, read back with tokens.ParseKeySet)", core.ErrInvalidConfig)
	}
	if len(cfg.Audience) == 0 || slices.Contains(cfg.Audience, "") {
		return nil, fmt.Errorf("%w: tokens.Config.Audience is required and holds no empty value: name the APIs that accept the access tokens, e.g. \"https://api.example.com\"", core.ErrInvalidConfig)
	}
	i := &Issuer{
		auth: cfg.Auth, edge: cfg.Auth.Edge(), keys: cfg.Keys, issuer: st.BaseURL,
		audience: slices.Clone(cfg.Audience), clients: map[string]*Client{},
		accessTTL: cfg.AccessTokenTTL, retryAfter: cfg.RetryAfter, retryWindow: cfg.RetryWindow,
		maxAge: st.Session.MaxAge, now: st.Now, log: cfg.Logger,
	}
	if i.log == nil {
		i.log = st.Logger
	}
	if i.log == nil {
		i.log = slog.Default()
	}
	if i.accessTTL == 0 {
		i.accessTTL = DefaultAccessTokenTTL
	}
	if i.retryAfter == 0 {
		i.retryAfter = DefaultRetryAfter
	}
	if i.retryWindow == 0 {
		i.retryWindow = DefaultRetryWindow
	}
	switch {
	case i.accessTTL < time.Second:
		return nil, fmt.Errorf("%w: tokens.Config.AccessTokenTTL %v is shorter than a second", core.ErrInvalidConfig, i.accessTTL)
	case i.retryAfter < time.Second:
		return nil, fmt.Errorf("%w: tokens.Config.RetryAfter %v is shorter than a second: rotation times are known to the second, so a shorter one could take a concurrent use for a retry; leave it zero for 1s", core.ErrInvalidConfig, i.retryAfter)
	case i.retryWindow > 0 && i.retryWindow <= i.retryAfter:
		return nil, fmt.Errorf("%w: tokens.Config.RetryWindow %v is not longer than RetryAfter %v; make it longer, or negative to turn retries off", core.ErrInvalidConfig, i.retryWindow, i.retryAfter)
	case i.retryWindow > i.maxAge/2:
		return nil, fmt.Errorf("%w: tokens.Config.RetryWindow %v is longer than half of Session.MaxAge %v", core.ErrInvalidConfig, i.retryWindow, i.maxAge)
	}
	if len(cfg.Clients) == 0 {
		return nil, fmt.Errorf("%w: tokens.Config.Clients is empty: register the native clients (client_id and redirect URIs)", core.ErrInvalidConfig)
	}
	for n, c := range cfg.Clients {
		if err := checkClient(c); err != nil {
			return nil, fmt.Errorf("%w: tokens.Config.Clients[%d]: %w", core.ErrInvalidConfig, n, err)
		}
		if i.clients[c.ID] != nil {
			return nil, fmt.Errorf("%w: tokens.Config.Clients: client_id %q is registered twice", core.ErrInvalidConfig, c.ID)
		}
		c.RedirectURIs, c.Scopes = slices.Clone(c.RedirectURIs), slices.Clone(c.Scopes)
		i.clients[c.ID] = &c
	}
	if cfg.IntrospectionSecret != "" {
		if err := cfg.Auth.Edge().CheckSecrets([]string{cfg.IntrospectionSecret}); err != nil {
			return nil, fmt.Errorf("%w: tokens.Config.IntrospectionSecret: %w", core.ErrInvalidConfig, err)
		}
		sum := sha256.Sum256([]byte(cfg.IntrospectionSecret))
		i.introspect = sum[:]
	}
	var err error
	if i.refresh, err = newSealer(st.Secrets, "refresh token"); err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalidConfig, err)
	}
	if i.codes, err = newSealer(st.Secrets, "authorization code"); err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalidConfig, err)
	}
	caps := cfg.Auth.Capabilities()
	var missing []core.MissingMethod
	for _, m := range []core.Method{core.MethodCreateSession, core.MethodGetSessionAndUser, core.MethodDeleteSession, core.MethodCreateVerificationToken} {
		if !caps.Has(m) {
			missing = append(missing, core.MissingMethod{Method: m, NeededBy: "tokens"})
		}
	}
	if !caps.HasExtension(core.ExtensionExtendSession) {
		missing = append(missing, core.MissingMethod{Method: core.MethodExtendSession, NeededBy: "tokens (refresh rotation)"})
	}
	if len(missing) > 0 {
		return nil, &core.MissingMethodsError{Adapter: caps.Adapter(), Missing: missing}
	}
	return i, nil
}

// checkClient says what is wrong with a client's registration.
func checkClient(c Client) error {
	if c.ID == "" || len(c.ID) > 255 || strings.ContainsFunc(c.ID, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		return fmt.Errorf("ID %q: give a client_id of 1 to 255 printable ASCII characters", c.ID)
	}
	if len(c.RedirectURIs) == 0 {
		return fmt.Errorf("client %q has no RedirectURIs", c.ID)
	}
	for _, raw := range c.RedirectURIs {
		if err := checkRedirectURI(raw); err != nil {
			return fmt.Errorf("client %q: redirect URI %q: %w", c.ID, raw, err)
		}
	}
	for _, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") || strings.ContainsFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
			return fmt.Errorf("client %q: scope %q is not an RFC 6749 scope token", c.ID, s)
		}
	}
	return nil
}

// checkRedirectURI accepts what RFC 8252 allows a native app: a
// private-use scheme, https, or http on a loopback IP address.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("give an absolute URI without a fragment")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("an https redirect URI needs a host")
		}
	case "http":
		if !isLoopback(u) {
			return fmt.Errorf("http is allowed on a loopback IP address only (http://127.0.0.1/… or http://[::1]/…, RFC 8252 §7.3; not localhost, §8.3); use https or a private-use scheme")
		}
	case "javascript", "data", "vbscript", "file", "blob", "about":
		return fmt.Errorf("the scheme %s: is not a redirect target", u.Scheme)
	}
	return nil
}

// isLoopback reports whether u is http on a loopback IP literal.
func isLoopback(u *url.URL) bool {
	if !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.IsLoopback()
}

// client returns the registered client, or nil.
func (i *Issuer) client(id string) *Client { return i.clients[id] }

// redirectAllowed reports whether raw is one of the client's redirect
// URIs: exactly, or for a loopback redirect with any port.
func (c *Client) redirectAllowed(raw string) bool {
	if slices.Contains(c.RedirectURIs, raw) {
		return true
	}
	u, err := url.Parse(raw)
	if err != nil || !isLoopback(u) || u.User != nil || u.Fragment != "" {
		return false
	}
	for _, reg := range c.RedirectURIs {
		r, err := url.Parse(reg)
		if err != nil || !isLoopback(r) {
			continue
		}
		if strings.EqualFold(r.Scheme, u.Scheme) && r.Hostname() == u.Hostname() && r.EscapedPath() == u.EscapedPath() && r.RawQuery == u.RawQuery {
			if p := u.Port(); p == "" || validPort(p) {
				return true
			}
		}
	}
	return false
}

func validPort(p string) bool {
	if len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n > 0 && n < 65536
}

// scopeAllowed returns the requested scope, normalised (single spaces),
// or false when the client may not ask for one of them.
func (c *Client) scopeAllowed(scope string) (string, bool) {
	fields := strings.Fields(scope)
	for _, s := range fields {
		if !slices.Contains(c.Scopes, s) {
			return "", false
		}
	}
	return strings.Join(fields, " "), true
}

// displayName is what a family's session shows as its user agent.
func (c *Client) displayName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// Issuer returns the access tokens' issuer (iss): the Auth's BaseURL.
func (i *Issuer) Issuer() string { return i.issuer }

// Audience returns the configured audience (a copy).
func (i *Issuer) Audience() []string { return slices.Clone(i.audience) }

// JWKS returns the JWK Set of the public keys in force (GET {base}/jwks).
func (i *Issuer) JWKS() ([]byte, error) { return i.keys.PublicJSON(i.now()) }

// IntrospectionEnabled reports whether Config.IntrospectionSecret is set.
func (i *Issuer) IntrospectionEnabled() bool { return i.introspect != nil }

// IntrospectionAllowed reports whether the Authorization header values
// present the introspection secret: "Basic base64(user:secret)" with any
// user name, or "Bearer secret", compared in constant time. False when
// introspection is off.
func (i *Issuer) IntrospectionAllowed(authorization []string) bool {
	if i.introspect == nil || len(authorization) != 1 {
		return false
	}
	scheme, cred, _ := strings.Cut(strings.TrimSpace(authorization[0]), " ")
	cred = strings.TrimSpace(cred)
	var secret string
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		secret = cred
	case strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return false
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return false
		}
		// RFC 6749 §2.3.1: the parts are form-urlencoded.
		if p, err := url.QueryUnescape(pass); err == nil {
			pass = p
		}
		_ = user
		secret = pass
	default:
		return false
	}
	sum := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(sum[:], i.introspect) == 1
}
