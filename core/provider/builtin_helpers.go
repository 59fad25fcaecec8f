package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// StandardClaims are the OpenID Connect standard claims (OIDC Core 5.1)
// that most OIDC built-ins map to a [User]. Provider profile types embed
// it and add their own claims.
type StandardClaims struct {
	Sub               string `json:"sub"`
	Name              string `json:"name,omitempty"`
	GivenName         string `json:"given_name,omitempty"`
	FamilyName        string `json:"family_name,omitempty"`
	MiddleName        string `json:"middle_name,omitempty"`
	Nickname          string `json:"nickname,omitempty"`
	PreferredUsername string `json:"preferred_username,omitempty"`
	Email             string `json:"email,omitempty"`
	EmailVerified     bool   `json:"email_verified,omitempty"`
	Picture           string `json:"picture,omitempty"`
	Locale            string `json:"locale,omitempty"`
	Zoneinfo          string `json:"zoneinfo,omitempty"`
	UpdatedAt         any    `json:"updated_at,omitempty"`
}

// Standard returns the standard claims; profile types that embed
// [StandardClaims] get it, and with it [StandardClaimsUser] as their
// profile mapping.
func (c StandardClaims) Standard() StandardClaims { return c }

// StandardClaimer is a profile type that carries the standard claims.
type StandardClaimer interface{ Standard() StandardClaims }

// StandardClaimsUser is the profile mapping of the OIDC built-ins that
// use the standard claims: sub; email; name, else given and family name
// joined, else nickname, else preferred_username; picture.
func StandardClaimsUser[P StandardClaimer](_ context.Context, p P, _ TokenSet) (User, error) {
	c := p.Standard()
	name := first(c.Name, joinNonEmpty(c.GivenName, c.MiddleName, c.FamilyName), c.Nickname, c.PreferredUsername)
	return User{ID: c.Sub, Email: c.Email, Name: str(name), Image: str(c.Picture)}, nil
}

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
func tokenString(t TokenSet, name string) string {
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

// FlexString is a JSON string or number, kept as a string: some providers
// send ids as numbers in one API version and strings in another.
type FlexString string

// UnmarshalJSON accepts a string, a number (kept with every digit) or null.
func (f *FlexString) UnmarshalJSON(data []byte) error {
	s := strings.TrimSpace(string(data))
	switch {
	case s == "null":
		*f = ""
	case strings.HasPrefix(s, `"`):
		var v string
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		*f = FlexString(v)
	default:
		var n json.Number
		if err := json.Unmarshal(data, &n); err != nil {
			return fmt.Errorf("want a string or a number: %w", err)
		}
		*f = FlexString(n.String())
	}
	return nil
}
