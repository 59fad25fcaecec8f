package tokens_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/tokens"
)

func TestCodeFlowAndRotation(t *testing.T) {
	e := newEnv(t)
	i := e.issuer()
	r0 := e.signIn(i)
	if r0.TokenType != "Bearer" || r0.ExpiresIn != 600 || r0.Scope != "read" || r0.RefreshToken == "" {
		t.Fatalf("token response = %+v", r0)
	}
	c, err := i.Verify(e.ctx, r0.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != e.user.ID || c.ClientID != clientID || c.Issuer != base || c.Audience[0] != api || c.Scope != "read" || c.AuthTime == 0 {
		t.Errorf("claims = %+v", c)
	}
	// The family is a database session in the user's inventory, named
	// after the client.
	list, err := e.store.ListSessionsByUserID(e.ctx, e.user.ID)
	if err != nil || len(list) != 1 || auth.SessionID(list[0].SessionToken) != c.SessionID || !strings.HasPrefix(list[0].UserAgent, "Example CLI") {
		t.Fatalf("sessions = %+v, %v; want the family's, sid %s", list, err, c.SessionID)
	}
	if strings.Contains(r0.AccessToken+r0.RefreshToken, list[0].SessionToken) {
		t.Fatal("a token holds the session token")
	}
	e.clock.Add(time.Minute)
	r1, err := i.Refresh(e.ctx, r0.RefreshToken, clientID)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Minute)
	r2, err := i.Refresh(e.ctx, r1.RefreshToken, clientID)
	if err != nil {
		t.Fatal(err)
	}
	// r1 is rotated: presenting it again (a minute later, past the
	// retry window) ends the family.
	e.clock.Add(time.Minute)
	_, err = i.Refresh(e.ctx, r1.RefreshToken, clientID)
	wantCode(t, err, tokens.CodeInvalidGrant)
	if len(e.reuse) != 1 || e.reuse[0].Generation != 1 || e.reuse[0].SessionID != c.SessionID {
		t.Errorf("reuse events = %+v", e.reuse)
	}
	_, err = i.Refresh(e.ctx, r2.RefreshToken, clientID)
	wantCode(t, err, tokens.CodeInvalidGrant)
	if s := e.state(); s != "" {
		t.Errorf("sessions after reuse: %s; want none", s)
	}
}

func TestLostReplyRetry(t *testing.T) {
	e := newEnv(t)
	i := e.issuer()
	r0 := e.signIn(i)
	r1, err := i.Refresh(e.ctx, r0.RefreshToken, clientID)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(2 * time.Second) // the client's reply was lost; it retries
	again, err := i.Refresh(e.ctx, r0.RefreshToken, clientID)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	// The same successor: both refresh tokens rotate the same way.
	for _, rt := range []string{r1.RefreshToken, again.RefreshToken} {
		in, err := i.Introspect(e.ctx, rt)
		if err != nil || !in.Active {
			t.Fatalf("Introspect(successor) = %+v, %v; want active", in, err)
		}
	}
	// A second retry is reuse.
	_, err = i.Refresh(e.ctx, r0.RefreshToken, clientID)
	wantCode(t, err, tokens.CodeInvalidGrant)
	if _, err := i.Refresh(e.ctx, again.RefreshToken, clientID); err == nil {
		t.Fatal("the successor still works after reuse")
	}
}

func TestRetryFromAnotherInstanceWithinRetryAfterIsReuse(t *testing.T) {
	e := newEnv(t)
	a, b := e.issuer(), e.issuer()
	r0 := e.signIn(a)
	if _, err := a.Refresh(e.ctx, r0.RefreshToken, clientID); err != nil {
		t.Fatal(err)
	}
	_, err := b.Refresh(e.ctx, r0.RefreshToken, clientID)
	wantCode(t, err, tokens.CodeInvalidGrant)
	if e.state() != "" {
		t.Fatal("the family survived a concurrent reuse")
	}
}

// TestRefreshRace: 50 concurrent refreshes of one token on two instances:
// exactly one successor; the others are reuse, which ends the family.
func TestRefreshRace(t *testing.T) {
	e := newEnv(t)
	insts := []*tokens.Issuer{e.issuer(), e.issuer()}
	r0 := e.signIn(insts[0])
	var mu sync.Mutex
	var got []*tokens.TokenResponse
	coretest.Concurrently(50, func(n int) {
		r, err := insts[n%2].Refresh(e.ctx, r0.RefreshToken, clientID)
		if err != nil {
			var te *tokens.Error
			if !errors.As(err, &te) || te.Code != tokens.CodeInvalidGrant {
				t.Errorf("refresh %d: %v", n, err)
			}
			return
		}
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	})
	if len(got) != 1 {
		t.Fatalf("%d successors; want exactly 1", len(got))
	}
	if _, err := insts[1].Refresh(e.ctx, got[0].RefreshToken, clientID); err == nil {
		t.Error("the successor works after the concurrent reuse ended the family")
	}
}

