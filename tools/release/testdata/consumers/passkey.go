//go:build authport_consumer

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/passkey"
)

// check asks for registration options for a signed-in user (adding a
// passkey) and checks the relying party and the challenge to remember
// (the handler seals it into the challenge cookie); it needs no network.
func check(ctx context.Context) (string, error) {
	a, err := memoryAuth(auth.Config{
		Providers: []provider.Provider{provider.Passkey()},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
	})
	if err != nil {
		return "", err
	}
	pk, err := passkey.New(passkey.Config{Auth: a})
	if err != nil {
		return "", err
	}
	body, challenge, err := pk.Options(ctx, "passkey", url.Values{"action": {"register"}}, &core.User{ID: "0b8c2a54-3f1d-4e7a-9c35-2f5d0e6b1a77", Email: "ada@example.com"})
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(raw), `"action":"register"`) || !strings.Contains(string(raw), `"id":"app.example.com"`) {
		return "", fmt.Errorf("options %s lack the action or the relying party", raw)
	}
	if challenge == "" || pk.Timeout() != passkey.DefaultTimeout || len(pk.Script()) == 0 {
		return "", fmt.Errorf("no challenge (%q), timeout %v or no script", challenge, pk.Timeout())
	}
	return fmt.Sprintf("made registration options for %s with a challenge to keep for %v", "app.example.com", pk.Timeout()), nil
}
