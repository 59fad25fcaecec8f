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

// Config configures a [Flow]. The clock and the base URL (a provider's
// redirect_uri is BaseURL/callback/{id}) are the Auth's ([auth.Settings]):
// configured once, there.
type Config struct {
	// Auth is the configured library: its providers, adapter and sessions.
	// Required, with a BaseURL.
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
// It writes no cookies: Begin returns the check values, which the caller
// keeps until the callback, and Callback takes them back (the handler
// module seals them into Auth.js's check cookies). It is safe for
// concurrent use, and caches each provider's discovery document and
// signing keys.
type Flow struct {
	auth   *auth.Auth
	base   string
	client *http.Client
	now    func() time.Time
	params map[string]bool // the sign-in request's parameters Begin passes on

	mu    sync.Mutex
	cache map[string]*endpoints

	used      usedChecks // in-process fallback of useOnce
	refreshes flights    // one token refresh per account at a time
}

// New returns a [Flow] for cfg. Its error matches core.ErrInvalidConfig
// and says what to change.
func New(cfg Config) (*Flow, error) {
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: oauth: Auth is nil; build one with auth.New", core.ErrInvalidConfig)
	}
	settings := cfg.Auth.Settings()
	f := &Flow{auth: cfg.Auth, client: cfg.HTTPClient, now: settings.Now, base: settings.BaseURL, cache: map[string]*endpoints{}}
	if f.client == nil {
		f.client = defaultClient()
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.base == "" {
		return nil, fmt.Errorf("%w: oauth: the Auth has no BaseURL; set auth.Config.BaseURL to where the auth routes are served, e.g. https://example.com/api/auth: providers call back there", core.ErrInvalidConfig)
	}
	var err error
	if f.params, err = paramAllowList(cfg.AuthorizationParams); err != nil {
		return nil, err
	}
	return f, nil
}

// CheckMaxAge is how long the check values of a sign-in are good: the
// user has this long to finish signing in at the provider, and the caller
// keeps the values at most this long (the handler's check cookies live
// this long, as Auth.js's do).
const CheckMaxAge = 15 * time.Minute

// Checks are the check values of one sign-in: [Flow.Begin] makes them and
// sends the provider what they commit to (code_challenge, state, nonce);
// the caller keeps them where the browser can neither read nor change
// them until the provider calls back, and gives them to [Flow.Callback].
// The handler module keeps them in Auth.js's check cookies
// (authjs.pkce.code_verifier, authjs.state, authjs.nonce), sealed.
type Checks struct {
	// CodeVerifier is the PKCE code verifier ("" without the pkce check).
	CodeVerifier string
	// State is the state parameter sent ("" without the state check).
	State string
	// Nonce is the OIDC nonce sent ("" without the nonce check).
	Nonce string
	// Missing says, by check (provider.CheckPKCE, CheckState,
	// CheckNonce), why the caller has no value to give back, e.g. "the
	// browser sent no authjs.state cookie" or a cookie that would not open
	// (expired, altered). Callback puts the reason into the error of a
	// check that needs the value. Optional; Begin leaves it nil.
	Missing map[provider.Check]error
}

// missing is the reason the value of check is missing.
func (c Checks) missing(check provider.Check, what string) error {
	if err := c.Missing[check]; err != nil {
		return err
	}
	return fmt.Errorf("no %s was kept for this sign-in (not started here, or started over %d minutes ago)", what, int(CheckMaxAge/time.Minute))
}

// Authorization is a sign-in that [Flow.Begin] started: where to send the
// user, and what to keep until the provider calls back.
type Authorization struct {
	// URL is the provider's authorization URL: redirect the user there.
	URL string
	// Checks are the check values to give [Flow.Callback].
	Checks Checks
	// FormPost reports that the provider calls back with a cross-site POST
	// (response_mode=form_post, e.g. Apple): browsers withhold SameSite=Lax
	// cookies from it, so cookies that keep the checks must be
	// SameSite=None (and Secure) on https. The checks themselves still
	// stop cross-site forgeries.
	FormPost bool
}

// Begin starts signing in with the OAuth or OIDC provider: it returns the
// authorization URL to redirect the user to (303), with the check values
// the provider's checks need (PKCE code verifier, state, nonce), which the
// caller keeps for [Flow.Callback]. Call it for POST /signin/{provider}.
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
//
// A refusal (discovery failed; a parameter value over 2048 bytes or with
// control characters) is an *auth.Error with auth.CodeOAuthSignin.
func (f *Flow) Begin(ctx context.Context, providerID string, params ...url.Values) (Authorization, error) {
	a, err := f.begin(ctx, providerID, params)
	return a, signInError(auth.CodeOAuthSignin, err)
}

func (f *Flow) begin(ctx context.Context, providerID string, params []url.Values) (Authorization, error) {
	if f == nil || f.auth == nil {
		return Authorization{}, fmt.Errorf("%w: oauth: the Flow was not made by New", core.ErrInvalidConfig)
	}
	p, err := f.auth.Edge().OAuthProvider(providerID)
	if err != nil {
		return Authorization{}, err
	}
	o := p.Options()
	e, err := f.endpoints(ctx, p)
	if err != nil {
		return Authorization{}, err
	}
	conf, err := f.oauth2Config(p, o, e)
	if err != nil {
		return Authorization{}, err
	}
	request, err := f.signInParams(params)
	if err != nil {
		return Authorization{}, err
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
	var checks Checks
	if o.Checks.Has(provider.CheckPKCE) {
		checks.CodeVerifier = oauth2.GenerateVerifier()
		opts = append(opts, oauth2.S256ChallengeOption(checks.CodeVerifier))
	}
	if o.Checks.Has(provider.CheckState) {
		if checks.State, err = random(); err != nil {
			return Authorization{}, err
		}
		opts = append(opts, oauth2.SetAuthURLParam("state", checks.State))
	}
	if o.Type == provider.TypeOIDC && o.Checks.Has(provider.CheckNonce) {
		if checks.Nonce, err = random(); err != nil {
			return Authorization{}, err
		}
		opts = append(opts, oauth2.SetAuthURLParam("nonce", checks.Nonce))
	}
	return Authorization{
		URL:      conf.AuthCodeURL("", opts...),
		Checks:   checks,
		FormPost: auth.Get("response_mode") == "form_post",
	}, nil
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
		return "", fmt.Errorf("%w: oauth: %w", core.ErrInvalidConfig, err)
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
				return nil, fmt.Errorf("%w: oauth: provider %q: %w", core.ErrInvalidConfig, o.ID, err)
			}
		}
	default:
		if o.Token.Request == nil {
			return nil, fmt.Errorf("%w: oauth: provider %q: token endpoint auth method %q is not supported here; give the provider a Token.Request handler that authenticates itself", core.ErrInvalidConfig, o.ID, m)
		}
	}
	return conf, nil
}

