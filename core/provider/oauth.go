package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// TokenEndpoint is the token endpoint (SPEC §2.4 token, §2.7
// TokenEndpointHandler): a URL with extra parameters, or a handler that
// performs the token request itself.
type TokenEndpoint struct {
	// URL is the token endpoint's absolute URL.
	URL string
	// Params are extra parameters sent with the token request.
	Params url.Values
	// Request, when set, is called instead of the library's own token
	// request. It returns the tokens the provider issued.
	Request func(ctx context.Context, req TokenRequest) (TokenSet, error)
}

// TokenRequest is what a custom token handler receives (SPEC §2.7: the
// checks and the callback parameters).
type TokenRequest struct {
	// Endpoint is the token endpoint's URL and extra parameters.
	Endpoint Endpoint
	// Checks holds the values the callback checks compare against.
	Checks CheckValues
	// Params are the parameters of the callback request (code, state, …).
	Params url.Values
	// RedirectURI is the callback URL the authorization request named.
	RedirectURI string
	// ClientID and ClientSecret are the provider's client credentials.
	ClientID, ClientSecret string
	// Client is the HTTP client to use; nil means [http.DefaultClient].
	Client *http.Client
}

// CheckValues are the values kept between the authorization request and
// the callback for the checks a provider performs; a check not performed
// has "".
type CheckValues struct {
	// CodeVerifier is the PKCE code verifier.
	CodeVerifier string
	// State is the state parameter sent.
	State string
	// Nonce is the OIDC nonce sent.
	Nonce string
}

// UserinfoEndpoint is the userinfo endpoint (SPEC §2.4 userinfo, §2.7
// UserinfoEndpointHandler): a URL with extra parameters, or a handler that
// fetches the profile itself.
type UserinfoEndpoint[P any] struct {
	// URL is the userinfo endpoint's absolute URL.
	URL string
	// Params are extra query parameters sent to the endpoint.
	Params url.Values
	// Request, when set, is called instead of the library's own userinfo
	// request. It returns the profile.
	Request func(ctx context.Context, req UserinfoRequest) (P, error)
}

// UserinfoRequest is what a custom userinfo handler receives.
type UserinfoRequest struct {
	// Endpoint is the userinfo endpoint's URL and extra parameters.
	Endpoint Endpoint
	// Tokens are the tokens the token endpoint returned.
	Tokens TokenSet
	// Client is the HTTP client to use; nil means [http.DefaultClient].
	Client *http.Client
	// ClientID is the provider's client id, for APIs that want it with
	// every call (Trakt's trakt-api-key).
	ClientID string
}

// OAuth2Config configures an OAuth 2.0 provider (SPEC §2.4, type oauth).
// P is the provider's profile type: what the userinfo endpoint returns,
// decoded from JSON. Use map[string]any when there is no profile struct.
//
// A provider is usable once [Validate] accepts it: it needs an
// Authorization URL or WellKnown, a Token URL (or Token.Request) or
// WellKnown, and a ClientID.
type OAuth2Config[P any] struct {
	// ID identifies the provider and is part of its URLs; it must be
	// URL-safe and unique among the configured providers.
	ID string
	// Name is shown on the default sign-in page.
	Name string

	// Authorization is where the user is sent to start signing in.
	Authorization Endpoint
	// Token is the token endpoint.
	Token TokenEndpoint
	// Userinfo is the userinfo endpoint, which supplies the profile.
	Userinfo UserinfoEndpoint[P]
	// WellKnown is the discovery document's URL, used instead of
	// Authorization, Token and Userinfo, which can still be given to
	// override what it says.
	WellKnown string

	// Checks are the CSRF checks performed on the callback: none, state or
	// pkce. Empty means [pkce]; state is added when a redirect proxy URL is
	// set (see [Validate]).
	Checks Checks
	// Client overrides the client metadata the OAuth client uses.
	Client ClientOptions
	// ClientID is the client id the provider issued. Required.
	ClientID string
	// ClientSecret is the client secret the provider issued.
	ClientSecret string
	// Issuer is the provider's issuer identifier.
	Issuer string
	// JWKSEndpoint is the URL of the provider's JSON Web Key Set.
	JWKSEndpoint string
	// RedirectProxyURL is the URL of a proxy that relays the callback to
	// this deployment (e.g. for preview deployments). Setting it adds the
	// state check.
	RedirectProxyURL string

	// Profile maps the profile to the [User] to create. nil means
	// [DefaultProfile] applied to the profile's JSON form.
	Profile ProfileCallback[P]
	// Account picks the tokens kept on the account. nil means
	// [DefaultAccount].
	Account AccountCallback
	// AllowDangerousEmailAccountLinking links a sign-in with this provider
	// to an existing user with the same e-mail address. Off by default;
	// turn it on only for a provider that verifies e-mail addresses.
	AllowDangerousEmailAccountLinking bool

	// Style is the style of the provider's sign-in button.
	Style ButtonStyle
}

