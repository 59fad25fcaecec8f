package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/authport/authport/core/provider"
)

// discoveryTTL is how long a discovery document is kept before it is
// fetched again. Signing keys are not bound by it: go-oidc fetches the
// JWKS again when an id_token names a key it does not know.
const discoveryTTL = time.Hour

// maxBody bounds what is read from a discovery or userinfo response.
const maxBody = 1 << 20

// endpoints are a provider's resolved locations: the configuration's
// explicit URLs over what discovery said.
type endpoints struct {
	authURL, tokenURL, userinfoURL, jwksURL string
	// issuer is the issuer id_tokens must carry; issuerTemplate is set when
	// it holds a {tenantid} placeholder (Microsoft's multi-tenant
	// issuers), which is replaced by the token's tid claim.
	issuer         string
	issuerTemplate bool
	// verifier checks id_tokens (OIDC only); it keeps the JWKS between
	// callbacks.
	verifier *oidc.IDTokenVerifier
	// userinfo is the go-oidc provider used for OIDC userinfo requests.
	userinfo *oidc.Provider
	expires  time.Time // zero: nothing was discovered, recompute freely
}

// discoveryDoc is the part of an OpenID Provider (or RFC 8414
// authorization server) metadata document the flow uses.
type discoveryDoc struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	UserinfoEndpoint      string   `json:"userinfo_endpoint"`
	JWKSURI               string   `json:"jwks_uri"`
	Algorithms            []string `json:"id_token_signing_alg_values_supported"`
}

// signingAlgs are the id_token algorithms go-oidc verifies.
var signingAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA,
}

// endpoints returns the provider's endpoints, from the cache while the
// discovery document is fresh.
func (f *Flow) endpoints(ctx context.Context, p provider.OAuthProvider) (*endpoints, error) {
	o := p.Options()
	f.mu.Lock()
	e, ok := f.cache[o.ID]
	f.mu.Unlock()
	if ok && f.now().Before(e.expires) {
		return e, nil
	}
	e, err := f.resolve(ctx, o)
	if err != nil {
		return nil, err
	}
	if !e.expires.IsZero() {
		f.mu.Lock()
		f.cache[o.ID] = e
		f.mu.Unlock()
	}
	return e, nil
}

func (f *Flow) resolve(ctx context.Context, o provider.OAuthOptions) (*endpoints, error) {
	oidcType := o.Type == provider.TypeOIDC
	e := &endpoints{
		authURL:     o.Authorization.URL,
		tokenURL:    o.Token.URL,
		userinfoURL: o.Userinfo.URL,
		jwksURL:     o.JWKSEndpoint,
		issuer:      o.Issuer,
	}
	missing := e.authURL == "" || (e.tokenURL == "" && o.Token.Request == nil) ||
		(oidcType && (e.jwksURL == "" || e.issuer == "" || (e.userinfoURL == "" && !o.IDToken)))
	if !oidcType && e.userinfoURL == "" && o.WellKnown != "" {
		missing = true
	}
	var algs []string
	if missing {
		wellKnown := o.WellKnown
		if wellKnown == "" {
			wellKnown = strings.TrimSuffix(o.Issuer, "/") + "/.well-known/openid-configuration"
		}
		doc, err := f.discover(ctx, wellKnown)
		if err != nil {
			return nil, fmt.Errorf("%w: provider %q: %w", errDiscovery, o.ID, err)
		}
		switch {
		case e.issuer == "":
			e.issuer = doc.Issuer
		case doc.Issuer != "" && doc.Issuer != e.issuer:
			if !strings.Contains(doc.Issuer, "{tenantid}") {
				return nil, fmt.Errorf("%w: provider %q: the discovery document %s names issuer %q, not the configured %q; correct Issuer (exact, trailing slash included)",
					errDiscovery, o.ID, wellKnown, doc.Issuer, e.issuer)
			}
			e.issuer = doc.Issuer
		}
		e.issuerTemplate = strings.Contains(e.issuer, "{tenantid}")
		e.authURL = cmp(e.authURL, doc.AuthorizationEndpoint)
		e.tokenURL = cmp(e.tokenURL, doc.TokenEndpoint)
		e.userinfoURL = cmp(e.userinfoURL, doc.UserinfoEndpoint)
		e.jwksURL = cmp(e.jwksURL, doc.JWKSURI)
		for _, a := range doc.Algorithms {
			if slices.Contains(signingAlgs, a) {
				algs = append(algs, a)
			}
		}
		e.expires = f.now().Add(discoveryTTL)
	}
	var lack []string
	if e.authURL == "" {
		lack = append(lack, "authorization endpoint")
	}
	if e.tokenURL == "" && o.Token.Request == nil {
		lack = append(lack, "token endpoint")
	}
	if oidcType && e.jwksURL == "" {
		lack = append(lack, "jwks_uri")
	}
	if oidcType && e.issuer == "" {
		lack = append(lack, "issuer")
	}
	if len(lack) > 0 {
		return nil, fmt.Errorf("%w: provider %q: no %s in the configuration or the discovery document", errDiscovery, o.ID, strings.Join(lack, ", "))
	}
	if oidcType {
		if a := o.Client.IDTokenSignedResponseAlg; a != "" {
			algs = []string{a}
		}
		userinfo := ""
		if e.userinfoURL != "" {
			userinfo = provider.Endpoint{URL: e.userinfoURL, Params: o.Userinfo.Params}.WithParams()
		}
		op := (&oidc.ProviderConfig{
			IssuerURL: e.issuer, AuthURL: e.authURL, TokenURL: e.tokenURL,
			UserInfoURL: userinfo, JWKSURL: e.jwksURL, Algorithms: algs,
		}).NewProvider(oidc.ClientContext(context.Background(), f.client))
		e.userinfo = op
		e.verifier = op.Verifier(&oidc.Config{
			ClientID:        o.ClientID,
			SkipIssuerCheck: e.issuerTemplate, // checked against the tid claim instead
			Now:             f.now,
		})
	}
	return e, nil
}

// cmp returns a, or b when a is empty.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (f *Flow) discover(ctx context.Context, url string) (*discoveryDoc, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, res.Status)
	}
	var doc discoveryDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("GET %s: not a discovery document: %w", url, err)
	}
	return &doc, nil
}
