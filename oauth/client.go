package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"golang.org/x/oauth2"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// DefaultHTTPTimeout bounds every request the flow makes to a provider
// (discovery, JWKS, token, userinfo, refresh) when [Config.HTTPClient] is
// nil: connecting, sending, waiting for the answer and reading it. An
// issuer that accepts the connection and never answers fails the sign-in
// after this long, instead of holding the browser's request for minutes.
const DefaultHTTPTimeout = 10 * time.Second

// defaultClient is the client of a Flow whose Config has none: the
// default transport (proxy from the environment, connection reuse) under
// DefaultHTTPTimeout.
func defaultClient() *http.Client {
	return &http.Client{Timeout: DefaultHTTPTimeout}
}

// assertionType is the client_assertion_type of RFC 7523 §2.2.
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid. The token
// endpoint sees it within the HTTP client's timeout; a minute leaves room
// for clock skew without keeping a captured assertion useful for long.
const assertionLifetime = time.Minute

// jwtAuth reports whether the token endpoint auth method is one of the
// client assertion methods (RFC 7523) the flow signs itself.
func jwtAuth(method string) bool {
	return method == "client_secret_jwt" || method == "private_key_jwt"
}

// clientAssertion returns the client assertion of client_secret_jwt or
// private_key_jwt for a request to tokenURL (RFC 7523 §3, OIDC Core §9):
// iss and sub are the client id, aud the token endpoint, a fresh jti, iat
// and exp a minute later; signed with the client secret (HMAC) or the
// provider's Client.PrivateKey.
func (f *Flow) clientAssertion(o provider.OAuthOptions, tokenURL string) (string, error) {
	key, alg, err := assertionKey(o)
	if err != nil {
		return "", fmt.Errorf("%w: oauth: provider %q: %w", core.ErrInvalidConfig, o.ID, err)
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if o.Client.TokenEndpointAuthMethod == "private_key_jwt" && o.Client.PrivateKeyID != "" {
		opts = opts.WithHeader("kid", o.Client.PrivateKeyID)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return "", fmt.Errorf("%w: oauth: provider %q: client assertion signer (%s): %w", core.ErrInvalidConfig, o.ID, alg, err)
	}
	jti, err := random()
	if err != nil {
		return "", err
	}
	now := f.now()
	claims, err := json.Marshal(map[string]any{
		"iss": o.ClientID, "sub": o.ClientID, "aud": tokenURL, "jti": jti,
		"iat": now.Unix(), "exp": now.Add(assertionLifetime).Unix(),
	})
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(claims)
	if err != nil {
		return "", fmt.Errorf("%w: oauth: provider %q: signing the client assertion: %w", core.ErrInvalidConfig, o.ID, err)
	}
	return jws.CompactSerialize()
}

// assertionKey returns the key and algorithm that sign the provider's
// client assertion.
func assertionKey(o provider.OAuthOptions) (any, jose.SignatureAlgorithm, error) {
	alg := jose.SignatureAlgorithm(o.Client.TokenEndpointAuthSigningAlg)
	if o.Client.TokenEndpointAuthMethod == "client_secret_jwt" {
		if o.ClientSecret == "" {
			return nil, "", fmt.Errorf("client_secret_jwt needs ClientSecret")
		}
		switch alg {
		case "":
			alg = jose.HS256
		case jose.HS256, jose.HS384, jose.HS512:
		default:
			return nil, "", fmt.Errorf("client_secret_jwt signs with HS256, HS384 or HS512, not %q (Client.TokenEndpointAuthSigningAlg)", alg)
		}
		// RFC 7518 §3.2: a key at least as long as the hash.
		if bits := map[jose.SignatureAlgorithm]int{jose.HS256: 256, jose.HS384: 384, jose.HS512: 512}[alg]; len(o.ClientSecret)*8 < bits {
			return nil, "", fmt.Errorf("client_secret_jwt with %s needs a client secret of at least %d bytes (RFC 7518 §3.2), this one has %d", alg, bits/8, len(o.ClientSecret))
		}
		return []byte(o.ClientSecret), alg, nil
	}
	k := o.Client.PrivateKey
	if k == nil {
		return nil, "", fmt.Errorf("private_key_jwt needs Client.PrivateKey")
	}
	fits := keyAlgs(k.Public())
	if len(fits) == 0 {
		return nil, "", fmt.Errorf("Client.PrivateKey's public key is a %T; use an RSA, ECDSA (P-256, P-384, P-521) or Ed25519 key", k.Public())
	}
	if alg == "" {
		alg = fits[0]
	}
	ok := false
	for _, a := range fits {
		ok = ok || a == alg
	}
	if !ok {
		return nil, "", fmt.Errorf("Client.TokenEndpointAuthSigningAlg %q does not fit Client.PrivateKey (a %T); use one of %v", alg, k.Public(), fits)
	}
	var key any = cryptosigner.Opaque(k)
	switch k := k.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		key = k
	}
	return key, alg, nil
}

// keyAlgs returns the signature algorithms a public key signs with, the
// default first.
func keyAlgs(pub crypto.PublicKey) []jose.SignatureAlgorithm {
	switch pub := pub.(type) {
	case *rsa.PublicKey:
		return []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}
	case *ecdsa.PublicKey:
		switch pub.Curve {
		case elliptic.P256():
			return []jose.SignatureAlgorithm{jose.ES256}
		case elliptic.P384():
			return []jose.SignatureAlgorithm{jose.ES384}
		case elliptic.P521():
			return []jose.SignatureAlgorithm{jose.ES512}
		}
	case ed25519.PublicKey:
		return []jose.SignatureAlgorithm{jose.EdDSA}
	}
	return nil
}

// clientAuth returns the parameters that authenticate the client at the
// token endpoint for the JWT methods (client_id, client_assertion_type,
// client_assertion), or nil for the others, which x/oauth2 and
// [Flow.tokenRequest] handle through the AuthStyle.
func (f *Flow) clientAuth(o provider.OAuthOptions, tokenURL string) (url.Values, error) {
	if !jwtAuth(o.Client.TokenEndpointAuthMethod) {
		return nil, nil
	}
	a, err := f.clientAssertion(o, tokenURL)
	if err != nil {
		return nil, err
	}
	return url.Values{"client_assertion_type": {assertionType}, "client_assertion": {a}}, nil
}

// authOptions are clientAuth's parameters as x/oauth2 options.
func authOptions(v url.Values) []oauth2.AuthCodeOption {
	var opts []oauth2.AuthCodeOption
	for k := range v {
		opts = append(opts, oauth2.SetAuthURLParam(k, v.Get(k)))
	}
	return opts
}