// OIDCConfig configures an OpenID Connect provider (SPEC §2.5, type oidc).
// It is an [OAuth2Config] (embedded: its fields and methods are
// OIDCConfig's) plus IDToken, with these differences: Checks may include
// nonce, and empty Checks mean [pkce] (the spec states no OIDC default;
// this follows OAuth's); Authorization, Token, Userinfo and JWKSEndpoint
// override what discovery finds (an Authorization with an empty URL only
// adds parameters); WellKnown empty means
// {Issuer}/.well-known/openid-configuration; Issuer is required unless
// WellKnown is given.
//
// A provider is usable once [Validate] accepts it: it needs an Issuer or a
// WellKnown, and a ClientID; the endpoints come from discovery unless
// given.
type OIDCConfig[P any] struct {
	OAuth2Config[P]

	// IDToken says where the profile comes from: true (the default, nil)
	// takes it from the ID token's claims, false fetches the userinfo
	// endpoint. Either way the token response must carry an id_token
	// ([OIDCConfig.CheckCallbackTokens]).
	IDToken *bool
}

// OAuthOptions is an OAuth or OIDC provider's configuration without its
// typed callbacks, as the sign-in code reads it (the spec's
// OAuthConfigInternal). It is a copy: changing it changes no provider.
type OAuthOptions struct {
	CommonOptions
	// Authorization is the authorization endpoint: URL (empty for OIDC
	// discovery) and extra parameters.
	Authorization Endpoint
	// Token is the token endpoint, with its custom handler if any.
	Token TokenEndpoint
	// Userinfo is the userinfo endpoint's URL and parameters;
	// [OAuthProvider.FetchUserinfo] runs its handler, if any.
	Userinfo Endpoint
	// WellKnown is the discovery document's URL, or "".
	WellKnown string
	// Checks are the callback checks (defaulted by [Validate]).
	Checks Checks
	// Client holds the client metadata overrides.
	Client ClientOptions
	// ClientID and ClientSecret are the client credentials.
	ClientID, ClientSecret string
	// Issuer is the issuer identifier, or "".
	Issuer string
	// JWKSEndpoint is the JSON Web Key Set URL, or "" to discover it.
	JWKSEndpoint string
	// RedirectProxyURL is the redirect proxy URL, the provider's own or,
	// after [Validate], the configuration's.
	RedirectProxyURL string
	// IDToken is the effective IDToken setting: false for OAuth, the
	// configured value (default true) for OIDC.
	IDToken bool
	// AllowDangerousEmailAccountLinking is the provider's setting.
	AllowDangerousEmailAccountLinking bool
	// Style is the sign-in button style.
	Style ButtonStyle
}

// Endpoint returns the endpoint of type t, or the zero Endpoint for an
// invalid t.
func (o OAuthOptions) Endpoint(t EndpointType) Endpoint {
	switch t {
	case EndpointAuthorization:
		return o.Authorization.clone()
	case EndpointToken:
		return Endpoint{URL: o.Token.URL, Params: cloneValues(o.Token.Params)}
	case EndpointUserinfo:
		return o.Userinfo.clone()
	}
	return Endpoint{}
}