func TestFamilyEndsWithSession(t *testing.T) {
	e := newEnv(t)
	i := e.issuer()
	r0 := e.signIn(i)
	c, _ := i.Verify(e.ctx, r0.AccessToken)
	in, _ := i.Introspect(e.ctx, r0.AccessToken)
	if !in.Active {
		t.Fatal("access token inactive")
	}
	// "Sign out everywhere" from a browser ends the family.
	a, _ := auth.New(auth.Config{Adapter: e.store, Secrets: []string{secret}, BaseURL: base, Now: e.clock.Now})
	if n, err := a.Sessions().RevokeAll(e.ctx, e.user.ID); err != nil || n != 1 {
		t.Fatalf("RevokeAll = %d, %v", n, err)
	}
	_, err := i.Refresh(e.ctx, r0.RefreshToken, clientID)
	wantCode(t, err, tokens.CodeInvalidGrant)
	if in, _ := i.Introspect(e.ctx, r0.AccessToken); in.Active {
		t.Error("introspection: the access token of an ended family is active")
	}
	// Verify is stateless: the token lives until exp.
	if _, err := i.Verify(e.ctx, r0.AccessToken); err != nil {
		t.Errorf("Verify after revocation: %v; want valid until exp (stateless)", err)
	}
	e.clock.Add(10*time.Minute + time.Second)
	if _, err := i.Verify(e.ctx, r0.AccessToken); err == nil {
		t.Error("Verify accepts an expired token")
	}
	if c.SessionID == "" {
		t.Error("no sid")
	}
}

