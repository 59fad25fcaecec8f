package provider

import (
	"crypto"
	"maps"
	"net/url"
	"slices"

	"github.com/authport/authport/core"
)

// Type is the kind of a provider (SPEC §2.1 ProviderType). The Go type of a
// configuration fixes its Type: an [*OAuth2Config] is always [TypeOAuth], an
// [*OIDCConfig] always [TypeOIDC], and so on.
type Type string

// The provider types of SPEC §2.1 and §5.1.
const (
	TypeOIDC        Type = "oidc"
	TypeOAuth       Type = "oauth"
	TypeEmail       Type = "email"
	TypeCredentials Type = "credentials"
	TypeWebAuthn    Type = "webauthn"
)

// Types returns every valid provider type, in the order of SPEC §5.1,
// then authport's own [TypePassword].
func Types() []Type {
	return []Type{TypeOIDC, TypeOAuth, TypeEmail, TypeCredentials, TypeWebAuthn, TypePassword}
}

// RedirectableTypes returns the provider types whose sign-in can redirect
// back to a page of the application (SPEC §2.1 RedirectableProviderType).
func RedirectableTypes() []Type { return []Type{TypeEmail, TypeCredentials, TypePassword} }

// Valid reports whether t is one of [Types].
func (t Type) Valid() bool { return slices.Contains(Types(), t) }

// Redirectable reports whether t is one of [RedirectableTypes].
func (t Type) Redirectable() bool { return slices.Contains(RedirectableTypes(), t) }

// IsOAuth reports whether t is [TypeOAuth] or [TypeOIDC].
func (t Type) IsOAuth() bool { return t == TypeOAuth || t == TypeOIDC }

// AccountType returns the [core.AccountType] of accounts created through a
// provider of type t. Credentials providers create no account, so for them,
// and for an invalid t, ok is false.
func (t Type) AccountType() (_ core.AccountType, ok bool) {
	switch t {
	case TypeOAuth:
		return core.AccountTypeOAuth, true
	case TypeOIDC:
		return core.AccountTypeOIDC, true
	case TypeEmail:
		return core.AccountTypeEmail, true
	case TypeWebAuthn:
		return core.AccountTypeWebAuthn, true
	case TypePassword:
		return core.AccountTypeCredentials, true
	}
	return "", false
}

// EndpointType names one of the three OAuth endpoints (SPEC §2.1
// OAuthEndpointType).
type EndpointType string

// Valid reports whether e is one of the three endpoint types.
func (e EndpointType) Valid() bool {
	return e == EndpointAuthorization || e == EndpointToken || e == EndpointUserinfo
}

// The OAuth endpoint types.
const (
	EndpointAuthorization EndpointType = "authorization"
	EndpointToken         EndpointType = "token"
	EndpointUserinfo      EndpointType = "userinfo"
)

// CommonOptions are the options every provider has (SPEC §2.2).
type CommonOptions struct {
	// ID identifies the provider among the configured providers and is part
	// of its URLs (/signin/{id}, /callback/{id}), so it must be URL-safe.
	ID string
	// Name is the provider's name on the default sign-in page: a provider
	// named X gets a button reading "Sign in with X".
	Name string
	// Type is the kind of provider.
	Type Type
}

// AppProvider is a provider as the application shows it (SPEC §2.3): its
// common options and the URLs that start sign-in and receive the callback.
type AppProvider struct {
	CommonOptions
	// SigninURL starts sign-in with the provider: {base}/signin/{id}.
	SigninURL string
	// CallbackURL receives the provider's callback: {base}/callback/{id}.
	CallbackURL string
}

// NewAppProvider returns p's [AppProvider] for the library mounted at base,
// e.g. "https://example.com/api/auth". It reports an error when base is not
// an absolute URL.
func NewAppProvider(p Provider, base string) (AppProvider, error) {
	var c CommonOptions
	if p != nil {
		c = p.Common()
	}
	u, err := url.Parse(base)
	if err != nil || !u.IsAbs() {
		return AppProvider{}, &url.Error{Op: "parse", URL: base, Err: errNotAbsolute}
	}
	signin := u.JoinPath("signin", c.ID)
	callback := u.JoinPath("callback", c.ID)
	return AppProvider{CommonOptions: c, SigninURL: signin.String(), CallbackURL: callback.String()}, nil
}

// Check is one CSRF protection the callback endpoint of an OAuth or OIDC
// provider performs (SPEC §2.4, §5.3).
type Check string