// OAuthProvider is what the sign-in code needs from an OAuth or OIDC
// provider, whatever its profile type. [*OAuth2Config] and [*OIDCConfig]
// implement it for every P.
type OAuthProvider interface {
	Provider
	// Options returns a copy of the provider's settings.
	Options() OAuthOptions
	// CheckCallbackTokens reports whether the token endpoint's response is
	// acceptable for the flow: an OIDC provider must return an id_token
	// (SPEC §5.4), else it returns an error matching [ErrMissingIDToken].
	CheckCallbackTokens(tokens TokenSet) error
	// AccountTokens returns the tokens to keep on the account: expires_at
	// computed from expires_in at now when absent, then the Account
	// callback (or [DefaultAccount]), with token_type lowercased.
	AccountTokens(tokens TokenSet, now time.Time) TokenSet
	// ProfileFromJSON decodes a profile (userinfo response or ID token
	// claims, a JSON object) into the provider's profile type and maps it
	// with the Profile callback. The result always has an id.
	ProfileFromJSON(ctx context.Context, raw []byte, tokens TokenSet) (User, error)
	// FetchUserinfo runs the provider's custom userinfo handler, if it has one,
	// and maps the profile it returns. ok is false when there is no
	// handler: the library then fetches Options().Userinfo itself.
	FetchUserinfo(ctx context.Context, req UserinfoRequest) (u User, ok bool, err error)
}

// ErrMissingIDToken is returned, wrapped, by CheckCallbackTokens when an
// OIDC provider's token response has no id_token.
var ErrMissingIDToken = errors.New("OIDC token response has no id_token")

// errNilProvider is returned by the methods of a nil provider pointer.
var errNilProvider = errors.New("nil provider")

// Common returns the provider's id, name and type ([TypeOAuth]).
func (c *OAuth2Config[P]) Common() CommonOptions {
	if c == nil {
		return CommonOptions{Type: TypeOAuth}
	}
	return CommonOptions{ID: c.ID, Name: c.Name, Type: TypeOAuth}
}

// Options returns a copy of the provider's settings.
func (c *OAuth2Config[P]) Options() OAuthOptions {
	if c == nil {
		return OAuthOptions{CommonOptions: c.Common()}
	}
	return optionsOf(c, TypeOAuth, false)
}

// CheckCallbackTokens accepts any token response: an OAuth 2.0 flow needs
// no id_token. It exists so that [*OAuth2Config] is an [OAuthProvider].
func (c *OAuth2Config[P]) CheckCallbackTokens(TokenSet) error {
	if c == nil {
		return errNilProvider
	}
	return nil
}

// AccountTokens implements [OAuthProvider].
func (c *OAuth2Config[P]) AccountTokens(tokens TokenSet, now time.Time) TokenSet {
	if c == nil {
		return accountTokens(nil, tokens, now)
	}
	return accountTokens(c.Account, tokens, now)
}

// ProfileFromJSON implements [OAuthProvider].
func (c *OAuth2Config[P]) ProfileFromJSON(ctx context.Context, raw []byte, tokens TokenSet) (User, error) {
	if c == nil {
		return User{}, errNilProvider
	}
	return profileFromJSON(ctx, c.Profile, raw, tokens)
}

// FetchUserinfo implements [OAuthProvider].
func (c *OAuth2Config[P]) FetchUserinfo(ctx context.Context, req UserinfoRequest) (User, bool, error) {
	if c == nil {
		return User{}, false, errNilProvider
	}
	return runUserinfo(ctx, c.Userinfo, c.Profile, req)
}

func (c *OAuth2Config[P]) isNil() bool { return c == nil }

func (c *OAuth2Config[P]) clone() Provider {
	if c == nil {
		return c
	}
	out := c.cloneValue()
	return &out
}

// cloneValue returns a copy of c sharing nothing mutable with it.
func (c *OAuth2Config[P]) cloneValue() OAuth2Config[P] {
	out := *c
	out.Authorization = c.Authorization.clone()
	out.Token.Params = cloneValues(c.Token.Params)
	out.Userinfo.Params = cloneValues(c.Userinfo.Params)
	out.Checks = slices.Clone(c.Checks)
	out.Client = c.Client.clone()
	return out
}

// Common returns the provider's id, name and type ([TypeOIDC]).
func (c *OIDCConfig[P]) Common() CommonOptions {
	o := c.base().Common()
	o.Type = TypeOIDC
	return o
}

// UsesIDToken reports whether the profile is taken from the ID token's
// claims (IDToken nil or true) rather than the userinfo endpoint.
func (c *OIDCConfig[P]) UsesIDToken() bool {
	return c == nil || c.IDToken == nil || *c.IDToken
}

// Options returns a copy of the provider's settings.
func (c *OIDCConfig[P]) Options() OAuthOptions {
	if c == nil {
		return OAuthOptions{CommonOptions: c.Common(), IDToken: true}
	}
	return optionsOf(&c.OAuth2Config, TypeOIDC, c.UsesIDToken())
}

