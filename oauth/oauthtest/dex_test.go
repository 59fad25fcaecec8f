package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// discovery is the part of dex's discovery document the tests use.
type discovery struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	JWKSURI               string   `json:"jwks_uri"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
}

func fetchDiscovery(t *testing.T, ctx context.Context, issuer string) discovery {
	t.Helper()
	var doc discovery
	getJSON(t, ctx, issuer+"/.well-known/openid-configuration", &doc)
	if doc.Issuer != issuer || doc.AuthorizationEndpoint == "" || doc.TokenEndpoint == "" {
		t.Fatalf("discovery of %s: %+v", issuer, doc)
	}
	return doc
}

func getJSON(t *testing.T, ctx context.Context, u string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// authRequest is an authorization request built by hand, as a client would.
type authRequest struct {
	url, state, nonce, verifier string
}

func newAuthRequest(t *testing.T, doc discovery, clientID, redirectURI string) authRequest {
	t.Helper()
	r := authRequest{state: randomString(t), nonce: randomString(t), verifier: randomString(t) + randomString(t)}
	challenge := sha256.Sum256([]byte(r.verifier))
	q := url.Values{
		"client_id":             {clientID},
		"redirect_uri":          {redirectURI},
		"response_type":         {"code"},
		"scope":                 {"openid email profile"},
		"state":                 {r.state},
		"nonce":                 {r.nonce},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(challenge[:])},
		"code_challenge_method": {"S256"},
	}
	r.url = doc.AuthorizationEndpoint + "?" + q.Encode()
	return r
}

func randomString(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// tokenResponse is what dex's token endpoint answers.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	IDToken     string `json:"id_token"`
	Error       string `json:"error"`
	status      int
}

// exchange redeems code at the token endpoint; client authenticates with
// HTTP Basic unless it is public.
func exchange(t *testing.T, ctx context.Context, doc discovery, client DexClient, redirectURI, code, verifier string) tokenResponse {
	t.Helper()
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"code_verifier": {verifier},
	}
	if client.Public {
		form.Set("client_id", client.ID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, doc.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if !client.Public {
		req.SetBasicAuth(url.QueryEscape(client.ID), url.QueryEscape(client.Secret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Fatalf("token endpoint answered %s: %q", resp.Status, body)
	}
	tr.status = resp.StatusCode
	return tr
}

// idClaims are the claims of an ID token the tests look at. The signature
// is the sign-in module's business; these tests only read the payload.
type idClaims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience any    `json:"aud"`
	Nonce    string `json:"nonce"`
	Email    string `json:"email"`
	Name     string `json:"name"`
}

func readIDToken(t *testing.T, token string) idClaims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token has %d parts, want 3: %.40q…", len(parts), token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("id_token payload: %v", err)
	}
	var c idClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatalf("id_token payload: %v", err)
	}
	return c
}

// signIn runs a whole authorization code flow with PKCE for user at d and
// checks the ID token; it returns the claims.
func signIn(t *testing.T, ctx context.Context, d *DexServer, client DexClient, user DexUser) idClaims {
	t.Helper()
	doc := fetchDiscovery(t, ctx, d.Issuer)
	redirectURI := client.RedirectURIs[0]
	ar := newAuthRequest(t, doc, client.ID, redirectURI)
	got, err := d.Login(ctx, ar.url, user.Email, user.Password)
	if err != nil {
		t.Fatalf("Login(%s): %v", user.Email, err)
	}
	q := got.Query()
	if base := (url.URL{Scheme: got.Scheme, Host: got.Host, Path: got.Path}); base.String() != redirectURI {
		t.Errorf("Login returned %s, want a redirect to %s", got, redirectURI)
	}
	if q.Get("code") == "" || q.Get("state") != ar.state || q.Get("error") != "" {
		t.Fatalf("redirect %s: want a code and state %q, no error", got, ar.state)
	}

	tr := exchange(t, ctx, doc, client, redirectURI, q.Get("code"), ar.verifier)
	if tr.status != http.StatusOK || tr.IDToken == "" || tr.AccessToken == "" || !strings.EqualFold(tr.TokenType, "bearer") {
		t.Fatalf("token endpoint: status %d, error %q, id_token %t, access_token %t, token_type %q",
			tr.status, tr.Error, tr.IDToken != "", tr.AccessToken != "", tr.TokenType)
	}
	claims := readIDToken(t, tr.IDToken)
	if claims.Issuer != d.Issuer || claims.Nonce != ar.nonce || claims.Email != user.Email || claims.Subject == "" {
		t.Errorf("id_token claims %+v; want iss %s, nonce %s, email %s, a sub", claims, d.Issuer, ar.nonce, user.Email)
	}
	if aud := fmt.Sprint(claims.Audience); !strings.Contains(aud, client.ID) {
		t.Errorf("id_token aud %v, want %s", claims.Audience, client.ID)
	}

	// A code is single use.
	again := exchange(t, ctx, doc, client, redirectURI, q.Get("code"), ar.verifier)
	if again.status == http.StatusOK || again.Error != "invalid_grant" {
		t.Errorf("second exchange of one code: status %d, error %q; want invalid_grant", again.status, again.Error)
	}
	return claims
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestDex starts dex with the defaults and signs the default user in with
// the default client, then checks what goes wrong says so.
func TestDex(t *testing.T) {
	d := Dex(t, DexConfig{})
	ctx := testContext(t)
	if !strings.HasPrefix(d.Issuer, "http://127.0.0.1:") || !strings.HasSuffix(d.Issuer, "/dex") {
		t.Errorf("Issuer = %q, want http://127.0.0.1:PORT/dex", d.Issuer)
	}
	client, user := d.Config.Clients[0], d.Config.Users[0]
	if client.ID != DefaultDexClientID || client.Secret != DefaultDexClientSecret || user.Email != DefaultDexUserEmail {
		t.Fatalf("Config = %+v, want the defaults", d.Config)
	}
	doc := fetchDiscovery(t, ctx, d.Issuer)
	if !contains(doc.CodeChallengeMethods, "S256") {
		t.Errorf("code_challenge_methods_supported = %q, want S256", doc.CodeChallengeMethods)
	}

	claims := signIn(t, ctx, d, client, user)
	if claims.Name != DefaultDexUserName {
		t.Errorf("name claim %q, want %q", claims.Name, DefaultDexUserName)
	}

	t.Run("wrong password", func(t *testing.T) {
		ar := newAuthRequest(t, doc, client.ID, client.RedirectURIs[0])
		got, err := d.Login(ctx, ar.url, user.Email, "not-the-password")
		if !errors.Is(err, ErrDexLoginRejected) || !errors.Is(err, ErrDexLogin) || got != nil {
			t.Fatalf("Login = %v, %v; want ErrDexLoginRejected", got, err)
		}
		if !strings.Contains(err.Error(), "Invalid") {
			t.Errorf("error %q does not quote dex's message", err)
		}
		if strings.Contains(err.Error(), "not-the-password") {
			t.Errorf("error %q shows the password", err)
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		ar := newAuthRequest(t, doc, client.ID, client.RedirectURIs[0])
		_, err := d.Login(ctx, ar.url, "mallory@example.com", user.Password)
		if !errors.Is(err, ErrDexLoginRejected) {
			t.Fatalf("Login = %v; want ErrDexLoginRejected", err)
		}
	})
	t.Run("unregistered redirect_uri", func(t *testing.T) {
		ar := newAuthRequest(t, doc, client.ID, "http://127.0.0.1:3000/elsewhere")
		_, err := d.Login(ctx, ar.url, user.Email, user.Password)
		if !errors.Is(err, ErrDexLogin) || errors.Is(err, ErrDexLoginRejected) || !strings.Contains(err.Error(), "400") {
			t.Fatalf("Login = %v; want ErrDexLogin with dex's status 400", err)
		}
		t.Logf("error: %v", err)
	})
	t.Run("unknown client", func(t *testing.T) {
		ar := newAuthRequest(t, doc, "no-such-client", client.RedirectURIs[0])
		_, err := d.Login(ctx, ar.url, user.Email, user.Password)
		if !errors.Is(err, ErrDexLogin) || !strings.Contains(strings.ToLower(err.Error()), "client") {
			t.Fatalf("Login = %v; want ErrDexLogin naming the client", err)
		}
	})
	t.Run("unsupported response_type comes back as an error redirect", func(t *testing.T) {
		ar := newAuthRequest(t, doc, client.ID, client.RedirectURIs[0])
		u, _ := url.Parse(ar.url)
		q := u.Query()
		q.Set("response_type", "no-such-type")
		u.RawQuery = q.Encode()
		got, err := d.Login(ctx, u.String(), user.Email, user.Password)
		if err != nil {
			t.Fatalf("Login: %v; want the error redirect", err)
		}
		if got.Query().Get("error") == "" || got.Query().Get("code") != "" || got.Query().Get("state") != ar.state {
			t.Errorf("redirect %s: want error and state, no code", got)
		}
	})
	t.Run("not this dex", func(t *testing.T) {
		_, err := d.Login(ctx, "http://127.0.0.1:1/dex/auth?client_id=x", user.Email, user.Password)
		if !errors.Is(err, ErrDexLogin) || !strings.Contains(err.Error(), "not on this dex") {
			t.Fatalf("Login = %v; want an error saying the URL is not on this dex", err)
		}
	})
	t.Run("canceled context", func(t *testing.T) {
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		ar := newAuthRequest(t, doc, client.ID, client.RedirectURIs[0])
		_, err := d.Login(canceled, ar.url, user.Email, user.Password)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrDexLogin) {
			t.Fatalf("Login = %v; want context.Canceled", err)
		}
	})
}

// TestDexSideBySide runs two dex servers with their own clients and users
// at once, and signs users in on both concurrently.
func TestDexSideBySide(t *testing.T) {
	bob := DexUser{Email: "bob@example.com", Password: "bob's secret $2a$ password"}
	// Hashing a password takes seconds under the race detector: carol has
	// the default one, whose hash is made already.
	carol := DexUser{Email: "carol@example.org", Password: DefaultDexUserPassword, Username: "Carol C.", UserID: "carol-1"}
	confidential := DexClient{ID: "app-one", Secret: "s3cr$t/with+odd:chars", RedirectURIs: []string{"http://127.0.0.1:4000/cb"}}
	public := DexClient{ID: "native-app", Public: true, RedirectURIs: []string{"http://127.0.0.1:4001/callback"}}

	a := Dex(t, DexConfig{Clients: []DexClient{confidential}, Users: []DexUser{bob}})
	b := Dex(t, DexConfig{Clients: []DexClient{public, confidential}, Users: []DexUser{carol, bob}})
	if a.Issuer == b.Issuer {
		t.Fatalf("both servers have issuer %s", a.Issuer)
	}
	ctx := testContext(t)

	subs := make([]string, 4)
	t.Run("concurrently", func(t *testing.T) {
		for i, run := range []struct {
			d      *DexServer
			client DexClient
			user   DexUser
		}{{a, confidential, bob}, {b, public, carol}, {b, confidential, bob}, {a, confidential, bob}} {
			t.Run(fmt.Sprintf("%d-%s", i, run.user.Email), func(t *testing.T) {
				t.Parallel()
				subs[i] = signIn(t, ctx, run.d, run.client, run.user).Subject
			})
		}
	})
	if subs[0] == "" || subs[0] != subs[3] {
		t.Errorf("bob's sub at one dex changed between sign-ins: %q, %q", subs[0], subs[3])
	}

	// carol exists only on b.
	doc := fetchDiscovery(t, ctx, a.Issuer)
	ar := newAuthRequest(t, doc, confidential.ID, confidential.RedirectURIs[0])
	if _, err := a.Login(ctx, ar.url, carol.Email, carol.Password); !errors.Is(err, ErrDexLoginRejected) {
		t.Errorf("carol at the other dex: %v; want ErrDexLoginRejected", err)
	}
	// The public client exists only on b.
	ar = newAuthRequest(t, doc, public.ID, public.RedirectURIs[0])
	if _, err := a.Login(ctx, ar.url, bob.Email, bob.Password); !errors.Is(err, ErrDexLogin) {
		t.Errorf("unknown client at the other dex: %v; want ErrDexLogin", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDexConfigDefaults(t *testing.T) {
	got, err := DexConfig{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := DexConfig{
		Clients: []DexClient{{ID: DefaultDexClientID, Secret: DefaultDexClientSecret, Name: "authport tests", RedirectURIs: []string{DefaultDexRedirectURI}}},
		Users:   []DexUser{{Email: DefaultDexUserEmail, Username: DefaultDexUserName, Password: DefaultDexUserPassword, UserID: DefaultDexUserID}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("zero config = %+v, want %+v", got, want)
	}

	in := DexConfig{
		Clients: []DexClient{{ID: "pub", Public: true, RedirectURIs: []string{"http://x/cb"}}},
		Users:   []DexUser{{Email: "Dora@Example.com", Password: "pw"}},
	}
	got, err = in.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Clients[0]; c.Name != "pub" || c.Secret != "" || !c.Public {
		t.Errorf("client = %+v, want its name defaulted to its ID", c)
	}
	if u := got.Users[0]; u.Username != "Dora" || !strings.HasPrefix(u.UserID, "user-") {
		t.Errorf("user = %+v, want username Dora and a derived UserID", u)
	}
	again, _ := in.withDefaults()
	if again.Users[0].UserID != got.Users[0].UserID {
		t.Error("derived UserID differs between calls")
	}
	in.Clients[0].RedirectURIs[0] = "changed"
	if got.Clients[0].RedirectURIs[0] != "http://x/cb" {
		t.Error("the result shares RedirectURIs with the input")
	}

	for name, bad := range map[string]DexConfig{
		"client without ID":     {Clients: []DexClient{{Secret: "s"}}},
		"client without secret": {Clients: []DexClient{{ID: "c"}}},
		"duplicate client":      {Clients: []DexClient{{ID: "c", Secret: "s"}, {ID: "c", Secret: "t"}}},
		"user without email":    {Users: []DexUser{{Password: "p"}}},
		"user without password": {Users: []DexUser{{Email: "e@x"}}},
		"duplicate email":       {Users: []DexUser{{Email: "e@x", Password: "p"}, {Email: "E@X", Password: "q"}}},
		"password too long":     {Users: []DexUser{{Email: "e@x", Password: strings.Repeat("p", 73)}}},
	} {
		if _, err := bad.withDefaults(); !errors.Is(err, errDexConfig) {
			t.Errorf("%s: err = %v, want errDexConfig", name, err)
		}
	}
}

func TestDexBinary(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "dex")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "notexec")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		vars            map[string]string
		want            string
		skipped, failed string
	}{
		{name: "set", vars: map[string]string{DexBinEnv: exe}, want: exe},
		{name: "set and required", vars: map[string]string{DexBinEnv: exe, RequireEnv: "all"}, want: exe},
		{name: "unset skips", skipped: "no dex: set AUTHPORT_DEX_BIN"},
		{name: "unset, other required, skips", vars: map[string]string{RequireEnv: "postgres"}, skipped: "no dex"},
		{name: "unset, dex required, fails", vars: map[string]string{RequireEnv: "postgres, dex"}, failed: "AUTHPORT_REQUIRE requires dex"},
		{name: "unset, all required, fails", vars: map[string]string{RequireEnv: "all"}, failed: "no dex"},
		{name: "missing file fails", vars: map[string]string{DexBinEnv: exe + ".gone"}, failed: "cannot be run"},
		{name: "not executable fails", vars: map[string]string{DexBinEnv: plain}, failed: "not an executable"},
		{name: "directory fails", vars: map[string]string{DexBinEnv: t.TempDir()}, failed: "not an executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeTB{}
			got := dexBinary(f, env(tt.vars))
			if got != tt.want || !containsOrEmpty(f.skipped, tt.skipped) || !containsOrEmpty(f.failed, tt.failed) {
				t.Errorf("dexBinary = %q, skipped %q, failed %q; want %q, skipped ~%q, failed ~%q",
					got, f.skipped, f.failed, tt.want, tt.skipped, tt.failed)
			}
		})
	}
}

// containsOrEmpty reports whether got contains want, or both are empty.
func containsOrEmpty(got, want string) bool {
	if want == "" {
		return got == ""
	}
	return strings.Contains(got, want)
}

func TestDexEnv(t *testing.T) {
	got := dexEnv([]string{"PATH=/bin", "DEX_EXPAND_ENV=true", "HOME=/root", "DEX_CONFIG_DISALLOW_UNKNOWN_FIELDS=false"})
	want := []string{"PATH=/bin", "HOME=/root", "DEX_CONFIG_DISALLOW_UNKNOWN_FIELDS=true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dexEnv = %q, want %q", got, want)
	}
}

// ExampleDex shows a sign-in test against a private dex.
func ExampleDex() {
	testSignIn := func(t *testing.T) {
		d := Dex(t, DexConfig{}) // the default client and user
		client, user := d.Config.Clients[0], d.Config.Users[0]
		authURL := d.Issuer + "/auth?" + url.Values{
			"client_id": {client.ID}, "redirect_uri": {client.RedirectURIs[0]},
			"response_type": {"code"}, "scope": {"openid email"}, "state": {"xyz"},
		}.Encode()
		callback, err := d.Login(context.Background(), authURL, user.Email, user.Password)
		if err != nil {
			t.Fatal(err)
		}
		_ = callback.Query().Get("code") // for the client under test to redeem
	}
	_ = testSignIn
}

// fakeTB records what dexBinary does to its test instead of ending it.
type fakeTB struct {
	testing.TB // nil: anything not overridden below panics
	skipped    string
	failed     string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Skip(args ...any)  { f.skipped = fmt.Sprint(args...) }
func (f *fakeTB) Fatal(args ...any) { f.failed = fmt.Sprint(args...) }

// env reads variables from vars instead of the process environment.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}
