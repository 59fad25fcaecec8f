//go:build authport_consumer

package main

import (
	"context"
	"fmt"
	"net/url"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/oauth"
)

// check starts a GitHub sign-in and checks the authorization URL and the
// check value to keep; it needs no network.
func check(ctx context.Context) (string, error) {
	a, err := memoryAuth(auth.Config{Providers: []provider.Provider{providers.GitHub("client-id", "client-secret")}})
	if err != nil {
		return "", err
	}
	flow, err := oauth.New(oauth.Config{Auth: a})
	if err != nil {
		return "", err
	}
	begun, err := flow.Begin(ctx, "github")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(begun.URL)
	if err != nil {
		return "", err
	}
	q := u.Query()
	if q.Get("client_id") != "client-id" || q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != "https://app.example.com/auth/callback/github" {
		return "", fmt.Errorf("authorization URL %s lacks the client, the PKCE challenge or the redirect URI", begun.URL)
	}
	if begun.Checks.CodeVerifier == "" {
		return "", fmt.Errorf("no PKCE code verifier to keep")
	}
	return fmt.Sprintf("began a GitHub sign-in at %s with a PKCE code verifier to keep", u.Host), nil
}
