package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// Config configures a [Flow]. The secrets that seal the check cookies,
// the clock and the base URL (a provider's redirect_uri is
// BaseURL/callback/{id}; with https the cookies are Secure and their names
// carry the __Secure- prefix) are the Auth's ([auth.Config]): configured
// once, there.
type Config struct {
	// Auth is the configured library: its providers, adapter and sessions.
	// Required.
	Auth *auth.Auth
	// HTTPClient makes every request to the providers (discovery, JWKS,
	// token, userinfo, refresh). nil means a client on
	// http.DefaultTransport whose Timeout is [DefaultHTTPTimeout] (10 s),
	// so that a provider that never answers fails the sign-in within
	// seconds. A client given here is used as it is: give it a Timeout
	// (and, for tls_client_auth, the client certificate).
	HTTPClient *http.Client
	// AuthorizationParams names the parameters, beyond [SignInParams],
	// that [Flow.Begin] passes from a sign-in request to the authorization
	// URL. client_id, redirect_uri, response_type, response_mode, scope,
	// request and request_uri come from a sign-in request only when named
	// here (Auth.js passes every query parameter, these included);
	// state, nonce, code_challenge and code_challenge_method never do.
	AuthorizationParams []string
}

// Flow runs OAuth 2.0 and OpenID Connect sign-in for the OAuth and OIDC
// providers of an [auth.Auth]: [Flow.Begin] sends the user to the
// provider, [Flow.Callback] checks what comes back and signs the user in.
// It is safe for concurrent use, and caches each provider's discovery
// document and signing keys.
type Flow struct {
	auth   *auth.Auth
	seal   sealer
	base   string
	secure bool
	client *http.Client
	now    func() time.Time
	params map[string]bool // the sign-in request's parameters Begin passes on

	mu    sync.Mutex
	cache map[string]*endpoints

	used      usedChecks // in-process fallback of useOnce
	refreshes flights    // one token refresh per account at a time
}

// New returns a [Flow] for cfg. Its error matches [ErrInvalidConfig] and
// says what to change.
func New(cfg Config) (*Flow, error) {
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: Auth is nil; build one with auth.New", ErrInvalidConfig)
	}
	f := &Flow{auth: cfg.Auth, client: cfg.HTTPClient, now: cfg.Auth.Settings().Now, cache: map[string]*endpoints{}}
	if f.client == nil {
		f.client = defaultClient()
	}
	f.base = cfg.Auth.Settings().BaseURL
	u, err := url.Parse(f.base)
	if f.base == "" || err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: BaseURL %q is not an absolute http(s) URL; set auth.Config.BaseURL to where the auth routes are served, e.g. https://example.com/api/auth", ErrInvalidConfig, f.base)
	}
	f.secure = u.Scheme == "https"
	if f.params, err = paramAllowList(cfg.AuthorizationParams); err != nil {
		return nil, err
	}
	// The Auth's secrets, which auth.New has checked.
	f.seal, err = newSealer(f.now, cfg.Auth.Settings().Secrets...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return f, nil
}

// SecureCookies reports whether the flow's cookies are Secure, with the
// __Secure- prefix: whether the base URL is https.
func (f *Flow) SecureCookies() bool { return f.secure }

