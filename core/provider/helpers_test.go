package provider

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core"
)

type anyProfile = map[string]any

func oauthOK() *OAuth2Config[anyProfile] {
	return &OAuth2Config[anyProfile]{
		ID:            "acme",
		Name:          "Acme",
		Authorization: Endpoint{URL: "https://acme.test/authorize"},
		Token:         TokenEndpoint{URL: "https://acme.test/token"},
		Userinfo:      UserinfoEndpoint[anyProfile]{URL: "https://acme.test/userinfo"},
		ClientID:      "client",
		ClientSecret:  "secret",
	}
}

func oidcOK() *OIDCConfig[anyProfile] {
	return &OIDCConfig[anyProfile]{OAuth2Config: OAuth2Config[anyProfile]{ID: "idp", Name: "IdP", Issuer: "https://idp.test", ClientID: "client"}}
}

func sendNothing(context.Context, VerificationRequest) error { return nil }

func emailOK() *EmailConfig { return Email("Acme <no-reply@acme.test>", sendNothing) }

func authorizeNobody(context.Context, AuthorizeRequest) (*User, error) { return nil, nil }

func credentialsOK() *CredentialsConfig { return Credentials(authorizeNobody) }

// problems returns the problems of err, failing the test when err is not a
// *ValidationError matching core.ErrInvalidConfig.
func problems(t *testing.T, err error) []Problem {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	if !errors.Is(err, core.ErrInvalidConfig) {
		t.Fatalf("error %v does not match core.ErrInvalidConfig", err)
	}
	return ve.Problems
}

type wantProblem struct {
	index int
	field string
	text  string // a substring of the message
}

func matchProblems(t *testing.T, got []Problem, want []wantProblem) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems %v, want %d %v", len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if g.Index != w.index || g.Field != w.field || !strings.Contains(g.Message, w.text) {
			t.Errorf("problem %d = %+v, want index %d field %q message containing %q", i, g, w.index, w.field, w.text)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// githubLike is an OAuth 2.0 provider with GitHub's endpoints and scope.
func githubLike() *OAuth2Config[anyProfile] {
	return &OAuth2Config[anyProfile]{
		ID:            "github",
		Name:          "GitHub",
		Authorization: Endpoint{URL: "https://github.com/login/oauth/authorize", Params: url.Values{"scope": {"read:user user:email"}}},
		Token:         TokenEndpoint{URL: "https://github.com/login/oauth/access_token"},
		Userinfo:      UserinfoEndpoint[anyProfile]{URL: "https://api.github.com/user"},
		ClientID:      "a",
	}
}
