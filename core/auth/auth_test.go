package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// These tests need no stored data: they check configuration, the errors
// for missing and failing adapter methods, and the cookie helpers. The
// flows that read and write data run in the conformance suite against
// every adapter (conformance/rules_flow.go).

// sessionsOnly has the session methods and nothing else; every call fails.
type sessionsOnly struct{}

var errDown = errors.New("database is down")

func (sessionsOnly) GetSessionAndUser(context.Context, string) (*core.SessionAndUser, error) {
	return nil, errDown
}
func (sessionsOnly) DeleteSession(context.Context, string) (*core.Session, error) {
	return nil, errDown
}

func send(context.Context, provider.VerificationRequest) error { return nil }

func TestNewNamesEveryMissingMethod(t *testing.T) {
	_, err := auth.New(auth.Config{
		Adapter:   sessionsOnly{},
		Secrets:   []string{"s"},
		Providers: []provider.Provider{provider.Email("a@example.com", send), provider.Passkey()},
	})
	var mm *core.MissingMethodsError
	if !errors.Is(err, core.ErrMissingAdapterMethod) || !errors.As(err, &mm) {
		t.Fatalf("New: %v, want a MissingMethodsError", err)
	}
	got := map[core.Method]string{}
	for _, m := range mm.Missing {
		got[m.Method] = m.NeededBy
	}
	want := map[core.Method]string{
		// database sessions, in its order
		core.MethodCreateUser: "database sessions", core.MethodGetUser: "database sessions",
		core.MethodGetUserByEmail: "database sessions", core.MethodGetUserByAccount: "database sessions",
		core.MethodUpdateUser: "database sessions", core.MethodLinkAccount: "database sessions",
		core.MethodCreateSession: "database sessions", core.MethodUpdateSession: "database sessions",
		// e-mail
		core.MethodCreateVerificationToken: "e-mail sign-in", core.MethodUseVerificationToken: "e-mail sign-in",
		// WebAuthn
		core.MethodGetAccount: "WebAuthn sign-in", core.MethodGetAuthenticator: "WebAuthn sign-in",
		core.MethodCreateAuthenticator: "WebAuthn sign-in", core.MethodListAuthenticatorsByUserID: "WebAuthn sign-in",
		core.MethodUpdateAuthenticatorCounter: "WebAuthn sign-in",
	}
	if len(got) != len(want) {
		t.Errorf("missing %v, want %v", got, want)
	}
	for m, by := range want {
		if got[m] != by {
			t.Errorf("%s: needed by %q, want %q", m, got[m], by)
		}
	}
	if !strings.Contains(err.Error(), "auth_test.sessionsOnly does not implement createUser (needed by database sessions)") {
		t.Errorf("message: %v", err)
	}
}

