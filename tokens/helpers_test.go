package tokens_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/tokens"
)

const (
	secret   = "tokens-test-secret-0123456789abcdef"
	base     = "https://id.example.com/auth"
	api      = "https://api.example.com"
	clientID = "example-cli"
	redirect = "http://127.0.0.1/callback"
	verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"
)

// env is one store with one or more Auth+Issuer instances on it, and a
// clock they share.
type env struct {
	t     testing.TB
	ctx   context.Context
	store *memory.Adapter
	clock *coretest.Clock
	keys  *tokens.KeySet
	user  core.User
	reuse []auth.RefreshTokenReusedEvent
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), clock: coretest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	e.store = memory.New(memory.WithClock(e.clock.Now))
	k, err := tokens.GenerateKey(tokens.EdDSA, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if e.keys, err = tokens.NewKeySet(k); err != nil {
		t.Fatal(err)
	}
	u, err := e.store.CreateUser(e.ctx, core.User{ID: "u1", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	e.user = *u
	return e
}

// issuer returns a new Auth+Issuer instance on the env's store.
func (e *env) issuer(change ...func(*tokens.Config)) *tokens.Issuer {
	e.t.Helper()
	a, err := auth.New(auth.Config{Adapter: e.store, Secrets: []string{secret}, BaseURL: base, Now: e.clock.Now,
		Session: auth.SessionOptions{MaxAge: 30 * 24 * time.Hour},
		Events: auth.Events{RefreshTokenReused: func(_ context.Context, ev auth.RefreshTokenReusedEvent) error {
			e.reuse = append(e.reuse, ev)
			return nil
		}}})
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := tokens.Config{Auth: a, Keys: e.keys, Audience: []string{api}, IntrospectionSecret: secret + "-introspect",
		Clients: []tokens.Client{{ID: clientID, Name: "Example CLI", RedirectURIs: []string{redirect, "com.example.app:/cb"}, Scopes: []string{"read", "write"}}}}
	for _, f := range change {
		f(&cfg)
	}
	i, err := tokens.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return i
}

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func authorizeRequest() tokens.AuthorizeRequest {
	return tokens.AuthorizeRequest{ResponseType: "code", ClientID: clientID, RedirectURI: "http://127.0.0.1:53124/callback",
		CodeChallenge: challenge(verifier), CodeChallengeMethod: "S256", State: "xyz", Scope: "read"}
}

// code runs Authorize for the env's user and returns the code.
func (e *env) code(i *tokens.Issuer, req tokens.AuthorizeRequest) string {
	e.t.Helper()
	target, err := i.Authorize(req, "", e.user.ID, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := url.Parse(target)
	if err != nil {
		e.t.Fatal(err)
	}
	q := u.Query()
	if q.Get("state") != req.State || q.Get("iss") != base || q.Get("code") == "" {
		e.t.Fatalf("Authorize redirect %s: want code, state and iss", target)
	}
	return q.Get("code")
}

// signIn runs the code flow and returns the first tokens.
func (e *env) signIn(i *tokens.Issuer) *tokens.TokenResponse {
	e.t.Helper()
	req := authorizeRequest()
	resp, err := i.Exchange(e.ctx, tokens.ExchangeRequest{Code: e.code(i, req), CodeVerifier: verifier, RedirectURI: req.RedirectURI, ClientID: clientID})
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// state is the store's sessions and verification tokens, to prove that a
// refusal changed nothing.
func (e *env) state() string {
	e.t.Helper()
	list, err := e.store.ListSessionsByUserID(e.ctx, e.user.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	s := ""
	for _, se := range list {
		s += se.SessionToken + "@" + se.Expires.String() + ";"
	}
	return s
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var te *tokens.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("error = %v; want %s", err, code)
	}
}