// The callback checks. [CheckNonce] is for OIDC providers only; [CheckNone]
// cannot be combined with any other.
const (
	CheckNone  Check = "none"
	CheckState Check = "state"
	CheckPKCE  Check = "pkce"
	CheckNonce Check = "nonce"
)

// Checks is a provider's list of callback checks.
type Checks []Check

// Has reports whether c is in cs.
func (cs Checks) Has(c Check) bool { return slices.Contains(cs, c) }

// ButtonStyle is the style of a provider's button on the sign-in page
// (SPEC §2.6 OAuthProviderButtonStyles). Every field is optional.
type ButtonStyle struct {
	// Logo is the path or URL of the provider's logo.
	Logo string
	// BrandColor is the provider's brand colour, e.g. "#24292f".
	BrandColor string
	// Bg is the button's background colour.
	//
	// Deprecated: use BrandColor.
	Bg string
	// Text is the button's text colour.
	//
	// Deprecated: use BrandColor; the text colour is derived from it.
	Text string
}

// Color returns the colour to draw the button in: BrandColor, or the
// deprecated Bg when BrandColor is empty.
func (s ButtonStyle) Color() string {
	if s.BrandColor != "" {
		return s.BrandColor
	}
	return s.Bg
}

// Endpoint is an OAuth endpoint given as a URL with extra query parameters
// (SPEC §2.4 authorization; the URL part of §2.7's endpoint handlers).
type Endpoint struct {
	// URL is the endpoint's absolute URL. It may carry a query; Params are
	// added to it.
	URL string
	// Params are extra parameters sent to the endpoint, e.g. scope for the
	// authorization endpoint.
	Params url.Values
}

// WithParams returns URL with Params added to its query. It returns URL
// unchanged when it does not parse.
func (e Endpoint) WithParams() string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return e.URL
	}
	q := u.Query()
	for k, vs := range e.Params {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func (e Endpoint) clone() Endpoint {
	e.Params = cloneValues(e.Params)
	return e
}

// ClientOptions override what the OAuth client sends as client metadata
// (SPEC §2.4 client, a Partial<Client>). Every field is optional.
type ClientOptions struct {
	// TokenEndpointAuthMethod is how the client authenticates to the token
	// endpoint: client_secret_basic (the default when empty),
	// client_secret_post, client_secret_jwt, private_key_jwt,
	// tls_client_auth, self_signed_tls_client_auth or none.
	TokenEndpointAuthMethod string
	// IDTokenSignedResponseAlg is the JWS alg the ID token must be signed
	// with (default RS256).
	IDTokenSignedResponseAlg string
	// UserinfoSignedResponseAlg, when set, requires a signed userinfo
	// response.
	UserinfoSignedResponseAlg string
	// AuthorizationSignedResponseAlg, when set, requires a signed
	// authorization response (JARM).
	AuthorizationSignedResponseAlg string
	// DefaultMaxAge is the default max_age, in seconds, or 0 for none.
	DefaultMaxAge int64
	// RequireAuthTime requires the auth_time claim in ID tokens.
	RequireAuthTime bool
	// TokenEndpointAuthSigningAlg is the JWS algorithm of the client
	// assertion (token_endpoint_auth_signing_alg): for client_secret_jwt
	// HS256 (the default), HS384 or HS512, keyed with ClientSecret; for
	// private_key_jwt one that fits PrivateKey (default RS256 for RSA,
	// ES256/ES384/ES512 for P-256/P-384/P-521, EdDSA for Ed25519).
	TokenEndpointAuthSigningAlg string
	// PrivateKey signs the client assertion of private_key_jwt (RFC 7523):
	// an *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey, or any
	// crypto.Signer with one of their public keys (a key in a KMS).
	PrivateKey crypto.Signer
	// PrivateKeyID is the kid of the assertion's header: the id under
	// which the provider knows PrivateKey's public key, or "".
	PrivateKeyID string
	// Extra holds further client metadata, by its registered name.
	Extra map[string]any
}

// TokenEndpointAuthMethods returns the token endpoint authentication
// methods [ClientOptions.TokenEndpointAuthMethod] accepts.
func TokenEndpointAuthMethods() []string {
	return []string{
		"client_secret_basic", "client_secret_post", "client_secret_jwt",
		"private_key_jwt", "tls_client_auth", "self_signed_tls_client_auth", "none",
	}
}

func (c ClientOptions) clone() ClientOptions {
	c.Extra = maps.Clone(c.Extra)
	return c
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
