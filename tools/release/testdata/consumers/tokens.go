//go:build authport_consumer

package main

import (
	"context"
	"fmt"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/tokens"
)

// check issues a token family for a user on the memory adapter, verifies
// its access token and rotates its refresh token; it needs no network.
func check(ctx context.Context) (string, error) {
	store := memory.New()
	if _, err := store.CreateUser(ctx, core.User{ID: "user-1", Email: "ada@example.com"}); err != nil {
		return "", err
	}
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{"consumer-check-secret-0123456789abcdef"}, BaseURL: "https://app.example.com/auth"})
	if err != nil {
		return "", err
	}
	key, err := tokens.GenerateKey(tokens.EdDSA, "consumer")
	if err != nil {
		return "", err
	}
	keys, err := tokens.NewKeySet(key)
	if err != nil {
		return "", err
	}
	iss, err := tokens.New(tokens.Config{Auth: a, Keys: keys, Audience: []string{"https://api.example.com"},
		Clients: []tokens.Client{{ID: "cli", RedirectURIs: []string{"http://127.0.0.1/callback"}}}})
	if err != nil {
		return "", err
	}
	resp, err := iss.Issue(ctx, "user-1", "cli", tokens.IssueOptions{})
	if err != nil {
		return "", err
	}
	claims, err := iss.Verify(ctx, resp.AccessToken)
	if err != nil {
		return "", err
	}
	if _, err := iss.Refresh(ctx, resp.RefreshToken, "cli"); err != nil {
		return "", err
	}
	return fmt.Sprintf("issued, verified and rotated the tokens of %s (sid %s)", claims.Subject, claims.SessionID), nil
}
