//go:build authport_consumer

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
)

// check serves GET /auth/csrf and GET /auth/providers from the handler; it
// needs no network.
func check(ctx context.Context) (string, error) {
	a, err := memoryAuth(auth.Config{Providers: []provider.Provider{providers.GitHub("client-id", "client-secret")}})
	if err != nil {
		return "", err
	}
	h, err := handler.New(handler.Config{Auth: a})
	if err != nil {
		return "", err
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequestWithContext(ctx, "GET", "https://app.example.com/auth/csrf", nil))
	var body struct{ CSRFToken string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || len(body.CSRFToken) != 64 {
		return "", fmt.Errorf("GET /auth/csrf answered %d %s", w.Code, w.Body)
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != "__Host-authjs.csrf-token" {
		return "", fmt.Errorf("GET /auth/csrf set %v, want the __Host-authjs.csrf-token cookie", cookies)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequestWithContext(ctx, "GET", "https://app.example.com/auth/providers", nil))
	if !strings.Contains(w.Body.String(), `"signinUrl":"https://app.example.com/auth/signin/github"`) {
		return "", fmt.Errorf("GET /auth/providers answered %d %s", w.Code, w.Body)
	}
	return fmt.Sprintf("served a CSRF token in the %s cookie and the GitHub provider", cookies[0].Name), nil
}
