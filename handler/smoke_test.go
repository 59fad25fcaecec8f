package handler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

func TestSmoke(t *testing.T) {
	creds := provider.Credentials(func(context.Context, provider.AuthorizeRequest) (*provider.User, error) { return nil, nil })
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{creds}, Secrets: []string{"secret"},
		Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, BaseURL: "http://localhost/auth"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, Secrets: []string{"secret"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/auth/providers", "/auth/csrf", "/auth/signin", "/auth/session", "/auth/signout", "/auth/error?error=Verification", "/auth/verify-request"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if rec.Code >= 500 && p != "/auth/error?error=Verification" {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
		t.Logf("%s: %d %s", p, rec.Code, rec.Body.String()[:min(200, rec.Body.Len())])
	}
	_ = http.StatusOK
}