func TestNewNeedsOnlyWhatTheConfigurationUses(t *testing.T) {
	// JWT sessions and no e-mail or WebAuthn provider: nothing is required.
	if _, err := auth.New(auth.Config{Adapter: sessionsOnly{}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}}); err != nil {
		t.Errorf("New with JWT sessions: %v", err)
	}
	// With an e-mail provider, only the e-mail methods.
	_, err := auth.New(auth.Config{Adapter: sessionsOnly{}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{provider.Email("a@example.com", send)}})
	var mm *core.MissingMethodsError
	if !errors.As(err, &mm) || len(mm.Missing) != 3 {
		t.Errorf("New with an e-mail provider: %v, want the three e-mail methods", err)
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	for name, cfg := range map[string]auth.Config{
		"no adapter":       {Secrets: []string{"s"}},
		"no secret":        {Adapter: sessionsOnly{}},
		"empty secret":     {Adapter: sessionsOnly{}, Secrets: []string{""}},
		"unknown strategy": {Adapter: sessionsOnly{}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: "cookie"}},
		"negative maxAge":  {Adapter: sessionsOnly{}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT, MaxAge: -time.Hour}},
		"invalid provider": {Adapter: sessionsOnly{}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, Providers: []provider.Provider{provider.Email("a@example.com", nil)}},
		"duplicate id":     {Adapter: sessionsOnly{}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, Providers: []provider.Provider{provider.Passkey(), provider.Passkey()}},
	} {
		if _, err := auth.New(cfg); !errors.Is(err, auth.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
}

func newJWT(t *testing.T, adapter any) *auth.Auth {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: adapter, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{provider.GitHub("id", "secret")}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestMissingMethodAtRunTimeIsAnError(t *testing.T) {
	a := newJWT(t, sessionsOnly{})
	_, err := a.CreateSession(context.Background(), "u")
	if !errors.Is(err, core.ErrMissingAdapterMethod) || !strings.Contains(err.Error(), "createSession") {
		t.Errorf("CreateSession without createSession: %v", err)
	}
	_, err = a.SignInWithOAuth(context.Background(), auth.OAuthCallback{ProviderID: "github", Profile: provider.User{ID: "1", Email: "a@example.com"}})
	if !errors.Is(err, core.ErrMissingAdapterMethod) || !strings.Contains(err.Error(), "getUserByAccount (needed by OAuth sign-in)") {
		t.Errorf("OAuth sign-in without getUserByAccount: %v", err)
	}
}

func TestAdapterFailureNamesTheMethod(t *testing.T) {
	a := newJWT(t, sessionsOnly{})
	_, err := a.Session(context.Background(), "token")
	var ae *auth.AdapterError
	if !errors.As(err, &ae) || ae.Method != core.MethodGetSessionAndUser || !errors.Is(err, errDown) {
		t.Errorf("Session with a failing adapter: %v, want an AdapterError for getSessionAndUser wrapping the cause", err)
	}
	if _, err := a.SignOut(context.Background(), "token"); !strings.Contains(fmtErr(err), "deleteSession") {
		t.Errorf("SignOut: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUnknownOrWrongProvider(t *testing.T) {
	a := newJWT(t, sessionsOnly{})
	if _, err := a.StartEmailSignIn(context.Background(), "nope", "a@example.com"); !errors.Is(err, auth.ErrUnknownProvider) {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := a.StartEmailSignIn(context.Background(), "github", "a@example.com"); !errors.Is(err, auth.ErrWrongProviderType) {
		t.Errorf("e-mail sign-in with an OAuth provider: %v", err)
	}
}

func TestHashTokenIsSHA256OfTokenAndSecret(t *testing.T) {
	// printf 'tokensecret' | sha256sum
	if got, want := auth.HashToken("token", "secret"), "d9db21448d73f8397d9401d925e90810faadaad67b0053599e61d9b9e3f7ad37"; got != want {
		t.Errorf("HashToken = %s, want %s", got, want)
	}
}

var cookieRe = regexp.MustCompile(`^__Secure-authjs\.session-token=abc; Path=/; Expires=[^;]+; Max-Age=3600; HttpOnly; Secure; SameSite=Lax$`)

func TestSessionCookie(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a, err := auth.New(auth.Config{Adapter: sessionsOnly{}, Secrets: []string{"s"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	c := a.SessionCookie(core.Session{SessionToken: "abc", Expires: now.Add(time.Hour)}, true)
	if !cookieRe.MatchString(c.String()) {
		t.Errorf("secure cookie = %s", c)
	}
	plain := a.SessionCookie(core.Session{SessionToken: "abc", Expires: now.Add(time.Hour)}, false)
	if plain.Name != auth.SessionCookieName || plain.Secure || !plain.HttpOnly || plain.SameSite != http.SameSiteLaxMode {
		t.Errorf("plain cookie = %s", plain)
	}
	if cl := auth.ClearSessionCookie(true); cl.MaxAge != -1 || cl.Name != auth.SecureSessionCookieName {
		t.Errorf("clearing cookie = %s", cl)
	}

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: auth.SessionCookieName, Value: "plain-token"})
	if got := auth.SessionToken(r, true); got != "" {
		t.Errorf("with secure, a cookie without the __Secure- prefix was read: %q", got)
	}
	if got := auth.SessionToken(r, false); got != "plain-token" {
		t.Errorf("SessionToken = %q", got)
	}
}
