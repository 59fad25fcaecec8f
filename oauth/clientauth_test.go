package oauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// assertionServer is an in-process authorization server whose token
// endpoint authenticates the client by an RFC 7523 client assertion only,
// verified with go-jose: the signature against the client's registered key
// (public key, or the secret for HMAC), alg, kid, iss = sub = client_id,
// aud = the token endpoint, exp in the future and at most 5 minutes away,
// jti never seen before. Anything else is 401 invalid_client.
type assertionServer struct {
	srv     *httptest.Server
	key     any                     // verification key: public key or []byte secret
	alg     jose.SignatureAlgorithm // the alg the client must use
	kid     string                  // the kid the client must name, or ""
	refresh map[string]bool         // live refresh tokens

	mu       sync.Mutex
	jtis     map[string]bool
	accepted []string // grant_type of each accepted request
	last     string   // the last assertion received
}

func newAssertionServer(t *testing.T, key any, alg jose.SignatureAlgorithm, kid string) *assertionServer {
	t.Helper()
	a := &assertionServer{key: key, alg: alg, kid: kid, jtis: map[string]bool{}, refresh: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", a.token)
	mux.HandleFunc("GET /userinfo", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": "u-1", "email": "ada@example.com", "name": "Ada"})
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *assertionServer) tokenURL() string { return a.srv.URL + "/token" }

// verify checks the request's client authentication; "" when it passes.
func (a *assertionServer) verify(r *http.Request) string {
	if _, _, ok := r.BasicAuth(); ok || r.PostForm.Has("client_secret") {
		return "a client secret was sent"
	}
	if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return "client_assertion_type"
	}
	raw := r.PostForm.Get("client_assertion")
	a.mu.Lock()
	a.last = raw
	a.mu.Unlock()
	jws, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{a.alg})
	if err != nil {
		return "alg or format: " + err.Error()
	}
	if h := jws.Signatures[0].Header; h.KeyID != a.kid {
		return fmt.Sprintf("kid %q, want %q", h.KeyID, a.kid)
	}
	payload, err := jws.Verify(a.key)
	if err != nil {
		return "signature: " + err.Error()
	}
	var c struct {
		Iss, Sub, Jti string
		Aud           any
		Exp, Iat      int64
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return "claims: " + err.Error()
	}
	id := r.PostForm.Get("client_id")
	now := time.Now().Unix()
	aud, _ := c.Aud.(string)
	switch {
	case c.Iss != fakeClientID || c.Sub != fakeClientID || (id != "" && id != fakeClientID):
		return "iss/sub/client_id"
	case aud != a.tokenURL():
		return fmt.Sprintf("aud %v, want %s", c.Aud, a.tokenURL())
	case c.Exp <= now || c.Exp > now+300:
		return "exp"
	case c.Jti == "":
		return "no jti"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.jtis[c.Jti] {
		return "jti replayed"
	}
	a.jtis[c.Jti] = true
	return ""
}

func (a *assertionServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, "invalid_request", err.Error())
		return
	}
	if why := a.verify(r); why != "" {
		writeJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": why})
		return
	}
	grant := r.PostForm.Get("grant_type")
	a.mu.Lock()
	defer a.mu.Unlock()
	switch grant {
	case "authorization_code":
	case "refresh_token":
		if !a.refresh[r.PostForm.Get("refresh_token")] {
			tokenError(w, "invalid_grant", "unknown or used refresh token")
			return
		}
		delete(a.refresh, r.PostForm.Get("refresh_token"))
	default:
		tokenError(w, "unsupported_grant_type", grant)
		return
	}
	a.accepted = append(a.accepted, grant)
	rt := "rt-" + randomString()
	a.refresh[rt] = true
	writeJSON(w, 200, map[string]any{"access_token": "at-" + randomString(), "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt})
}

// provider is an OAuth 2.0 provider at the server, authenticating with
// method.
func (a *assertionServer) provider(method string, client provider.ClientOptions) *provider.OAuth2Config[map[string]any] {
	client.TokenEndpointAuthMethod = method
	return &provider.OAuth2Config[map[string]any]{
		ID: "as", Name: "AS", ClientID: fakeClientID, ClientSecret: hmacSecret, Client: client,
		Authorization: provider.Endpoint{URL: a.srv.URL + "/authorize"},
		Token:         provider.TokenEndpoint{URL: a.tokenURL()},
		Userinfo:      provider.UserinfoEndpoint[map[string]any]{URL: a.srv.URL + "/userinfo"},
		Checks:        []provider.Check{provider.CheckState},
	}
}

// hmacSecret is a client secret long enough for HS512.
const hmacSecret = "client-secret-0123456789abcdef-0123456789abcdef-0123456789abcdef"

// opaqueSigner hides the concrete key type, as a key in a KMS does.
type opaqueSigner struct{ crypto.Signer }

// signInAt runs Begin and Callback against the server (which issues any
// code), returning the callback's result.
func signInAt(t *testing.T, s *setup, providerID string) (*auth.SignIn, error) {
	t.Helper()
	authURL, checks := s.begin(t, providerID)
	u, _ := url.Parse(authURL)
	back, _ := url.Parse(testBase + "/callback/" + providerID + "?code=c-" + randomString() + "&state=" + url.QueryEscape(u.Query().Get("state")))
	return s.callback(back, checks, providerID)
}

// expire makes the account's access token expired in the store.
func expire(t *testing.T, s *setup, acc *core.Account) {
	t.Helper()
	past := time.Now().Add(-time.Hour).Unix()
	if _, err := s.store.UpdateAccount(context.Background(), core.AccountUpdate{Provider: acc.Provider, ProviderAccountID: acc.ProviderAccountID, ExpiresAt: core.Set(&past)}); err != nil {
		t.Fatal(err)
	}
}

func TestClientAssertions(t *testing.T) {
	keys, err := testKeys()
	if err != nil {
		t.Fatal(err)
	}
	rsaKey := keys[0]
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method string
		client       provider.ClientOptions
		verify       any
		alg          jose.SignatureAlgorithm
	}{
		{"private_key_jwt RSA default RS256 with kid", "private_key_jwt", provider.ClientOptions{PrivateKey: rsaKey, PrivateKeyID: "k1"}, &rsaKey.PublicKey, jose.RS256},
		{"private_key_jwt RSA PS256", "private_key_jwt", provider.ClientOptions{PrivateKey: rsaKey, TokenEndpointAuthSigningAlg: "PS256"}, &rsaKey.PublicKey, jose.PS256},
		{"private_key_jwt ECDSA P-256", "private_key_jwt", provider.ClientOptions{PrivateKey: ecKey, PrivateKeyID: "ec"}, &ecKey.PublicKey, jose.ES256},
		{"private_key_jwt Ed25519", "private_key_jwt", provider.ClientOptions{PrivateKey: edKey}, edKey.Public(), jose.EdDSA},
		{"private_key_jwt opaque signer (KMS)", "private_key_jwt", provider.ClientOptions{PrivateKey: opaqueSigner{rsaKey}}, &rsaKey.PublicKey, jose.RS256},
		{"client_secret_jwt default HS256", "client_secret_jwt", provider.ClientOptions{}, []byte(hmacSecret), jose.HS256},
		{"client_secret_jwt HS512", "client_secret_jwt", provider.ClientOptions{TokenEndpointAuthSigningAlg: "HS512"}, []byte(hmacSecret), jose.HS512},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			as := newAssertionServer(t, tc.verify, tc.alg, tc.client.PrivateKeyID)
			s := newSetup(t, &http.Client{Timeout: 10 * time.Second}, testBase, as.provider(tc.method, tc.client))
			in, err := signInAt(t, s, "as")
			if err != nil {
				t.Fatalf("sign-in (code exchange): %v", err)
			}
			// The refresh authenticates the same way, with a new jti.
			expire(t, s, in.Account)
			at, err := s.flow.AccessToken(context.Background(), in.User.ID, "as")
			if err != nil {
				t.Fatalf("refresh: %v", err)
			}
			if at == *in.Account.AccessToken {
				t.Error("AccessToken returned the expired token")
			}
			if got := strings.Join(as.accepted, ","); got != "authorization_code,refresh_token" {
				t.Errorf("accepted grants %s", got)
			}
			// The server refuses the same assertion again (jti), so the
			// acceptance above is not a server that accepts anything.
			if code := postAssertion(t, as, as.last); code != http.StatusUnauthorized {
				t.Errorf("a replayed assertion got %d, want 401", code)
			}
		})
	}
}

