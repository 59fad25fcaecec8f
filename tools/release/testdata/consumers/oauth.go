//go:build authport_consumer

package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/oauth"
)

// check starts a GitHub sign-in and checks the authorization URL and the
// check cookie; it needs no network.
func check(ctx context.Context) (string, error) {
	a, err := memoryAuth(auth.Config{Providers: []provider.Provider{providers.GitHub("client-id", "client-secret")}})
	if err != nil {
		return "", err
	}
	flow, err := oauth.New(oauth.Config{Auth: a})
	if err != nil {
		return "", err
	}
	w := httptest.NewRecorder()
	to, err := flow.Begin(ctx, w, "github")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(to)
	if err != nil {
		return "", err
	}
	q := u.Query()
	if q.Get("client_id") != "client-id" || q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != "https://app.example.com/auth/callback/github" {
		return "", fmt.Errorf("authorization URL %s lacks the client, the PKCE challenge or the redirect URI", to)
	}
	cookies := w.Result().Cookies()
	if len(cookies) == 0 {
		return "", fmt.Errorf("no check cookie was set")
	}
	return fmt.Sprintf("began a GitHub sign-in at %s with the %s cookie", u.Host, cookies[0].Name), nil
}
