package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/authport/authport/core/provider"
)

// exchange trades the code for tokens: the provider's Token.Request
// handler when it has one, else x/oauth2's exchange with the PKCE verifier
// and the token endpoint's extra parameters. It returns the full token
// response as a TokenSet, and as an *oauth2.Token for the userinfo
// request.
func (f *Flow) exchange(ctx context.Context, p provider.OAuthProvider, o provider.OAuthOptions, conf *oauth2.Config,
	checks provider.CheckValues, params url.Values) (provider.TokenSet, *oauth2.Token, error) {
	if o.Token.Request != nil {
		ts, err := o.Token.Request(ctx, provider.TokenRequest{
			Endpoint: provider.Endpoint{URL: conf.Endpoint.TokenURL, Params: o.Token.Params},
			Checks:   checks, Params: params, RedirectURI: conf.RedirectURL,
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, Client: f.client,
		})
		if err != nil {
			return provider.TokenSet{}, nil, fmt.Errorf("%w: provider %q: token handler: %w", errTokenExchange, o.ID, err)
		}
		if ts.AccessToken == "" {
			return provider.TokenSet{}, nil, fmt.Errorf("%w: provider %q: the token handler returned no access_token", errTokenExchange, o.ID)
		}
		return ts, &oauth2.Token{AccessToken: ts.AccessToken, TokenType: ts.TokenType}, nil
	}
	var opts []oauth2.AuthCodeOption
	if checks.CodeVerifier != "" {
		opts = append(opts, oauth2.VerifierOption(checks.CodeVerifier))
	}
	for k, vs := range o.Token.Params {
		if len(vs) > 0 {
			opts = append(opts, oauth2.SetAuthURLParam(k, vs[0]))
		}
	}
	auth, err := f.clientAuth(o, conf.Endpoint.TokenURL)
	if err != nil {
		return provider.TokenSet{}, nil, err
	}
	opts = append(opts, authOptions(auth)...)
	// Keep the token endpoint's response body: x/oauth2 exposes its members
	// one by one only, and the Account callback gets them all.
	rec := &recorder{base: f.client.Transport}
	client := *f.client
	client.Transport = rec
	tok, err := conf.Exchange(context.WithValue(ctx, oauth2.HTTPClient, &client), params.Get("code"), opts...)
	if err != nil {
		hint := ""
		if re, ok := errorsAs[*oauth2.RetrieveError](err); ok && re.ErrorCode == "invalid_grant" {
			hint = "; the code was used already, expired, or the PKCE verifier does not match: start signing in again"
		}
		return provider.TokenSet{}, nil, fmt.Errorf("%w: provider %q: %w%s", errTokenExchange, o.ID, err, hint)
	}
	return rec.tokenSet(tok), tok, nil
}

// recorder is a RoundTripper that keeps the last response body it saw.
type recorder struct {
	base  http.RoundTripper
	mu    sync.Mutex
	body  []byte
	ctype string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	base := r.base
	if base == nil {
		base = http.DefaultTransport
	}
	res, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.body, r.ctype = body, res.Header.Get("Content-Type")
	r.mu.Unlock()
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// tokenSet decodes the recorded token response, falling back on what
// x/oauth2 parsed when the body is not usable as a TokenSet.
func (r *recorder) tokenSet(tok *oauth2.Token) provider.TokenSet {
	r.mu.Lock()
	body, ctype := r.body, r.ctype
	r.mu.Unlock()
	if ts, err := decodeTokens(body, ctype); err == nil && ts.AccessToken == tok.AccessToken {
		return ts
	}
	ts := provider.TokenSet{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: tok.TokenType}
	if tok.ExpiresIn != 0 {
		n := tok.ExpiresIn
		ts.ExpiresIn = &n
	}
	for _, k := range []string{"id_token", "scope", "session_state"} {
		if s, ok := tok.Extra(k).(string); ok {
			switch k {
			case "id_token":
				ts.IDToken = s
			case "scope":
				ts.Scope = s
			case "session_state":
				ts.SessionState = s
			}
		}
	}
	return ts
}

// verifyIDToken checks the id_token with go-oidc (signature against the
// issuer's JWKS, iss, aud, exp) and returns it with its claims.
func (f *Flow) verifyIDToken(ctx context.Context, e *endpoints, o provider.OAuthOptions, raw string) (*oidc.IDToken, json.RawMessage, error) {
	idt, err := e.verifier.Verify(oidc.ClientContext(ctx, f.client), raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: provider %q: %w", errIDTokenInvalid, o.ID, err)
	}
	var claims json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return nil, nil, fmt.Errorf("%w: provider %q: claims: %w", errIDTokenInvalid, o.ID, err)
	}
	var t struct {
		TID string `json:"tid"`
		AZP string `json:"azp"`
	}
	_ = json.Unmarshal(claims, &t)
	// With several audiences the token must have been issued to this
	// client (OIDC Core 3.1.3.7, items 4 and 5).
	if len(idt.Audience) > 1 || t.AZP != "" {
		if t.AZP != o.ClientID {
			return nil, nil, fmt.Errorf("%w: provider %q: azp %q is not this client (%q)", errIDTokenInvalid, o.ID, t.AZP, o.ClientID)
		}
	}
	if e.issuerTemplate {
		want := strings.ReplaceAll(e.issuer, "{tenantid}", t.TID)
		if t.TID == "" || idt.Issuer != want {
			return nil, nil, fmt.Errorf("%w: provider %q: issuer %q is not %q for tenant %q", errIDTokenInvalid, o.ID, idt.Issuer, e.issuer, t.TID)
		}
	}
	return idt, claims, nil
}

