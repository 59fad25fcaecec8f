package tokeninterop

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/tokens"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

const (
	secret   = "tokeninterop-secret-0123456789abcdef"
	audience = "https://api.example.com"
	userID   = "user-1"
)

// site is the handler on a real HTTP server whose key set a test
// rotates: each rotation builds a new Issuer and handler on the same Auth
// and store, as a deployment with the new keys would.
type site struct {
	t    *testing.T
	srv  *httptest.Server
	a    *auth.Auth
	mu   sync.RWMutex
	h    http.Handler
	iss  *tokens.Issuer
	base string
}

func newSite(t *testing.T) *site {
	s := &site{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.RLock()
		h := s.h
		s.mu.RUnlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	s.base = s.srv.URL + "/auth"
	store := memory.New()
	if _, err := store.CreateUser(context.Background(), core.User{ID: userID, Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	var err error
	s.a, err = auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: s.base, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// deploy serves the key set.
func (s *site) deploy(keys *tokens.KeySet) {
	s.t.Helper()
	iss, err := tokens.New(tokens.Config{Auth: s.a, Keys: keys, Audience: []string{audience},
		Clients: []tokens.Client{{ID: "cli", RedirectURIs: []string{"http://127.0.0.1/cb"}}}})
	if err != nil {
		s.t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: s.a, Tokens: iss, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		s.t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	s.mu.Lock()
	s.h, s.iss = mux, iss
	s.mu.Unlock()
}

// issue returns a new access token signed by the current key.
func (s *site) issue() string {
	s.t.Helper()
	r, err := s.iss.Issue(context.Background(), userID, "cli", tokens.IssueOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return r.AccessToken
}

// jwxVerify verifies token with jwx against the keys fetched from the
// JWKS route: signature, typ at+jwt, issuer, audience, exp.
func (s *site) jwxVerify(token string) error {
	set, err := jwk.Fetch(context.Background(), s.base+"/jwks")
	if err != nil {
		return err
	}
	msg, err := jws.Parse([]byte(token))
	if err != nil {
		return err
	}
	if typ, _ := msg.Signatures()[0].ProtectedHeaders().Type(); typ != "at+jwt" {
		return errors.New("typ " + typ)
	}
	tok, err := jwt.Parse([]byte(token), jwt.WithKeySet(set), jwt.WithValidate(true), jwt.WithIssuer(s.base), jwt.WithAudience(audience))
	if err != nil {
		return err
	}
	if sub, _ := tok.Subject(); sub != userID {
		return errors.New("sub " + sub)
	}
	return nil
}

// joseVerify verifies the tokens with npm's jose (createRemoteJWKSet on
// the JWKS route) and reports, per token, "" or jose's error code. It
// skips when node or jose is missing, unless AUTHPORT_REQUIRE names npm.
func (s *site) joseVerify(tokens ...string) []string {
	s.t.Helper()
	dir, _ := filepath.Abs("npm")
	if _, err := exec.LookPath("node"); err != nil {
		skipOrFail(s.t, "node is not installed: install Node.js 20+, then run npm ci in tests/tokeninterop/npm")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "jose")); err != nil {
		skipOrFail(s.t, "jose is not installed: run npm ci in tests/tokeninterop/npm")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"verify.mjs", s.base + "/jwks", s.base, audience}, tokens...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("node verify.mjs: %v\n%s", err, out)
	}
	var results []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			OK    bool   `json:"ok"`
			Sub   string `json:"sub"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			s.t.Fatalf("verify.mjs printed %q", line)
		}
		switch {
		case r.OK && r.Sub == userID:
			results = append(results, "")
		case r.OK:
			results = append(results, "wrong sub "+r.Sub)
		default:
			results = append(results, r.Error)
		}
	}
	if len(results) != len(tokens) {
		s.t.Fatalf("verify.mjs answered %d lines for %d tokens: %s", len(results), len(tokens), out)
	}
	return results
}

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	for r := range strings.SplitSeq(os.Getenv("AUTHPORT_REQUIRE"), ",") {
		if r = strings.TrimSpace(r); strings.EqualFold(r, "all") || strings.EqualFold(r, "npm") {
			t.Fatal(why)
		}
	}
	t.Skip(why)
}

func newKey(t *testing.T, alg, id string) tokens.Key {
	t.Helper()
	k, err := tokens.GenerateKey(alg, id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keySet(t *testing.T, current tokens.Key, previous ...tokens.Key) *tokens.KeySet {
	t.Helper()
	ks, err := tokens.NewKeySet(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestIndependentVerifiersAcrossRotation: tokens of an EdDSA key, then
// after a rotation to an ES256 key (the EdDSA key kept for its grace
// period) tokens of both, then after the EdDSA key's removal only the
// ES256 key's, verified by jwx and jose from the JWKS route each time.
func TestIndependentVerifiersAcrossRotation(t *testing.T) {
	s := newSite(t)
	ed := newKey(t, tokens.EdDSA, "2026-01-ed")
	s.deploy(keySet(t, ed))
	t1 := s.issue()

	es := newKey(t, tokens.ES256, "2026-02-es")
	edPublic := tokens.Key{ID: ed.ID, Public: ed.Signer.Public()}
	s.deploy(keySet(t, es, edPublic)) // rotation: the EdDSA key verifies only
	t2 := s.issue()
	for name, tok := range map[string]string{"EdDSA token in its grace period": t1, "ES256 token": t2} {
		if err := s.jwxVerify(tok); err != nil {
			t.Errorf("jwx: %s: %v", name, err)
		}
	}
	if got := s.joseVerify(t1, t2); got[0] != "" || got[1] != "" {
		t.Errorf("jose: %q; want both verified", got)
	}

	s.deploy(keySet(t, es)) // the grace period is over
	if err := s.jwxVerify(t1); err == nil {
		t.Error("jwx verifies a token of the removed key")
	}
	if err := s.jwxVerify(t2); err != nil {
		t.Errorf("jwx: the current key's token: %v", err)
	}
	if got := s.joseVerify(t1, t2); got[0] != "ERR_JWKS_NO_MATCHING_KEY" || got[1] != "" {
		t.Errorf("jose after the removal: %q; want ERR_JWKS_NO_MATCHING_KEY for the removed key's token, the other verified", got)
	}
	// A tampered token fails both.
	bad := t2[:len(t2)-4] + "AAAA"
	if err := s.jwxVerify(bad); err == nil {
		t.Error("jwx verifies a tampered token")
	}
	if got := s.joseVerify(bad); got[0] == "" {
		t.Error("jose verifies a tampered token")
	}
}