// postAssertion sends a refresh request carrying the assertion to the
// server and returns the status.
func postAssertion(t *testing.T, as *assertionServer, assertion string) int {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {fakeClientID},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {assertion}}
	res, err := http.PostForm(as.tokenURL(), form)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// TestAssertionServerRefuses shows the verifying server refuses what it
// must (so that its acceptance means something), and that the flow's
// errors for a refused or impossible assertion are typed.
func TestAssertionServerRefuses(t *testing.T) {
	keys, err := testKeys()
	if err != nil {
		t.Fatal(err)
	}
	good, other := keys[0], keys[1]
	as := newAssertionServer(t, &good.PublicKey, jose.RS256, "")
	sign := func(key any, claims map[string]any) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(claims)
		jws, err := signer.Sign(b)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := jws.CompactSerialize()
		return out
	}
	now := time.Now().Unix()
	claims := func(edit func(map[string]any)) map[string]any {
		c := map[string]any{"iss": fakeClientID, "sub": fakeClientID, "aud": as.tokenURL(), "jti": randomString(), "iat": now, "exp": now + 60}
		edit(c)
		return c
	}
	for name, a := range map[string]string{
		"other key":    sign(other, claims(func(map[string]any) {})),
		"wrong aud":    sign(good, claims(func(c map[string]any) { c["aud"] = "https://elsewhere.example/token" })),
		"wrong iss":    sign(good, claims(func(c map[string]any) { c["iss"] = "someone" })),
		"expired":      sign(good, claims(func(c map[string]any) { c["exp"] = now - 10 })),
		"far exp":      sign(good, claims(func(c map[string]any) { c["exp"] = now + 3600 })),
		"no jti":       sign(good, claims(func(c map[string]any) { delete(c, "jti") })),
		"not a JWT":    "not-a-jwt",
		"HS256 forged": "eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo",
	} {
		if code := postAssertion(t, as, a); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, code)
		}
	}
	// A well-formed one passes, once.
	ok := sign(good, claims(func(map[string]any) {}))
	if code := postAssertion(t, as, ok); code != http.StatusBadRequest { // authenticated; refresh token "x" unknown
		t.Errorf("a valid assertion: status %d, want 400 invalid_grant", code)
	}
	if code := postAssertion(t, as, ok); code != http.StatusUnauthorized {
		t.Errorf("the same jti again: status %d, want 401", code)
	}

	// The flow signing with a key the server does not know: the sign-in
	// fails at the code exchange, nothing stored.
	s := newSetup(t, &http.Client{Timeout: 10 * time.Second}, testBase, as.provider("private_key_jwt", provider.ClientOptions{PrivateKey: other}))
	_, err = signInAt(t, s, "as")
	if !errors.Is(err, oauth.ErrTokenExchange) || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("unknown key: %v, want ErrTokenExchange with invalid_client", err)
	}
	if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Accounts) != 0 {
		t.Errorf("a refused client assertion stored %+v", snap)
	}
}

