package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/oauth"
)

// beginWith runs Begin with the sign-in request's parameter sets and
// returns the authorization URL's query.
func beginWith(t *testing.T, f *oauth.Flow, sets ...url.Values) url.Values {
	t.Helper()
	authURL, err := f.Begin(context.Background(), httptest.NewRecorder(), "idp", sets...)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestSignInParams(t *testing.T) {
	fake := newFakeProvider(t)
	p := oidcProvider(fake.URL())
	p.Authorization.Params = url.Values{"prompt": {"consent"}, "access_type": {"offline"}}
	s := newSetup(t, &http.Client{}, testBase, p)

	// The allowed ones pass, the first set naming one wins, and they
	// replace the provider's configured value.
	q := beginWith(t, s.flow,
		url.Values{"prompt": {"login"}, "login_hint": {"ada@example.com"}},
		url.Values{"prompt": {"none"}, "ui_locales": {"fr-CA fr"}, "csrfToken": {"x"}, "callbackUrl": {"/"}})
	for k, want := range map[string]string{"prompt": "login", "login_hint": "ada@example.com", "ui_locales": "fr-CA fr", "access_type": "offline"} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	for _, k := range []string{"csrfToken", "callbackUrl"} {
		if q.Has(k) {
			t.Errorf("%s reached the authorization URL", k)
		}
	}

	// What decides the client, the code's destination, the grant and the
	// checks never comes from the request by default.
	hostile := url.Values{
		"client_id": {"evil"}, "redirect_uri": {"https://evil.example/cb"}, "response_type": {"token"},
		"scope": {"openid admin"}, "response_mode": {"fragment"}, "state": {"attacker"}, "nonce": {"attacker"},
		"code_challenge": {"attacker"}, "code_challenge_method": {"plain"}, "request_uri": {"https://evil.example/r"},
	}
	q = beginWith(t, s.flow, hostile)
	for k, want := range map[string]string{
		"client_id": fakeClientID, "redirect_uri": testBase + "/callback/idp", "response_type": "code",
		"scope": "openid profile email", "response_mode": "", "code_challenge_method": "S256", "request_uri": "",
	} {
		if q.Get(k) != want {
			t.Errorf("%s = %q from a hostile request, want %q", k, q.Get(k), want)
		}
	}
	for _, k := range []string{"state", "nonce", "code_challenge"} {
		if q.Get(k) == "attacker" {
			t.Errorf("the request set %s", k)
		}
	}

	// Bad values are refused with a typed error.
	for name, v := range map[string]string{"too long": strings.Repeat("a", 2049), "control character": "a\nb", "not UTF-8": "\xff"} {
		_, err := s.flow.Begin(context.Background(), httptest.NewRecorder(), "idp", url.Values{"login_hint": {v}})
		if !errors.Is(err, oauth.ErrInvalidParams) {
			t.Errorf("%s: %v, want ErrInvalidParams", name, err)
		}
	}
}

func TestAuthorizationParamsConfig(t *testing.T) {
	fake := newFakeProvider(t)
	p := oidcProvider(fake.URL())
	s := newSetup(t, &http.Client{}, testBase, p)

	// Config.AuthorizationParams adds names, the guarded ones included.
	f, err := oauth.New(oauth.Config{Auth: s.auth, HTTPClient: &http.Client{}, AuthorizationParams: []string{"scope", "resource"}})
	if err != nil {
		t.Fatal(err)
	}
	q := beginWith(t, f, url.Values{"scope": {"openid email offline_access"}, "resource": {"https://api.example.com"}, "client_id": {"evil"}})
	if q.Get("scope") != "openid email offline_access" || q.Get("resource") != "https://api.example.com" || q.Get("client_id") != fakeClientID {
		t.Errorf("query %v: want the configured extra names only", q)
	}

	// The checks can never be opened to the request.
	for _, n := range []string{"state", "nonce", "code_challenge", "code_challenge_method", "", "a=b"} {
		_, err := oauth.New(oauth.Config{Auth: s.auth, AuthorizationParams: []string{n}})
		if !errors.Is(err, oauth.ErrInvalidConfig) {
			t.Errorf("AuthorizationParams %q: %v, want ErrInvalidConfig", n, err)
		}
	}
}