// Begin starts signing in with the OAuth or OIDC provider: it returns the
// authorization URL to redirect the user to, and sets on w the check
// cookies the provider's checks need (PKCE code verifier, state, nonce;
// sealed, HttpOnly, SameSite=Lax, 15 minutes; SameSite=None on https for
// providers that call back with a cross-site POST, response_mode=form_post,
// since browsers withhold Lax cookies from it). Call it for POST
// /signin/{provider}, then redirect (303) to the URL.
//
// The URL carries client_id, redirect_uri (BaseURL/callback/{id}, or the
// provider's redirect proxy URL), response_type=code, the provider's
// authorization parameters (scope defaults to "openid profile email" for
// OIDC), the sign-in request's, and the checks: code_challenge (S256),
// state, nonce.
//
// params are the sign-in request's authorization parameters, as Auth.js's
// signIn(provider, options, authorizationParams) sends them: e.g.
// r.URL.Query() and r.PostForm, the first set naming a parameter winning.
// Only the names of [SignInParams] and Config.AuthorizationParams are
// taken (prompt=login, login_hint, ui_locales, …), each with its first
// value; they replace the provider's configured value of the same name.
// A value over 2048 bytes or with control characters fails with
// [ErrInvalidParams].
func (f *Flow) Begin(ctx context.Context, w http.ResponseWriter, providerID string, params ...url.Values) (string, error) {
	if f == nil || f.auth == nil {
		return "", fmt.Errorf("%w: the Flow was not made by New", ErrInvalidConfig)
	}
	if w == nil {
		return "", fmt.Errorf("%w: nil ResponseWriter", ErrInvalidCallback)
	}
	p, err := f.auth.Edge().OAuthProvider(providerID)
	if err != nil {
		return "", err
	}
	o := p.Options()
	e, err := f.endpoints(ctx, p)
	if err != nil {
		return "", err
	}
	conf, err := f.oauth2Config(p, o, e)
	if err != nil {
		return "", err
	}
	request, err := f.signInParams(params)
	if err != nil {
		return "", err
	}
	auth := o.Authorization.Params
	if auth == nil {
		auth = url.Values{}
	}
	for k, vs := range request {
		auth[k] = vs
	}
	var opts []oauth2.AuthCodeOption
	if auth.Get("scope") == "" && o.Type == provider.TypeOIDC {
		opts = append(opts, oauth2.SetAuthURLParam("scope", "openid profile email"))
	}
	for k, vs := range auth {
		if len(vs) > 0 {
			opts = append(opts, oauth2.SetAuthURLParam(k, vs[0]))
		}
	}
	// The checks go last, so no configured parameter replaces them.
	type check struct{ cookie, value string }
	var checks []check
	if o.Checks.Has(provider.CheckPKCE) {
		v := oauth2.GenerateVerifier()
		opts = append(opts, oauth2.S256ChallengeOption(v))
		checks = append(checks, check{PKCECookieName, v})
	}
	if o.Checks.Has(provider.CheckState) {
		v, err := random()
		if err != nil {
			return "", err
		}
		opts = append(opts, oauth2.SetAuthURLParam("state", v))
		checks = append(checks, check{StateCookieName, v})
	}
	if o.Type == provider.TypeOIDC && o.Checks.Has(provider.CheckNonce) {
		v, err := random()
		if err != nil {
			return "", err
		}
		opts = append(opts, oauth2.SetAuthURLParam("nonce", v))
		checks = append(checks, check{NonceCookieName, v})
	}
	formPost := auth.Get("response_mode") == "form_post"
	for _, c := range checks {
		if err := f.setCheck(w, c.cookie, c.value, formPost); err != nil {
			return "", err
		}
	}
	return conf.AuthCodeURL("", opts...), nil
}

// random returns 32 random bytes, base64url-encoded.
func random() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("oauth: reading random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// redirectURI is the redirect_uri of the provider's authorization and
// token requests.
func (f *Flow) redirectURI(p provider.OAuthProvider, o provider.OAuthOptions) (string, error) {
	if o.RedirectProxyURL != "" {
		return o.RedirectProxyURL, nil
	}
	app, err := provider.NewAppProvider(p, f.base)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return app.CallbackURL, nil
}

func (f *Flow) oauth2Config(p provider.OAuthProvider, o provider.OAuthOptions, e *endpoints) (*oauth2.Config, error) {
	redirect, err := f.redirectURI(p, o)
	if err != nil {
		return nil, err
	}
	conf := &oauth2.Config{
		ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: e.authURL, TokenURL: e.tokenURL},
	}
	switch m := o.Client.TokenEndpointAuthMethod; m {
	case "", "client_secret_basic":
		conf.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	case "client_secret_post":
		conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	case "none", "tls_client_auth", "self_signed_tls_client_auth", "client_secret_jwt", "private_key_jwt":
		// client_id in the body and no secret; for the TLS methods the
		// client certificate comes from Config.HTTPClient, for the JWT
		// methods the client assertion is added to each request
		// (clientAuth), unless a Token.Request handler makes it.
		conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
		conf.ClientSecret = ""
		if jwtAuth(m) && o.Token.Request == nil {
			if _, _, err := assertionKey(o); err != nil {
				return nil, fmt.Errorf("%w: provider %q: %w", ErrInvalidConfig, o.ID, err)
			}
		}
	default:
		if o.Token.Request == nil {
			return nil, fmt.Errorf("%w: provider %q: token endpoint auth method %q is not supported here; give the provider a Token.Request handler that authenticates itself", ErrInvalidConfig, o.ID, m)
		}
	}
	return conf, nil
}

