package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/authport/authport/core/provider"
)

// joinNonEmpty joins the non-empty, trimmed parts with single spaces.
func joinNonEmpty(parts ...string) string {
	var b []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			b = append(b, s)
		}
	}
	return strings.Join(b, " ")
}

// baseURL returns s as an https URL without a trailing slash: a bare
// domain gets https:// in front.
func baseURL(s string) string {
	return strings.TrimRight(issuerURL(s), "/")
}

// userinfoCall describes one request a custom userinfo handler makes.
type userinfoCall struct {
	method string
	url    string
	header http.Header
	body   string
}

// fetchJSON performs c and decodes the JSON response into dst. The
// response body is bounded by maxProfileBytes; a non-2xx status is an
// error naming the URL without its query (which may carry the token).
func fetchJSON(ctx context.Context, client *http.Client, c userinfoCall, dst any) error {
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r, err := http.NewRequestWithContext(ctx, method, c.url, body)
	if err != nil {
		return fmt.Errorf("userinfo request: %w", redactURLError(err))
	}
	r.Header.Set("Accept", "application/json")
	r.Header.Set("User-Agent", "authport")
	for k, vs := range c.header {
		r.Header[k] = vs
	}
	res, err := client.Do(r)
	if err != nil {
		return redactURLError(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxProfileBytes))
	if err != nil {
		return err
	}
	where := method + " " + redactURL(c.url)
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", where, res.Status)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// redactURL drops the query and fragment of a URL, which may hold an
// access token.
func redactURL(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		return s[:i]
	}
	return s
}

// redactURLError strips the query from the URL in a *url.Error.
func redactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		c := *ue
		c.URL = redactURL(c.URL)
		return &c
	}
	return err
}

// authHeader returns an Authorization header "scheme token".
func authHeader(scheme, token string) http.Header {
	return http.Header{"Authorization": {scheme + " " + token}}
}

// withQuery returns rawURL with the key set to value in its query.
func withQuery(rawURL, key, value string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// tokenString returns the string (or number) member name of the token
// response's extra members, or "".
func tokenString(t provider.TokenSet, name string) string {
	switch v := t.Extra[name].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return fmt.Sprint(int64(v))
	}
	return ""
}

// maxProfileBytes bounds the body read from a profile endpoint.
const maxProfileBytes = 1 << 20

func getJSON(ctx context.Context, c *http.Client, rawURL, accessToken string, dst any) error {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	r.Header.Set("Accept", "application/json")
	r.Header.Set("User-Agent", "authport")
	if accessToken != "" {
		r.Header.Set("Authorization", "Bearer "+accessToken)
	}
	res, err := c.Do(r)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxProfileBytes))
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s", rawURL, res.Status)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("GET %s: %w", rawURL, err)
	}
	return nil
}

// oauthBuiltIn is the common shape of an OAuth 2.0 built-in: its id, name
// and button colour, the options in with (see [withOptions]), the client
// credentials and profile mapping, and its endpoints. scope, when not
// empty, is sent as the authorization request's scope.
func oauthBuiltIn[P any](id, name, color, with, clientID, clientSecret string, profile provider.ProfileCallback[P],
	authURL, scope, tokenURL, userinfoURL string) *provider.OAuth2Config[P] {
	c := &provider.OAuth2Config[P]{
		ID:            id,
		Name:          name,
		Authorization: provider.Endpoint{URL: authURL},
		Token:         provider.TokenEndpoint{URL: tokenURL},
		Userinfo:      provider.UserinfoEndpoint[P]{URL: userinfoURL},
		ClientID:      clientID,
		ClientSecret:  clientSecret,
		Profile:       profile,
		Style:         provider.ButtonStyle{Logo: "/" + id + ".svg", BrandColor: color},
	}
	if scope != "" {
		c.Authorization.Params = params("scope", scope)
	}
	withOptions(with, c)
	return c
}