// CheckCallbackTokens rejects a token response without an id_token, with
// an error matching [ErrMissingIDToken]. OIDC requires the id_token even
// when IDToken is false (SPEC §2.5, §5.4); the sign-in code calls this on
// every callback before using the tokens.
func (c *OIDCConfig[P]) CheckCallbackTokens(tokens TokenSet) error {
	if c == nil {
		return errNilProvider
	}
	if tokens.IDToken == "" {
		return fmt.Errorf("provider %q: %w", c.ID, ErrMissingIDToken)
	}
	return nil
}

// The OAuth2Config methods are promoted; these three are restated only so
// that a nil *OIDCConfig answers as a nil *OAuth2Config does instead of
// panicking.

// AccountTokens implements [OAuthProvider].
func (c *OIDCConfig[P]) AccountTokens(tokens TokenSet, now time.Time) TokenSet {
	return c.base().AccountTokens(tokens, now)
}

// ProfileFromJSON implements [OAuthProvider].
func (c *OIDCConfig[P]) ProfileFromJSON(ctx context.Context, raw []byte, tokens TokenSet) (User, error) {
	return c.base().ProfileFromJSON(ctx, raw, tokens)
}

// FetchUserinfo implements [OAuthProvider].
func (c *OIDCConfig[P]) FetchUserinfo(ctx context.Context, req UserinfoRequest) (User, bool, error) {
	return c.base().FetchUserinfo(ctx, req)
}

// base returns the embedded OAuth2Config, or nil for a nil c.
func (c *OIDCConfig[P]) base() *OAuth2Config[P] {
	if c == nil {
		return nil
	}
	return &c.OAuth2Config
}

func (c *OIDCConfig[P]) isNil() bool { return c == nil }

func (c *OIDCConfig[P]) clone() Provider {
	if c == nil {
		return c
	}
	out := &OIDCConfig[P]{OAuth2Config: c.OAuth2Config.cloneValue()}
	if c.IDToken != nil {
		v := *c.IDToken
		out.IDToken = &v
	}
	return out
}

func optionsOf[P any](c *OAuth2Config[P], t Type, idToken bool) OAuthOptions {
	return OAuthOptions{
		CommonOptions:                     CommonOptions{ID: c.ID, Name: c.Name, Type: t},
		Authorization:                     c.Authorization.clone(),
		Token:                             TokenEndpoint{URL: c.Token.URL, Params: cloneValues(c.Token.Params), Request: c.Token.Request},
		Userinfo:                          Endpoint{URL: c.Userinfo.URL, Params: cloneValues(c.Userinfo.Params)},
		WellKnown:                         c.WellKnown,
		Checks:                            slices.Clone(c.Checks),
		Client:                            c.Client.clone(),
		ClientID:                          c.ClientID,
		ClientSecret:                      c.ClientSecret,
		Issuer:                            c.Issuer,
		JWKSEndpoint:                      c.JWKSEndpoint,
		RedirectProxyURL:                  c.RedirectProxyURL,
		IDToken:                           idToken,
		AllowDangerousEmailAccountLinking: c.AllowDangerousEmailAccountLinking,
		Style:                             c.Style,
	}
}

func profileFromJSON[P any](ctx context.Context, cb ProfileCallback[P], raw []byte, tokens TokenSet) (User, error) {
	p, err := decodeProfile[P](raw)
	if err != nil {
		return User{}, err
	}
	u, err := profileUser(ctx, cb, p, tokens)
	if err != nil {
		return User{}, err
	}
	if m, err := decodeObject(raw); err == nil {
		withEmailVerified(&u, m)
	}
	return u, nil
}

func runUserinfo[P any](ctx context.Context, ep UserinfoEndpoint[P], cb ProfileCallback[P], req UserinfoRequest) (User, bool, error) {
	if ep.Request == nil {
		return User{}, false, nil
	}
	if req.Endpoint.URL == "" && req.Endpoint.Params == nil {
		req.Endpoint = Endpoint{URL: ep.URL, Params: cloneValues(ep.Params)}
	}
	p, err := ep.Request(ctx, req)
	if err != nil {
		return User{}, true, fmt.Errorf("userinfo: %w", err)
	}
	u, err := profileUser(ctx, cb, p, req.Tokens)
	return u, true, err
}