// Callback completes signing in with the provider, for GET or POST
// /callback/{provider}. params are the callback's parameters: its query,
// and for a POST (response_mode=form_post) its form body too, as r.Form
// holds them after r.ParseForm (bound the body first, e.g. with
// http.MaxBytesReader). checks are the values [Flow.Begin] returned for
// this sign-in, as the caller kept them; each is used once. In this order,
// and before anything is written to the adapter, it
//
//   - compares the state parameter with checks.State (state check);
//   - surfaces the provider's error parameter as a [*ProviderError];
//   - records the check values as used, in the adapter (createVerificationToken,
//     shared by every instance) or else in process, and refuses a callback
//     whose values were used before (the error also matches
//     core.ErrAlreadyExists): a replayed callback fails even against a
//     provider that accepts a code twice;
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
// with an error whose code is auth.CodeOAuthAccountNotLinked. The caller gives the browser the session
// of the result.
//
// A refusal is an *auth.Error with auth.CodeOAuthCallback, unless it
// carries a code of its own (OAuthAccountNotLinked, AccessDenied).
func (f *Flow) Callback(ctx context.Context, providerID string, params url.Values, checks Checks, user *core.User) (*auth.SignIn, error) {
	in, err := f.callback(ctx, providerID, params, checks, user)
	return in, signInError(auth.CodeOAuthCallback, err)
}

func (f *Flow) callback(ctx context.Context, providerID string, params url.Values, checks Checks, user *core.User) (*auth.SignIn, error) {
	if f == nil || f.auth == nil {
		return nil, fmt.Errorf("%w: oauth: the Flow was not made by New", core.ErrInvalidConfig)
	}
	p, err := f.auth.Edge().OAuthProvider(providerID)
	if err != nil {
		return nil, err
	}
	o := p.Options()
	verifier, state, nonce := checks.CodeVerifier, checks.State, checks.Nonce

	if o.Checks.Has(provider.CheckState) {
		got := params.Get("state")
		switch {
		case state == "":
			return nil, fmt.Errorf("%w: provider %q: %w", errStateMissing, o.ID, checks.missing(provider.CheckState, "state"))
		case got == "":
			return nil, fmt.Errorf("%w: provider %q: the callback has no state parameter", errStateMissing, o.ID)
		case subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1:
			return nil, fmt.Errorf("%w: provider %q: the callback's state is not the one this browser was sent with; start signing in again", errStateMismatch, o.ID)
		}
	}
	if code := params.Get("error"); code != "" {
		return nil, &ProviderError{ProviderID: o.ID, Code: code, Description: params.Get("error_description"), URI: params.Get("error_uri")}
	}
	code := params.Get("code")
	if code == "" {
		return nil, fmt.Errorf("%w: provider %q: the callback has neither a code nor an error parameter", errInvalidCallback, o.ID)
	}
	if o.Checks.Has(provider.CheckPKCE) && verifier == "" {
		return nil, fmt.Errorf("%w: provider %q: %w", errVerifierMissing, o.ID, checks.missing(provider.CheckPKCE, "PKCE code verifier"))
	}
	useNonce := o.Type == provider.TypeOIDC && o.Checks.Has(provider.CheckNonce)
	if useNonce && nonce == "" {
		return nil, fmt.Errorf("%w: provider %q: %w", errNonceMissing, o.ID, checks.missing(provider.CheckNonce, "nonce"))
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
	values := provider.CheckValues{CodeVerifier: verifier, State: state, Nonce: nonce}
	if !o.Checks.Has(provider.CheckPKCE) {
		values.CodeVerifier = ""
	}
	tokens, tok, err := f.exchange(ctx, p, o, conf, values, params)
	if err != nil {
		return nil, err
	}

	var profile provider.User
	if o.Type == provider.TypeOIDC {
		if err := p.CheckCallbackTokens(tokens); err != nil {
			return nil, fmt.Errorf("%w: %w; the provider must return an id_token (is openid in the scope?)", errIDTokenMissing, err)
		}
		idt, claims, err := f.verifyIDToken(ctx, e, o, tokens.IDToken)
		if err != nil {
			return nil, err
		}
		if useNonce && subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
			return nil, fmt.Errorf("%w: provider %q: the id_token's nonce is not the one sent", errNonceMismatch, o.ID)
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

// errorsAs is errors.As for a target type, returning the match.
func errorsAs[T error](err error) (T, bool) {
	var t T
	ok := errors.As(err, &t)
	return t, ok
}