// profileFromClaims maps the id_token's claims with the provider's Profile
// callback. A "user" form parameter (Apple posts the user's name on the
// first sign-in) is added to the claims as "user" when they have none.
func (f *Flow) profileFromClaims(ctx context.Context, p provider.OAuthProvider, claims json.RawMessage, params url.Values, tokens provider.TokenSet) (provider.User, error) {
	if u := params.Get("user"); u != "" {
		var m map[string]json.RawMessage
		var user map[string]any
		if json.Unmarshal(claims, &m) == nil && m["user"] == nil && json.Unmarshal([]byte(u), &user) == nil && user != nil {
			m["user"] = json.RawMessage(u)
			if b, err := json.Marshal(m); err == nil {
				claims = b
			}
		}
	}
	user, err := p.ProfileFromJSON(ctx, claims, tokens)
	if err != nil {
		return provider.User{}, fmt.Errorf("%w: provider %q: %w", errProfile, p.Common().ID, err)
	}
	return user, nil
}

// userinfo fetches the profile: through the provider's Userinfo.Request
// handler, else from the userinfo endpoint with the access token (go-oidc
// for OIDC, whose subject must be the id_token's, sub).
func (f *Flow) userinfo(ctx context.Context, p provider.OAuthProvider, o provider.OAuthOptions, e *endpoints,
	conf *oauth2.Config, tok *oauth2.Token, tokens provider.TokenSet, sub string) (provider.User, error) {
	endpoint := provider.Endpoint{URL: e.userinfoURL, Params: o.Userinfo.Params}
	user, ok, err := p.FetchUserinfo(ctx, provider.UserinfoRequest{Endpoint: endpoint, Tokens: tokens, Client: f.client, ClientID: o.ClientID})
	if ok {
		if err != nil {
			return provider.User{}, fmt.Errorf("%w: provider %q: %w", errUserinfo, o.ID, err)
		}
		return user, nil
	}
	if e.userinfoURL == "" {
		return provider.User{}, fmt.Errorf("%w: provider %q: no userinfo endpoint configured or discovered", errUserinfo, o.ID)
	}
	cctx := oidc.ClientContext(ctx, f.client)
	var raw json.RawMessage
	if o.Type == provider.TypeOIDC {
		ui, err := e.userinfo.UserInfo(cctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return provider.User{}, fmt.Errorf("%w: provider %q: %w", errUserinfo, o.ID, err)
		}
		if ui.Subject != sub {
			return provider.User{}, fmt.Errorf("%w: provider %q: userinfo is for subject %q, the id_token for %q", errUserinfo, o.ID, ui.Subject, sub)
		}
		if err := ui.Claims(&raw); err != nil {
			return provider.User{}, fmt.Errorf("%w: provider %q: %w", errUserinfo, o.ID, err)
		}
	} else {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint.WithParams(), nil)
		if err != nil {
			return provider.User{}, fmt.Errorf("%w: provider %q: %w", errUserinfo, o.ID, err)
		}
		req.Header.Set("Accept", "application/json")
		res, err := conf.Client(cctx, tok).Do(req)
		if err != nil {
			return provider.User{}, fmt.Errorf("%w: provider %q: %w", errUserinfo, o.ID, err)
		}
		defer res.Body.Close()
		raw, err = io.ReadAll(io.LimitReader(res.Body, maxBody))
		if err != nil {
			return provider.User{}, fmt.Errorf("%w: provider %q: %w", errUserinfo, o.ID, err)
		}
		if res.StatusCode/100 != 2 {
			return provider.User{}, fmt.Errorf("%w: provider %q: GET %s: %s", errUserinfo, o.ID, e.userinfoURL, res.Status)
		}
	}
	user, err = p.ProfileFromJSON(ctx, raw, tokens)
	if err != nil {
		return provider.User{}, fmt.Errorf("%w: provider %q: %w", errProfile, o.ID, err)
	}
	return user, nil
}
