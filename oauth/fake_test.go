package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// fakeProvider is an in-process OAuth 2.0 / OpenID provider for the cases
// a real one cannot produce (a forged or expired id_token, a wrong
// audience), and for the built-in providers, whose real hosts it stands
// in for: its client sends every request to it, keeping the Host header,
// and it answers as the provider that host belongs to. Codes are single
// use; PKCE is verified; client authentication is checked and recorded.
type fakeProvider struct {
	t      testing.TB
	srv    *httptest.Server
	key    *rsa.PrivateKey // published in the JWKS
	other  *rsa.PrivateKey // never published
	client *http.Client    // sends every host to srv

	mu              sync.Mutex
	grants          map[string]*grant
	issuers         map[string]string // issuer overrides by host+prefix
	authUsed        []string          // client auth method of each token request
	tokenVia        []string          // how each userinfo request carried the token (see tokenVia)
	userinfoHeaders []http.Header     // each userinfo request's headers, its method as ":method"
	hits            map[string]int    // requests by kind: discovery, jwks, token, userinfo

	// Knobs, set before the token request.
	signWith    *rsa.PrivateKey        // nil: key
	claims      func(c map[string]any) // edits the id_token claims
	omitIDToken bool                   // no id_token in the token response
	tokenForm   bool                   // answer the token request form-encoded (GitHub's default)
	userinfo    func(host string) any  // the userinfo body, by host
	extraTokens map[string]any         // extra members of the token response
	profile     map[string]any         // id_token profile claims
	reuseCodes  bool                   // accept a code more than once (a lax provider)
}

// testKeys are two RSA keys made once for the package's tests: the
// provider's signing key and one it never published.
var testKeys = sync.OnceValues(func() ([2]*rsa.PrivateKey, error) {
	var keys [2]*rsa.PrivateKey
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return keys, err
		}
		keys[i] = k
	}
	return keys, nil
})

type grant struct {
	clientID, redirectURI, challenge, nonce, scope string
	used                                           bool
}

const (
	fakeClientID     = "client-id"
	fakeClientSecret = "client-secret"
	fakeTenant       = "9188040d-6c67-4c5b-b112-36a304b66dad"
)

func newFakeProvider(t testing.TB) *fakeProvider {
	t.Helper()
	f := &fakeProvider{t: t, grants: map[string]*grant{}, issuers: map[string]string{}, hits: map[string]int{}}
	keys, err := testKeys()
	if err != nil {
		t.Fatal(err)
	}
	f.key, f.other = keys[0], keys[1]
	f.profile = map[string]any{"email": "ada@example.com", "name": "Ada Lovelace", "preferred_username": "ada",
		"nickname": "ada", "picture": "https://img.example.com/ada.png"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	addr := f.srv.Listener.Addr().String()
	base := f.srv.Client().Transport.(*http.Transport).Clone()
	base.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	f.client = &http.Client{Transport: rewrite{base}, Timeout: 10 * time.Second}
	return f
}

// rewrite sends https requests as http (to the fake's listener, which the
// transport dials whatever the host), keeping the Host header.
type rewrite struct{ base http.RoundTripper }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme = "http"
	return r.base.RoundTrip(req)
}

// URL is the fake's own issuer on loopback.
func (f *fakeProvider) URL() string { return f.srv.URL }

func (f *fakeProvider) scheme(host string) string {
	if host == f.srv.Listener.Addr().String() {
		return "http"
	}
	return "https"
}

// issuer is the issuer served at host under the path prefix.
func (f *fakeProvider) issuer(host, prefix string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if is, ok := f.issuers[host+prefix]; ok {
		return is
	}
	if strings.Contains(prefix, "/common/") || strings.HasPrefix(prefix, "/common") {
		return "https://" + host + "/{tenantid}/v2.0"
	}
	return f.scheme(host) + "://" + host + prefix
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/nowhere"):
		http.NotFound(w, r)
	case strings.HasSuffix(p, "/.well-known/openid-configuration"):
		f.hit("discovery")
		prefix := strings.TrimSuffix(p, "/.well-known/openid-configuration")
		iss := f.issuer(r.Host, prefix)
		ep := f.scheme(r.Host) + "://" + r.Host + prefix
		writeJSON(w, 200, map[string]any{
			"issuer": iss, "authorization_endpoint": ep + "/authorize", "token_endpoint": ep + "/token",
			"userinfo_endpoint": ep + "/userinfo", "jwks_uri": ep + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported":              []string{"code"},
		})
	case strings.HasSuffix(p, "/jwks"):
		f.hit("jwks")
		writeJSON(w, 200, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &f.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	case strings.HasSuffix(p, "/token") || strings.HasSuffix(p, "/access_token"):
		f.token(w, r, strings.TrimSuffix(strings.TrimSuffix(p, "/token"), "/access_token"))
	default:
		f.serveUserinfo(w, r)
	}
}

func (f *fakeProvider) hit(kind string) {
	f.mu.Lock()
	f.hits[kind]++
	f.mu.Unlock()
}