// withOptions applies a built-in's options, space-separated words: the
// callback checks ("pkce", "state", "nonce"; none of them leaves Checks
// empty, which [provider.Validate] makes pkce) and the token endpoint's
// client authentication ("post" for client_secret_post, "basic" for
// client_secret_basic stated explicitly). Every constructor of this
// package passes constant options, which TestReadmeTable checks against
// the README's table; an unknown word is a bug here and panics.
func withOptions[P any](with string, c *provider.OAuth2Config[P]) {
	for _, w := range strings.Fields(with) {
		switch w {
		case "pkce", "state", "nonce":
			c.Checks = append(c.Checks, provider.Check(w))
		case "post", "basic":
			c.Client.TokenEndpointAuthMethod = "client_secret_" + w
		default:
			panic("providers: unknown built-in option " + w)
		}
	}
}

func itoa(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// redactToken replaces token in err's message, for errors about a URL
// that carries it in its path.
func redactToken(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), token, "[token]"), err: err}
}

// hostedBuiltIn is [oauthBuiltIn] for a provider deployed per server:
// the endpoints are paths under the base URL of issuer (see [baseURL]).
// Without an issuer they stay empty, so that [provider.Validate] reports
// them missing.
func hostedBuiltIn[P any](id, name, color, with, clientID, clientSecret string, profile provider.ProfileCallback[P],
	issuer, authPath, scope, tokenPath, userinfoPath string) *provider.OAuth2Config[P] {
	base := baseURL(issuer)
	c := oauthBuiltIn(id, name, color, with, clientID, clientSecret, profile, base+authPath, scope, base+tokenPath, base+userinfoPath)
	if base == "" {
		c.Authorization.URL, c.Token.URL, c.Userinfo.URL = "", "", ""
	}
	return c
}

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// oidcBuiltIn is the common shape of an issuer-based OIDC built-in: as
// [oauthBuiltIn], with the issuer instead of the endpoints, which come
// from discovery.
func oidcBuiltIn[P any](id, name, color, with, clientID, clientSecret string, profile provider.ProfileCallback[P], issuer string) *provider.OIDCConfig[P] {
	c := &provider.OIDCConfig[P]{OAuth2Config: provider.OAuth2Config[P]{
		ID: id, Name: name, Issuer: issuer, ClientID: clientID, ClientSecret: clientSecret, Profile: profile,
		Style: provider.ButtonStyle{Logo: "/" + id + ".svg", BrandColor: color},
	}}
	withOptions(with, &c.OAuth2Config)
	return c
}

// str returns a pointer to s, or nil for "".
func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// clientOf returns the request's HTTP client, or [http.DefaultClient].
func clientOf(req provider.UserinfoRequest) *http.Client {
	if req.Client != nil {
		return req.Client
	}
	return http.DefaultClient
}

// userinfoFetch is a userinfo handler that makes the request call
// describes for the userinfo request and decodes the JSON response (see
// [fetchJSON]) as the profile.
func userinfoFetch[P any](call func(req provider.UserinfoRequest) userinfoCall) func(context.Context, provider.UserinfoRequest) (P, error) {
	return func(ctx context.Context, req provider.UserinfoRequest) (P, error) {
		var p P
		err := fetchJSON(ctx, clientOf(req), call(req), &p)
		return p, err
	}
}

// userinfoWithScheme is a userinfo handler that sends the access token as
// "Authorization: {scheme} {token}", for APIs that want a scheme other
// than Bearer.
func userinfoWithScheme[P any](scheme string) func(context.Context, provider.UserinfoRequest) (P, error) {
	return userinfoFetch[P](func(req provider.UserinfoRequest) userinfoCall {
		return userinfoCall{url: req.Endpoint.WithParams(), header: authHeader(scheme, req.Tokens.AccessToken)}
	})
}

// userinfoTokenInQuery is a userinfo handler that sends the access token
// as the query parameter param, for APIs that take it there (errors name
// the URL without its query).
func userinfoTokenInQuery[P any](param string) func(context.Context, provider.UserinfoRequest) (P, error) {
	return userinfoFetch[P](func(req provider.UserinfoRequest) userinfoCall {
		return userinfoCall{url: withQuery(req.Endpoint.WithParams(), param, req.Tokens.AccessToken)}
	})
}