// TestClientAssertionConfig: what cannot sign is refused before any
// request, with the field to fix.
func TestClientAssertionConfig(t *testing.T) {
	keys, err := testKeys()
	if err != nil {
		t.Fatal(err)
	}
	as := newAssertionServer(t, nil, jose.RS256, "")
	for name, tc := range map[string]struct {
		p    *provider.OAuth2Config[map[string]any]
		want string
	}{
		"short HMAC secret": {func() *provider.OAuth2Config[map[string]any] {
			p := as.provider("client_secret_jwt", provider.ClientOptions{})
			p.ClientSecret = "short-secret"
			return p
		}(), "at least 32 bytes"},
		"alg that does not fit the key": {as.provider("private_key_jwt", provider.ClientOptions{PrivateKey: keys[0], TokenEndpointAuthSigningAlg: "ES256"}), "does not fit"},
		"HMAC alg for a secret JWT":     {as.provider("client_secret_jwt", provider.ClientOptions{TokenEndpointAuthSigningAlg: "RS256"}), "HS256, HS384 or HS512"},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSetup(t, nil, testBase, tc.p)
			_, err := s.flow.Begin(context.Background(), "as")
			if !errors.Is(err, core.ErrInvalidConfig) || auth.CodeOf(err) != auth.CodeConfiguration || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Begin: %v, want ErrInvalidConfig saying %q", err, tc.want)
			}
		})
	}
	// A private_key_jwt provider without a key is refused by auth.New.
	_, err = auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{as.provider("private_key_jwt", provider.ClientOptions{})},
		Secrets: []string{"auth secret-0123456789abcdefghij"}, BaseURL: testBase})
	if err == nil || !strings.Contains(err.Error(), "Client.PrivateKey") {
		t.Errorf("auth.New with private_key_jwt and no key: %v", err)
	}
}