func (f *fakeProvider) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[kind]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// authorize plays the user consenting at the provider: it reads the
// authorization URL, issues a code bound to it, and returns the redirect
// back to the client's redirect_uri.
func (f *fakeProvider) authorize(authURL string) *url.URL {
	f.t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		f.t.Fatal(err)
	}
	q := u.Query()
	if q.Get("response_type") != "code" || q.Get("client_id") != fakeClientID {
		f.t.Fatalf("authorization URL %s: want response_type=code, client_id=%s", authURL, fakeClientID)
	}
	if m := q.Get("code_challenge_method"); q.Get("code_challenge") != "" && m != "S256" {
		f.t.Fatalf("code_challenge_method %q, want S256", m)
	}
	code := randomString()
	f.mu.Lock()
	f.grants[code] = &grant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"),
		challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), scope: q.Get("scope")}
	f.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		f.t.Fatal(err)
	}
	bq := back.Query()
	bq.Set("code", code)
	if s := q.Get("state"); s != "" {
		bq.Set("state", s)
	}
	back.RawQuery = bq.Encode()
	return back
}

// redeem uses a code up, as if someone had exchanged it already.
func (f *fakeProvider) redeem(code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.grants[code].used = true
}

func randomString() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func tokenError(w http.ResponseWriter, code, desc string) {
	writeJSON(w, 400, map[string]string{"error": code, "error_description": desc})
}

func (f *fakeProvider) token(w http.ResponseWriter, r *http.Request, prefix string) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		tokenError(w, "invalid_request", "want a POST form")
		return
	}
	id, secret, basic := r.BasicAuth()
	method := "client_secret_basic"
	if !basic {
		id, secret, method = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), "client_secret_post"
	}
	if id != fakeClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(fakeClientSecret)) != 1 {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	f.mu.Lock()
	f.authUsed = append(f.authUsed, method)
	g := f.grants[r.PostForm.Get("code")]
	replay := g != nil && g.used && !f.reuseCodes
	if g != nil {
		g.used = true
	}
	f.mu.Unlock()
	switch {
	case g == nil:
		tokenError(w, "invalid_grant", "unknown code")
		return
	case replay:
		tokenError(w, "invalid_grant", "code already used")
		return
	case g.redirectURI != r.PostForm.Get("redirect_uri"):
		tokenError(w, "invalid_grant", "redirect_uri differs")
		return
	case r.PostForm.Get("grant_type") != "authorization_code":
		tokenError(w, "unsupported_grant_type", "")
		return
	}
	if g.challenge != "" {
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			tokenError(w, "invalid_grant", "PKCE verification failed")
			return
		}
	}
	resp := map[string]any{
		"access_token": "at-" + randomString(), "token_type": "Bearer", "expires_in": 3600,
		"refresh_token": "rt-" + randomString(), "scope": g.scope, "session_state": "ss-1",
	}
	for k, v := range f.extraTokens {
		resp[k] = v
	}
	if !f.omitIDToken {
		resp["id_token"] = f.idToken(r.Host, prefix, g)
	}
	if f.tokenForm {
		form := url.Values{}
		for k, v := range resp {
			form.Set(k, strings.Trim(mustJSON(v), `"`))
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		_, _ = w.Write([]byte(form.Encode()))
		return
	}
	writeJSON(w, 200, resp)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sub is the subject the fake gives the user at host.
func sub(host string) string { return "sub-" + strings.Split(host, ":")[0] }

func (f *fakeProvider) idToken(host, prefix string, g *grant) string {
	iss := f.issuer(host, prefix)
	now := time.Now()
	c := map[string]any{
		"iss": iss, "sub": sub(host), "aud": g.clientID, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	if strings.Contains(iss, "{tenantid}") {
		c["iss"] = strings.ReplaceAll(iss, "{tenantid}", fakeTenant)
		c["tid"] = fakeTenant
	}
	if g.nonce != "" {
		c["nonce"] = g.nonce
	}
	for k, v := range f.profile {
		c[k] = v
	}
	if f.claims != nil {
		f.claims(c)
	}
	key := f.key
	if f.signWith != nil {
		key = f.signWith
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		f.t.Error(err)
		return ""
	}
	payload, _ := json.Marshal(c)
	jws, err := signer.Sign(payload)
	if err != nil {
		f.t.Error(err)
		return ""
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		f.t.Error(err)
	}
	return s
}

// tokenVia says how a userinfo request carried the access token: the
// Authorization scheme ("Bearer", "OAuth", "Zoho-oauthtoken"), "query:" and
// the parameter name, or "path"; "" when it carried none.
func tokenVia(r *http.Request) string {
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.HasPrefix(tok, "at-") {
		return scheme
	}
	for _, k := range []string{"access_token", "oauth_token"} {
		if strings.HasPrefix(r.URL.Query().Get(k), "at-") {
			return "query:" + k
		}
	}
	for _, seg := range strings.Split(r.URL.Path, "/") {
		if strings.HasPrefix(seg, "at-") {
			return "path"
		}
	}
	return ""
}

func (f *fakeProvider) serveUserinfo(w http.ResponseWriter, r *http.Request) {
	via := tokenVia(r)
	if via == "" {
		writeJSON(w, 401, map[string]string{"error": "invalid_token"})
		return
	}
	f.mu.Lock()
	f.tokenVia = append(f.tokenVia, via)
	h := r.Header.Clone()
	h.Set(":method", r.Method)
	f.userinfoHeaders = append(f.userinfoHeaders, h)
	f.mu.Unlock()
	var body any
	if f.userinfo != nil {
		body = f.userinfo(r.Host + r.URL.Path)
	}
	if body == nil {
		m := map[string]any{"sub": sub(r.Host)}
		for k, v := range f.profile {
			m[k] = v
		}
		body = m
	}
	writeJSON(w, 200, body)
}