// Callback completes signing in with the provider, for GET or POST
// /callback/{provider}. In this order, and before anything is written to
// the adapter, it
//
//   - reads the check cookies and tells the browser to drop them (each is
//     used once);
//   - compares the state parameter with the state cookie (state check);
//   - records the check values as used, in the adapter (createVerificationToken,
//     shared by every instance) or else in process, and refuses a callback
//     whose values were used before ([ErrCallbackReplayed]): a replayed
//     callback fails even against a provider that accepts a code twice;
//   - surfaces the provider's error parameter as a [*ProviderError];
//   - exchanges the code at the token endpoint, with the PKCE verifier
//     (pkce check) and the client authentication the provider's Client
//     options name;
//   - for OIDC, requires the id_token and verifies it: signature against
//     the issuer's JWKS, iss, aud, exp, and the nonce (nonce check);
//   - takes the profile from the id_token's claims, or from the userinfo
//     endpoint (OAuth 2.0, or OIDC with IDToken false), through the
//     provider's Profile callback;
//
// then calls [auth.Auth.SignInWithOAuth], which runs the SignIn callback,
// links the account (with what the provider's Account callback keeps of
// the tokens) and creates the database session. user is the signed-in
// caller (read from the session by the caller), or nil: a new account is
// then linked to that user, and an account linked to another user fails
// with auth.ErrAccountNotLinked. Callback writes no session cookie: the
// caller (the handler) gives the browser the session of the result.
func (f *Flow) Callback(ctx context.Context, w http.ResponseWriter, r *http.Request, providerID string, user *core.User) (*auth.SignIn, error) {
	if f == nil || f.auth == nil {
		return nil, fmt.Errorf("%w: the Flow was not made by New", ErrInvalidConfig)
	}
	if w == nil || r == nil || r.URL == nil {
		return nil, fmt.Errorf("%w: nil ResponseWriter, Request or URL", ErrInvalidCallback)
	}
	p, err := f.auth.Edge().OAuthProvider(providerID)
	if err != nil {
		return nil, err
	}
	o := p.Options()

	verifier, noVerifier := f.takeCheck(w, r, PKCECookieName)
	state, noState := f.takeCheck(w, r, StateCookieName)
	nonce, noNonce := f.takeCheck(w, r, NonceCookieName)

	params, err := callbackParams(w, r)
	if err != nil {
		return nil, err
	}
	if o.Checks.Has(provider.CheckState) {
		got := params.Get("state")
		switch {
		case state == "":
			return nil, fmt.Errorf("%w: provider %q: %w", ErrStateMissing, o.ID, noState)
		case got == "":
			return nil, fmt.Errorf("%w: provider %q: the callback has no state parameter", ErrStateMissing, o.ID)
		case subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1:
			return nil, fmt.Errorf("%w: provider %q: the callback's state is not the one this browser was sent with; start signing in again", ErrStateMismatch, o.ID)
		}
	}
	if code := params.Get("error"); code != "" {
		return nil, &ProviderError{ProviderID: o.ID, Code: code, Description: params.Get("error_description"), URI: params.Get("error_uri")}
	}
	code := params.Get("code")
	if code == "" {
		return nil, fmt.Errorf("%w: provider %q: the callback has neither a code nor an error parameter", ErrInvalidCallback, o.ID)
	}
	if o.Checks.Has(provider.CheckPKCE) && verifier == "" {
		return nil, fmt.Errorf("%w: provider %q: %w", ErrVerifierMissing, o.ID, noVerifier)
	}
	useNonce := o.Type == provider.TypeOIDC && o.Checks.Has(provider.CheckNonce)
	if useNonce && nonce == "" {
		return nil, fmt.Errorf("%w: provider %q: %w", ErrNonceMissing, o.ID, noNonce)
	}
	if err := f.useOnce(ctx, o.ID, verifier, state, nonce); err != nil {
		return nil, err
	}

	e, err := f.endpoints(ctx, p)
	if err != nil {
		return nil, err
	}
	conf, err := f.oauth2Config(p, o, e)
	if err != nil {
		return nil, err
	}
	checks := provider.CheckValues{CodeVerifier: verifier, State: state, Nonce: nonce}
	if !o.Checks.Has(provider.CheckPKCE) {
		checks.CodeVerifier = ""
	}
	tokens, tok, err := f.exchange(ctx, p, o, conf, checks, params)
	if err != nil {
		return nil, err
	}

	var profile provider.User
	if o.Type == provider.TypeOIDC {
		if err := p.CheckCallbackTokens(tokens); err != nil {
			return nil, fmt.Errorf("%w: %w; the provider must return an id_token (is openid in the scope?)", ErrIDTokenMissing, err)
		}
		idt, claims, err := f.verifyIDToken(ctx, e, o, tokens.IDToken)
		if err != nil {
			return nil, err
		}
		if useNonce && subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
			return nil, fmt.Errorf("%w: provider %q: the id_token's nonce is not the one sent", ErrNonceMismatch, o.ID)
		}
		if o.IDToken {
			profile, err = f.profileFromClaims(ctx, p, claims, params, tokens)
		} else {
			profile, err = f.userinfo(ctx, p, o, e, conf, tok, tokens, idt.Subject)
		}
		if err != nil {
			return nil, err
		}
	} else {
		profile, err = f.userinfo(ctx, p, o, e, conf, tok, tokens, "")
		if err != nil {
			return nil, err
		}
	}

	return f.auth.SignInWithOAuth(ctx, auth.OAuthCallback{
		ProviderID: o.ID, Profile: profile, Tokens: tokens, User: user,
	})
}

// maxCallbackBody bounds a form_post callback's body.
const maxCallbackBody = 64 << 10

// callbackParams returns the callback's parameters: the query, and for a
// POST (response_mode=form_post) the form body too.
func callbackParams(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	if r.Method != http.MethodPost {
		return r.URL.Query(), nil
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxCallbackBody)
	}
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("%w: reading the form: %w", ErrInvalidCallback, err)
	}
	return r.Form, nil
}

// errorsAs is errors.As for a target type, returning the match.
func errorsAs[T error](err error) (T, bool) {
	var t T
	ok := errors.As(err, &t)
	return t, ok
}