func TestRevoke(t *testing.T) {
	e := newEnv(t)
	i := e.issuer()
	r0 := e.signIn(i)
	before := e.state()
	for _, tc := range []struct{ token, client, code string }{
		{r0.RefreshToken, "", tokens.CodeInvalidRequest},
		{r0.RefreshToken, "nobody", tokens.CodeInvalidClient},
		{"", clientID, tokens.CodeInvalidRequest},
	} {
		wantCode(t, i.Revoke(e.ctx, tc.token, tc.client), tc.code)
	}
	for _, tok := range []string{r0.AccessToken, "junk", strings.Repeat("A", 5000)} {
		if err := i.Revoke(e.ctx, tok, clientID); err != nil {
			t.Errorf("Revoke(%.10s…) = %v; want nil (RFC 7009)", tok, err)
		}
	}
	if e.state() != before {
		t.Fatal("a refused or no-op revocation changed the store")
	}
	if err := i.Revoke(e.ctx, r0.RefreshToken, clientID); err != nil {
		t.Fatal(err)
	}
	if e.state() != "" {
		t.Fatal("the family survived revocation")
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	e := newEnv(t)
	i := e.issuer(func(c *tokens.Config) {
		c.Clients = append(c.Clients, tokens.Client{ID: "other", RedirectURIs: []string{"https://other.example/cb"}})
	})
	other, err := auth.New(auth.Config{Adapter: e.store, Secrets: []string{"another-secret-0123456789abcdefghij"}, BaseURL: base, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	oi, err := tokens.New(tokens.Config{Auth: other, Keys: e.keys, Audience: []string{api}, Clients: []tokens.Client{{ID: clientID, RedirectURIs: []string{redirect}, Scopes: []string{"read"}}}})
	if err != nil {
		t.Fatal(err)
	}
	r0 := e.signIn(i)
	foreignRT := e.signIn(oi).RefreshToken
	req := authorizeRequest()
	code := e.code(i, req)
	before := e.state()
	ex := func(c, v, ru, id string) error {
		_, err := i.Exchange(e.ctx, tokens.ExchangeRequest{Code: c, CodeVerifier: v, RedirectURI: ru, ClientID: id})
		return err
	}
	wrongVerifier := strings.Repeat("a", 43)
	for name, tc := range map[string]struct {
		err  error
		code string
	}{
		"unknown refresh":      {func() error { _, err := i.Refresh(e.ctx, "bm90IGEgdG9rZW4", clientID); return err }(), tokens.CodeInvalidGrant},
		"malformed refresh":    {func() error { _, err := i.Refresh(e.ctx, "%%%", clientID); return err }(), tokens.CodeInvalidGrant},
		"foreign secret":       {func() error { _, err := i.Refresh(e.ctx, foreignRT, clientID); return err }(), tokens.CodeInvalidGrant},
		"another client's":     {func() error { _, err := i.Refresh(e.ctx, r0.RefreshToken, "other"); return err }(), tokens.CodeInvalidGrant},
		"unknown client":       {func() error { _, err := i.Refresh(e.ctx, r0.RefreshToken, "nobody"); return err }(), tokens.CodeInvalidClient},
		"no client":            {func() error { _, err := i.Refresh(e.ctx, r0.RefreshToken, ""); return err }(), tokens.CodeInvalidRequest},
		"access as refresh":    {func() error { _, err := i.Refresh(e.ctx, r0.AccessToken, clientID); return err }(), tokens.CodeInvalidGrant},
		"wrong verifier":       {ex(code, wrongVerifier, req.RedirectURI, clientID), tokens.CodeInvalidGrant},
		"bad verifier":         {ex(code, "short", req.RedirectURI, clientID), tokens.CodeInvalidRequest},
		"wrong redirect":       {ex(code, verifier, redirect, clientID), tokens.CodeInvalidGrant},
		"code of other client": {ex(code, verifier, req.RedirectURI, "other"), tokens.CodeInvalidGrant},
		"refresh as code":      {ex(r0.RefreshToken, verifier, req.RedirectURI, clientID), tokens.CodeInvalidGrant},
		"malformed code":       {ex("!!", verifier, req.RedirectURI, clientID), tokens.CodeInvalidGrant},
	} {
		var te *tokens.Error
		if !errors.As(tc.err, &te) || te.Code != tc.code || te.Description == "" {
			t.Errorf("%s: %v; want %s with a description", name, tc.err, tc.code)
		}
	}
	if e.state() != before || len(e.reuse) != 0 {
		t.Fatal("bad input changed the store")
	}
	// The code still works once, then is used up.
	if err := ex(code, verifier, req.RedirectURI, clientID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, ex(code, verifier, req.RedirectURI, clientID), tokens.CodeInvalidGrant)
	// An expired code.
	code2 := e.code(i, req)
	e.clock.Add(tokens.CodeTTL)
	wantCode(t, ex(code2, verifier, req.RedirectURI, clientID), tokens.CodeInvalidGrant)
}

func TestAuthorizeRequests(t *testing.T) {
	e := newEnv(t)
	i := e.issuer()
	good := authorizeRequest()
	// Not redirectable: unknown client, unregistered redirect URI.
	for _, f := range []func(*tokens.AuthorizeRequest){
		func(r *tokens.AuthorizeRequest) { r.ClientID = "nobody" },
		func(r *tokens.AuthorizeRequest) { r.ClientID = "" },
		func(r *tokens.AuthorizeRequest) { r.RedirectURI = "https://evil.example/cb" },
		func(r *tokens.AuthorizeRequest) { r.RedirectURI = "" },
		func(r *tokens.AuthorizeRequest) { r.RedirectURI = "http://127.0.0.1:99999/callback" },
		func(r *tokens.AuthorizeRequest) { r.RedirectURI = "http://127.0.0.1:8080/other" },
		func(r *tokens.AuthorizeRequest) { r.RedirectURI = "http://localhost:8080/callback" },
		func(r *tokens.AuthorizeRequest) { r.RedirectURI = "com.example.app:/cb/x" },
	} {
		req := good
		f(&req)
		target, err := i.Authorize(req, "", e.user.ID, time.Time{})
		var te *tokens.Error
		if target != "" || !errors.As(err, &te) {
			t.Errorf("Authorize(%+v) = %q, %v; want an error and no redirect", req, target, err)
		}
	}
	// Redirected with an error.
	for want, f := range map[string]func(*tokens.AuthorizeRequest){
		tokens.CodeUnsupportedResponseType: func(r *tokens.AuthorizeRequest) { r.ResponseType = "token" },
		tokens.CodeInvalidRequest:          func(r *tokens.AuthorizeRequest) { r.CodeChallengeMethod = "plain" },
		tokens.CodeInvalidScope:            func(r *tokens.AuthorizeRequest) { r.Scope = "admin" },
	} {
		req := good
		f(&req)
		target, err := i.Authorize(req, "", e.user.ID, time.Time{})
		u, _ := url.Parse(target)
		if err != nil || u.Query().Get("error") != want || u.Query().Get("state") != "xyz" || u.Query().Get("code") != "" {
			t.Errorf("Authorize(%+v) = %q, %v; want a redirect with error %s", req, target, err, want)
		}
	}
	if _, err := i.Authorize(good, "", "", time.Time{}); err != tokens.ErrSignInRequired {
		t.Errorf("Authorize without a user: %v", err)
	}
	if target, _ := i.Authorize(good, "state", e.user.ID, time.Time{}); !strings.Contains(target, "error=invalid_request") {
		t.Errorf("duplicate parameter: %s", target)
	}
	// A custom scheme and the loopback with another port.
	for _, ru := range []string{"com.example.app:/cb", "http://127.0.0.1:1/callback", "http://127.0.0.1/callback"} {
		req := good
		req.RedirectURI = ru
		if target, err := i.Authorize(req, "", e.user.ID, time.Time{}); err != nil || !strings.HasPrefix(target, ru+"?code=") {
			t.Errorf("Authorize(redirect %s) = %q, %v", ru, target, err)
		}
	}
}

func TestKeyRotation(t *testing.T) {
	e := newEnv(t)
	old := e.keys
	i := e.issuer()
	r0 := e.signIn(i)
	oldKey, _ := tokens.GenerateKey(tokens.ES256, "k2")
	// Rotate: a new current key, the old one kept (public only) for a
	// grace period.
	data, _ := old.MarshalPrivateJSON()
	if back, err := tokens.ParseKeySet(data); err != nil || back.PublicKey("k1") == nil {
		t.Fatalf("ParseKeySet(MarshalPrivateJSON) = %v, %v", back, err)
	}
	ks, err := tokens.NewKeySet(oldKey, tokens.Key{ID: "k1", Public: publicOf(t, old), NotAfter: e.clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	e.keys = ks
	j := e.issuer()
	if _, err := j.Verify(e.ctx, r0.AccessToken); err != nil {
		t.Fatalf("a token of the previous key: %v", err)
	}
	r1, err := j.Refresh(e.ctx, r0.RefreshToken, clientID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Verify(e.ctx, r1.AccessToken); err != nil {
		t.Fatal(err)
	}
	if _, err := i.Verify(e.ctx, r1.AccessToken); err == nil {
		t.Fatal("an issuer without the new key accepts its token")
	}
	jwks, _ := j.JWKS()
	if !strings.Contains(string(jwks), `"kid":"k1"`) || !strings.Contains(string(jwks), `"kid":"k2"`) || strings.Contains(string(jwks), `"d"`) {
		t.Errorf("JWKS = %s", jwks)
	}
	// Past its NotAfter the old key is neither published nor accepted.
	e.clock.Add(time.Hour)
	if jwks, _ := j.JWKS(); strings.Contains(string(jwks), `"kid":"k1"`) {
		t.Errorf("JWKS after NotAfter = %s", jwks)
	}
	if _, err := j.Verify(e.ctx, r0.AccessToken); err == nil {
		t.Error("a token of a key past its NotAfter verifies")
	}
}

func publicOf(t *testing.T, ks *tokens.KeySet) any {
	t.Helper()
	data, err := ks.PublicJSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.ParseKeySet(data); err == nil {
		t.Fatal("ParseKeySet accepted a set whose current key has no private part")
	}
	return ks.PublicKey("k1")
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestConfigErrors(t *testing.T) {
	e := newEnv(t)
	a, _ := auth.New(auth.Config{Adapter: e.store, Secrets: []string{secret}, BaseURL: base})
	ok := tokens.Config{Auth: a, Keys: e.keys, Audience: []string{api}, Clients: []tokens.Client{{ID: "c", RedirectURIs: []string{redirect}}}}
	for name, f := range map[string]func(*tokens.Config){
		"no auth":     func(c *tokens.Config) { c.Auth = nil },
		"no keys":     func(c *tokens.Config) { c.Keys = nil },
		"no audience": func(c *tokens.Config) { c.Audience = nil },
		"no clients":  func(c *tokens.Config) { c.Clients = nil },
		"http redirect": func(c *tokens.Config) {
			c.Clients = []tokens.Client{{ID: "c", RedirectURIs: []string{"http://example.com/cb"}}}
		},
		"localhost": func(c *tokens.Config) {
			c.Clients = []tokens.Client{{ID: "c", RedirectURIs: []string{"http://localhost/cb"}}}
		},
		"javascript": func(c *tokens.Config) {
			c.Clients = []tokens.Client{{ID: "c", RedirectURIs: []string{"javascript:alert(1)"}}}
		},
		"fragment": func(c *tokens.Config) {
			c.Clients = []tokens.Client{{ID: "c", RedirectURIs: []string{"https://a.example/cb#x"}}}
		},
		"dup client":     func(c *tokens.Config) { c.Clients = append(c.Clients, c.Clients[0]) },
		"short retry":    func(c *tokens.Config) { c.RetryAfter = time.Millisecond },
		"short secret":   func(c *tokens.Config) { c.IntrospectionSecret = "short" },
		"window < after": func(c *tokens.Config) { c.RetryAfter, c.RetryWindow = 5*time.Second, 2*time.Second },
	} {
		cfg := ok
		f(&cfg)
		if _, err := tokens.New(cfg); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("%s: %v; want ErrInvalidConfig", name, err)
		}
	}
	if _, err := tokens.New(ok); err != nil {
		t.Fatal(err)
	}
}

func TestIntrospection(t *testing.T) {
	e := newEnv(t)
	i := e.issuer()
	r0 := e.signIn(i)
	for _, tok := range []string{r0.AccessToken, r0.RefreshToken} {
		in, err := i.Introspect(e.ctx, tok)
		if err != nil || !in.Active || in.Subject != e.user.ID || in.ClientID != clientID || in.SessionID == "" {
			t.Errorf("Introspect = %+v, %v", in, err)
		}
	}
	for _, tok := range []string{"", "x.y.z", "junk"} {
		if in, err := i.Introspect(e.ctx, tok); err != nil || in.Active {
			t.Errorf("Introspect(%q) = %+v, %v; want inactive", tok, in, err)
		}
	}
	r1, _ := i.Refresh(e.ctx, r0.RefreshToken, clientID)
	if in, _ := i.Introspect(e.ctx, r0.RefreshToken); in.Active {
		t.Error("a rotated refresh token is active")
	}
	if in, _ := i.Introspect(e.ctx, r1.RefreshToken); !in.Active {
		t.Error("the successor is inactive")
	}
	for _, h := range []struct {
		v  []string
		ok bool
	}{
		{[]string{"Bearer " + secret + "-introspect"}, true},
		{[]string{"Basic " + b64("svc:"+secret+"-introspect")}, true},
		{[]string{"Basic " + b64("svc:wrong")}, false},
		{[]string{"Bearer wrong"}, false},
		{nil, false},
		{[]string{"Bearer " + secret + "-introspect", "Bearer x"}, false},
	} {
		if got := i.IntrospectionAllowed(h.v); got != h.ok {
			t.Errorf("IntrospectionAllowed(%q) = %v", h.v, got)
		}
	}
}

func TestRequire(t *testing.T) {
	e := newEnv(t)
	i := e.issuer()
	r0 := e.signIn(i)
	h := i.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := tokens.FromContext(r.Context())
		w.Write([]byte(c.Subject))
	}))
	hs := i.Require(http.NotFoundHandler(), "write")
	for _, tc := range []struct {
		h      http.Handler
		auth   []string
		status int
		www    string
	}{
		{h, []string{"Bearer " + r0.AccessToken}, 200, ""},
		{h, nil, 401, `Bearer realm="` + base + `"`},
		{h, []string{"Bearer junk"}, 401, `error="invalid_token"`},
		{h, []string{"Bearer " + r0.RefreshToken}, 401, `error="invalid_token"`},
		{h, []string{"Bearer a", "Bearer b"}, 400, `error="invalid_request"`},
		{hs, []string{"Bearer " + r0.AccessToken}, 403, `error="insufficient_scope"`},
	} {
		req := httptest.NewRequest("GET", "/api", nil)
		req.Header["Authorization"] = tc.auth
		rec := httptest.NewRecorder()
		tc.h.ServeHTTP(rec, req)
		if rec.Code != tc.status || !strings.Contains(rec.Header().Get("WWW-Authenticate"), tc.www) {
			t.Errorf("%v: %d %q; want %d with %q", tc.auth, rec.Code, rec.Header().Get("WWW-Authenticate"), tc.status, tc.www)
		}
		if tc.status == 200 && rec.Body.String() != e.user.ID {
			t.Errorf("body %q", rec.Body)
		}
	}
}
