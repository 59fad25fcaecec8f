package handlersec

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/tokens"
)

// The token families of module tokens through HTTP (POST /auth/token) on
// each real store: the race (50 concurrent refreshes on two instances,
// exactly one successor), reuse ending the family, and the lost reply's
// retry getting the same successor once. The conformance suite's
// tokenFamilies rules prove the same of core/auth's rotation on every
// backend; these add the handler, the sealing and the token responses.

const tokensBase = "http://auth.test/auth"

// tokenInstance is one application instance: an Auth, its tokens.Issuer
// and its handler, on the shared store.
type tokenInstance struct {
	a   *auth.Auth
	iss *tokens.Issuer
	h   *handler.Handler
}

// tokenFamilies is two instances on one store, a stored user, and the
// clock they share.
type tokenFamilies struct {
	t     *testing.T
	store core.Adapter
	clock *coretest.Clock
	user  string
	insts [2]tokenInstance
}

func newTokenFamilies(t *testing.T, store core.Adapter) *tokenFamilies {
	t.Helper()
	f := &tokenFamilies{t: t, store: store, clock: coretest.NewClock(time.Now().UTC().Truncate(time.Second)), user: "7d0c2b4e-3f1a-4e5b-9c8d-1a2b3c4d5e6f"}
	if _, err := store.(core.UserCreator).CreateUser(context.Background(), core.User{ID: f.user, Email: "tokens@example.com"}); err != nil {
		t.Fatal(err)
	}
	key, err := tokens.GenerateKey(tokens.EdDSA, "k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := tokens.NewKeySet(key)
	for n := range f.insts {
		a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: tokensBase, Now: f.clock.Now, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		iss, err := tokens.New(tokens.Config{Auth: a, Keys: keys, Audience: []string{"https://api.test"}, Logger: discard(),
			Clients: []tokens.Client{{ID: "cli", Name: "Test CLI", RedirectURIs: []string{"http://127.0.0.1/cb"}}}})
		if err != nil {
			t.Fatal(err)
		}
		h, err := handler.New(handler.Config{Auth: a, Tokens: iss, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		f.insts[n] = tokenInstance{a, iss, h}
	}
	return f
}

// first starts a family through instance 0's Go API and returns its
// refresh token and session token.
func (f *tokenFamilies) first(iss *tokens.Issuer) string {
	f.t.Helper()
	r, err := iss.Issue(context.Background(), f.user, "cli", tokens.IssueOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return r.RefreshToken
}

// refresh posts grant_type=refresh_token to instance n's handler and
// returns the status and the decoded body.
func (f *tokenFamilies) refresh(n int, rt string) (int, map[string]any) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {"cli"}}
	req := httptest.NewRequest("POST", tokensBase+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	f.insts[n].h.ServeHTTP(rec, req)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		f.t.Errorf("POST /token: %d %s", rec.Code, rec.Body)
	}
	return rec.Code, body
}

// families returns how many of the user's sessions exist, or -1 when the
// store cannot list them (listSessionsByUserId not implemented yet).
func (f *tokenFamilies) families() int {
	f.t.Helper()
	if !core.Probe(f.store).HasExtension(core.ExtensionListSessionsByUserID) {
		return -1
	}
	ids, err := f.insts[0].a.Edge().UserSessionIDs(context.Background(), f.user)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(ids)
}

func (f *tokenFamilies) wantRefused(n int, rt, what string) {
	f.t.Helper()
	if status, body := f.refresh(n, rt); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		f.t.Errorf("%s: %d %v; want 400 invalid_grant", what, status, body)
	}
}

func (f *tokenFamilies) issuer(n int) *tokens.Issuer { return f.insts[n].iss }

// TestTokenRefreshRaceOnStores: 50 concurrent refreshes of one refresh
// token on two instances give exactly one successor; the 49 others are
// reuse, which ends the family, so the successor is refused too.
func TestTokenRefreshRaceOnStores(t *testing.T) {
	forTokenStores(t, func(t *testing.T, f *tokenFamilies) {
		r0 := f.first(f.issuer(0))
		var mu sync.Mutex
		var successors []string
		coretest.Concurrently(50, func(i int) {
			status, body := f.refresh(i%2, r0)
			switch {
			case status == http.StatusOK:
				mu.Lock()
				successors = append(successors, body["refresh_token"].(string))
				mu.Unlock()
			case status != http.StatusBadRequest || body["error"] != "invalid_grant":
				t.Errorf("refresh %d: %d %v; want 200 or 400 invalid_grant", i, status, body)
			}
		})
		if len(successors) != 1 {
			t.Fatalf("%d successors; want exactly 1", len(successors))
		}
		if n := f.families(); n > 0 {
			t.Errorf("%d sessions after the concurrent reuse; want the family ended", n)
		}
		f.wantRefused(1, successors[0], "the successor after the family ended")
	})
}

// TestTokenReuseEndsFamilyOnStores: a rotated refresh token presented
// again (after the retry window) ends the family: its session is gone and
// the current successor no longer works.
func TestTokenReuseEndsFamilyOnStores(t *testing.T) {
	forTokenStores(t, func(t *testing.T, f *tokenFamilies) {
		r0 := f.first(f.issuer(0))
		status, b1 := f.refresh(0, r0)
		if status != http.StatusOK {
			t.Fatalf("refresh r0: %d %v", status, b1)
		}
		f.clock.Add(time.Minute)
		status, b2 := f.refresh(1, b1["refresh_token"].(string))
		if status != http.StatusOK {
			t.Fatalf("refresh r1 on the other instance: %d %v", status, b2)
		}
		if n := f.families(); n == 0 || n > 1 {
			t.Fatalf("%d sessions; want the family's one", n)
		}
		f.clock.Add(time.Minute)
		f.wantRefused(0, b1["refresh_token"].(string), "r1 presented again")
		if n := f.families(); n > 0 {
			t.Errorf("%d sessions after reuse; want the family ended", n)
		}
		f.wantRefused(1, b2["refresh_token"].(string), "r2 after the family ended")
	})
}

// TestTokenLostReplyRetryOnStores: a retry of a rotated refresh token
// (its reply was lost), a few seconds later from the same client, gets
// the same successor once; a second retry is reuse.
func TestTokenLostReplyRetryOnStores(t *testing.T) {
	forTokenStores(t, func(t *testing.T, f *tokenFamilies) {
		r0 := f.first(f.issuer(0))
		status, lost := f.refresh(0, r0)
		if status != http.StatusOK {
			t.Fatalf("refresh r0: %d %v", status, lost)
		}
		f.clock.Add(3 * time.Second)
		status, retry := f.refresh(1, r0)
		if status != http.StatusOK {
			t.Fatalf("the retry: %d %v; want the successor", status, retry)
		}
		// The same successor: generation 1 of the family, current.
		for _, rt := range []any{lost["refresh_token"], retry["refresh_token"]} {
			in, err := f.issuer(1).Introspect(context.Background(), rt.(string))
			if err != nil || !in.Active {
				t.Fatalf("Introspect(successor) = %+v, %v; want active", in, err)
			}
		}
		f.clock.Add(time.Second)
		f.wantRefused(0, r0, "a second retry")
		if n := f.families(); n > 0 {
			t.Errorf("%d sessions after the second retry; want the family ended", n)
		}
	})
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// forTokenStores runs the test on every store, fresh for each.
func forTokenStores(t *testing.T, run func(t *testing.T, f *tokenFamilies)) {
	for _, st := range testStores {
		t.Run(st.name, func(t *testing.T) { run(t, newTokenFamilies(t, st.open(t))) })
	}
}

// TestTokenRoutesOnStores walks every token route through HTTP on each
// store, with database and JWT sessions: the authorization request signed
// in through OAuth, the code exchange (the family listed among the user's
// sessions), the JWKS, a refresh, introspection (refused without its
// secret), revocation, and the refresh and introspection refused after it.
func TestTokenRoutesOnStores(t *testing.T) {
	const client, redirect, verifier, secretIntro = "example-ios", "com.example.app:/oauth", "a-pkce-code-verifier-of-43-characters-or-more-0123", "introspection-secret-0123456789abcdef"
	forStores(t, func(t *testing.T, store core.Adapter, strategy auth.Strategy) {
		app := newHookApp(t, store, strategy, func(*auth.Config) {})
		key, err := tokens.GenerateKey(tokens.ES256, "2026-11")
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := tokens.NewKeySet(key)
		iss, err := tokens.New(tokens.Config{Auth: app.a, Keys: keys, Audience: []string{"https://api.example.com"}, IntrospectionSecret: secretIntro,
			Clients: []tokens.Client{{ID: client, Name: "Example for iOS", RedirectURIs: []string{redirect}}}, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		app.remount(handler.Config{Tokens: iss, Logger: discard()})
		app.signInOAuth(map[string]any{"id": "gh-ada", "email": "ada@example.com"})
		sum := sha256.Sum256([]byte(verifier))
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"s1"},
			"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
		res := app.do("GET", "/auth/authorize?"+q.Encode(), nil)
		back, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), redirect+"?") || back.Query().Get("state") != "s1" {
			t.Fatalf("GET /auth/authorize signed in: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		post := func(path string, form url.Values, header ...string) (int, map[string]any) {
			t.Helper()
			req, _ := http.NewRequest("POST", app.srv.URL+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			r, err := http.DefaultClient.Do(req) // a native client: no cookies
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := decodeJSON(r, &m); err != nil {
				t.Fatalf("POST %s: %d, %v", path, r.StatusCode, err)
			}
			return r.StatusCode, m
		}
		status, tok := post("/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
			"code_verifier": {verifier}, "redirect_uri": {redirect}, "client_id": {client}})
		if status != http.StatusOK || tok["token_type"] != "Bearer" {
			t.Fatalf("the code exchange: %d %v", status, tok)
		}
		u, err := app.checked.GetUserByEmail(t.Context(), "ada@example.com")
		if err != nil || u == nil {
			t.Fatal(u, err)
		}
		if ss, err := app.checked.ListSessionsByUserID(t.Context(), u.ID); err != nil || !slices.ContainsFunc(ss, func(s core.Session) bool {
			return !core.KeepsSessionMetadata(store) || strings.HasPrefix(s.UserAgent, "Example for iOS")
		}) || len(ss) != map[auth.Strategy]int{auth.StrategyDatabase: 2, auth.StrategyJWT: 1}[strategy] {
			t.Errorf("the user's sessions after the exchange = %+v, %v; want the family's among them, named after the app", ss, err)
		}
		if res := app.do("GET", "/auth/jwks", nil); !strings.Contains(res.body, `"kid":"2026-11"`) || strings.Contains(res.body, `"d":`) {
			t.Errorf("GET /auth/jwks: %s", res.body)
		}
		status, next := post("/auth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {client}})
		if status != http.StatusOK || next["refresh_token"] == tok["refresh_token"] {
			t.Fatalf("the refresh: %d %v", status, next)
		}
		introspect := url.Values{"token": {next["access_token"].(string)}}
		if status, _ := post("/auth/introspect", introspect); status != http.StatusUnauthorized {
			t.Errorf("introspection without its secret: %d; want 401", status)
		}
		if _, in := post("/auth/introspect", introspect, "Authorization", "Bearer "+secretIntro); in["active"] != true {
			t.Errorf("introspection of the access token: %v; want active", in)
		}
		if status, _ := post("/auth/revoke", url.Values{"token": {next["refresh_token"].(string)}, "client_id": {client}}); status != http.StatusOK {
			t.Errorf("revocation: %d", status)
		}
		if status, m := post("/auth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}, "client_id": {client}}); status != http.StatusBadRequest || m["error"] != "invalid_grant" {
			t.Errorf("a refresh after revocation: %d %v; want 400 invalid_grant", status, m)
		}
		if _, in := post("/auth/introspect", introspect, "Authorization", "Bearer "+secretIntro); in["active"] != false {
			t.Errorf("introspection after revocation: %v; want inactive", in)
		}
	})
}
