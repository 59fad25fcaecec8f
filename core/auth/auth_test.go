package auth_test

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
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
		Secrets:   []string{"s-0123456789abcdefghijklmnopqrst"},
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
	if _, err := auth.New(auth.Config{Adapter: sessionsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}}); err != nil {
		t.Errorf("New with JWT sessions: %v", err)
	}
	// With an e-mail provider, only what e-mail sign-in calls.
	_, err := auth.New(auth.Config{Adapter: sessionsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{provider.Email("a@example.com", send)}})
	var mm *core.MissingMethodsError
	if !errors.As(err, &mm) || len(mm.Missing) != 7 {
		t.Errorf("New with an e-mail provider: %v, want the seven methods e-mail sign-in calls", err)
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	for name, cfg := range map[string]auth.Config{
		"no adapter":       {Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}},
		"no secret":        {Adapter: sessionsOnly{}},
		"empty secret":     {Adapter: sessionsOnly{}, Secrets: []string{""}},
		"unknown strategy": {Adapter: sessionsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: "cookie"}},
		"negative maxAge":  {Adapter: sessionsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT, MaxAge: -time.Hour}},
		"invalid provider": {Adapter: sessionsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, Providers: []provider.Provider{provider.Email("a@example.com", nil)}},
		"duplicate id":     {Adapter: sessionsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, Providers: []provider.Provider{provider.Passkey(), provider.Passkey()}},
	} {
		if _, err := auth.New(cfg); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
}

func newJWT(t *testing.T, adapter any, providers ...provider.Provider) *auth.Auth {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: adapter, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: providers})
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
	_, err = a.Authenticators(context.Background(), "u")
	if !errors.Is(err, core.ErrMissingAdapterMethod) || !strings.Contains(err.Error(), "listAuthenticatorsByUserId (needed by WebAuthn authentication)") {
		t.Errorf("Authenticators without listAuthenticatorsByUserId: %v", err)
	}
}

func TestAdapterFailureNamesTheMethod(t *testing.T) {
	a := newJWT(t, sessionsOnly{})
	_, _, err := a.Session(context.Background(), "token")
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
	authorize := func(context.Context, provider.AuthorizeRequest) (*provider.User, error) { return nil, nil }
	a := newJWT(t, sessionsOnly{}, provider.Credentials(authorize))
	if _, err := a.StartEmailSignIn(context.Background(), "nope", "a@example.com"); !errors.Is(err, auth.ErrUnknownProvider) {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := a.StartEmailSignIn(context.Background(), "credentials", "a@example.com"); !errors.Is(err, auth.ErrWrongProviderType) {
		t.Errorf("e-mail sign-in with a credentials provider: %v", err)
	}
}

func TestHashTokenIsSHA256OfTokenAndSecret(t *testing.T) {
	// printf 'tokensecret' | sha256sum
	if got, want := auth.HashToken("token", "secret"), "d9db21448d73f8397d9401d925e90810faadaad67b0053599e61d9b9e3f7ad37"; got != want {
		t.Errorf("HashToken = %s, want %s", got, want)
	}
}

func TestNewNeedsExactlyTheListedMethods(t *testing.T) {
	// With an adapter that has no methods at all, each part of the
	// configuration asks for exactly the methods it needs (SPEC's adapter
	// check), and no more: a method asked for but never called would turn
	// away an adapter that works.
	dbSessions := []core.Method{
		core.MethodCreateUser, core.MethodGetUser, core.MethodGetUserByEmail, core.MethodGetUserByAccount,
		core.MethodUpdateUser, core.MethodLinkAccount, core.MethodCreateSession, core.MethodGetSessionAndUser,
		core.MethodUpdateSession, core.MethodDeleteSession,
	}
	// The adapter check's lists for the e-mail provider and WebAuthn, plus
	// what each flow calls beyond them.
	email := []core.Method{
		core.MethodCreateVerificationToken, core.MethodUseVerificationToken, core.MethodGetUserByEmail,
		core.MethodCreateUser, core.MethodUpdateUser, core.MethodGetUserByAccount, core.MethodLinkAccount,
	}
	oauth := []core.Method{core.MethodGetUserByAccount, core.MethodGetUserByEmail, core.MethodCreateUser, core.MethodLinkAccount}
	webAuthn := []core.Method{
		core.MethodCreateUser, core.MethodGetUser, core.MethodLinkAccount, core.MethodGetAccount,
		core.MethodGetAuthenticator, core.MethodCreateAuthenticator, core.MethodListAuthenticatorsByUserID,
		core.MethodUpdateAuthenticatorCounter,
	}
	jwt := auth.SessionOptions{Strategy: auth.StrategyJWT}
	for name, tc := range map[string]struct {
		cfg  auth.Config
		want []core.Method
	}{
		"database sessions": {auth.Config{}, dbSessions},
		"e-mail":            {auth.Config{Session: jwt, Providers: []provider.Provider{provider.Email("a@example.com", send)}}, email},
		"WebAuthn":          {auth.Config{Session: jwt, Providers: []provider.Provider{provider.Passkey()}}, webAuthn},
		"OAuth":             {auth.Config{Session: jwt, Providers: []provider.Provider{providers.GitHub("id", "secret")}}, oauth},
	} {
		tc.cfg.Adapter, tc.cfg.Secrets = struct{}{}, []string{"s-0123456789abcdefghijklmnopqrst"}
		_, err := auth.New(tc.cfg)
		var mm *core.MissingMethodsError
		if !errors.As(err, &mm) {
			t.Errorf("%s: New = %v, want a MissingMethodsError", name, err)
			continue
		}
		var got []core.Method
		for _, m := range mm.Missing {
			got = append(got, m.Method)
		}
		if !equalSets(got, tc.want) {
			t.Errorf("%s: missing %v, want %v", name, got, tc.want)
		}
	}
}

func equalSets(a, b []core.Method) bool {
	in := map[core.Method]int{}
	for _, m := range a {
		in[m]++
	}
	for _, m := range b {
		in[m]--
	}
	for _, n := range in {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

func TestNewRejectsNegativeUpdateAge(t *testing.T) {
	neg := -time.Minute
	_, err := auth.New(auth.Config{Adapter: sessionsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT, UpdateAge: &neg}})
	if !errors.Is(err, core.ErrInvalidConfig) {
		t.Errorf("negative updateAge: %v, want ErrInvalidConfig", err)
	}
}

func TestOAuthProfileWithoutIDRejected(t *testing.T) {
	a := newJWT(t, &emailStub{}, providers.GitHub("id", "secret"))
	_, err := a.SignInWithOAuth(context.Background(), auth.OAuthCallback{ProviderID: "github", Profile: provider.User{Email: "a@example.com"}})
	if !errors.Is(err, auth.ErrProfileInvalid) {
		t.Errorf("a profile without an id: %v, want ErrProfileInvalid", err)
	}
}

// emailStub is an adapter for the e-mail flow whose answers the test sets.
// It stores nothing: it checks what the library does with an adapter that
// answers wrongly or that reports the account as linked already.
type emailStub struct {
	t       *testing.T
	created []core.VerificationToken
	use     func(core.VerificationTokenKey) *core.VerificationToken
	user    *core.User // the user of every lookup
}

func (s *emailStub) CreateVerificationToken(_ context.Context, v core.VerificationToken) (*core.VerificationToken, error) {
	s.created = append(s.created, v)
	return &v, nil
}
func (s *emailStub) UseVerificationToken(_ context.Context, k core.VerificationTokenKey) (*core.VerificationToken, error) {
	return s.use(k), nil
}
func (s *emailStub) GetUserByEmail(context.Context, string) (*core.User, error) { return s.user, nil }
func (s *emailStub) GetUserByAccount(context.Context, core.AccountKey) (*core.User, error) {
	return s.user, nil
}
func (s *emailStub) LinkAccount(_ context.Context, acc core.Account) (*core.Account, error) {
	s.t.Errorf("LinkAccount(%+v) for an account that is linked already", acc)
	return &acc, nil
}
func (s *emailStub) UpdateUser(context.Context, core.UserUpdate) (*core.User, error) {
	s.t.Error("UpdateUser for a user verified already")
	return s.user, nil
}
func (s *emailStub) CreateUser(context.Context, core.User) (*core.User, error) {
	s.t.Error("CreateUser for an existing user")
	return s.user, nil
}
func (s *emailStub) CreateSession(_ context.Context, ss core.Session) (*core.Session, error) {
	return &ss, nil
}

func newEmailStub(t *testing.T, stub *emailStub, send func(context.Context, provider.VerificationRequest) error) *auth.Auth {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: stub, Secrets: []string{"new-secret-0123456789abcdefghijk", "old-secret-0123456789abcdefghijk"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{provider.Email("a@example.com", send)}, BaseURL: "https://app.example.com/auth"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestStartEmailSignInSendsTheTokenAndStoresItsHash(t *testing.T) {
	var sent []provider.VerificationRequest
	stub := &emailStub{t: t}
	a := newEmailStub(t, stub, func(_ context.Context, r provider.VerificationRequest) error {
		sent = append(sent, r)
		return nil
	})
	req, err := a.StartEmailSignIn(context.Background(), "email", " Ada@Example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0].Token != req.Token || sent[0].Identifier != "ada@example.com" {
		t.Fatalf("sent %+v, want the one request %+v", sent, req)
	}
	if ok, _ := regexp.MatchString(`^[0-9a-f]{64}$`, req.Token); !ok {
		t.Errorf("token %q: want 256 random bits as 64 hex digits", req.Token)
	}
	if len(stub.created) != 1 || stub.created[0].Token != auth.HashToken(req.Token, "new-secret-0123456789abcdefghijk") || stub.created[0].Identifier != "ada@example.com" {
		t.Errorf("stored %+v, want the token hashed with the newest secret", stub.created)
	}
	u, err := url.Parse(sent[0].URL)
	if err != nil || u.Query().Get("token") != req.Token || u.Query().Get("email") != "ada@example.com" ||
		u.Host != "app.example.com" || u.Path != "/auth/callback/email" {
		t.Errorf("link %q: want the callback with the unhashed token and the address", sent[0].URL)
	}
}

func TestVerifyEmailChecksWhatTheAdapterReturns(t *testing.T) {
	// An adapter that answers useVerificationToken with a token for another
	// address, or with another token, must not sign anyone in.
	future := time.Now().Add(time.Hour)
	for name, use := range map[string]func(core.VerificationTokenKey) *core.VerificationToken{
		"another address": func(k core.VerificationTokenKey) *core.VerificationToken {
			return &core.VerificationToken{Identifier: "eve@example.com", Token: k.Token, Expires: future}
		},
		"another token": func(k core.VerificationTokenKey) *core.VerificationToken {
			return &core.VerificationToken{Identifier: k.Identifier, Token: "other", Expires: future}
		},
	} {
		stub := &emailStub{t: t, use: use, user: &core.User{ID: "u1", Email: "ada@example.com", EmailVerified: &future}}
		a := newEmailStub(t, stub, send)
		if in, err := a.VerifyEmailSignIn(context.Background(), "email", "ada@example.com", "token"); !errors.Is(err, auth.ErrVerificationFailed) {
			t.Errorf("%s: sign-in = %+v, %v; want ErrVerificationFailed", name, in, err)
		}
	}
}

func TestVerifyEmailDoesNotLinkALinkedAccountAgain(t *testing.T) {
	verified := time.Now().Add(-time.Hour)
	stub := &emailStub{t: t, user: &core.User{ID: "u1", Email: "ada@example.com", EmailVerified: &verified}}
	stub.use = func(k core.VerificationTokenKey) *core.VerificationToken {
		return &core.VerificationToken{Identifier: k.Identifier, Token: k.Token, Expires: time.Now().Add(time.Hour)}
	}
	a := newEmailStub(t, stub, send)
	in, err := a.VerifyEmailSignIn(context.Background(), "email", "ada@example.com", "token")
	if err != nil || in.User.ID != "u1" || in.IsNewUser {
		t.Errorf("sign-in = %+v, %v; want the existing user", in, err)
	}
}

func TestJWTSignInCreatesNoDatabaseSession(t *testing.T) {
	stub := &emailStub{t: t, user: &core.User{ID: "u1", Email: "a@example.com"}}
	a := newJWT(t, stub, providers.GitHub("id", "secret"))
	in, err := a.SignInWithOAuth(context.Background(), auth.OAuthCallback{ProviderID: "github", Profile: provider.User{ID: "1", Email: "a@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.User.ID != "u1" || in.Session != (core.Session{}) {
		t.Errorf("JWT sign-in = %+v, want user u1 and no database session", in)
	}
}

func TestOAuthProviderAccessor(t *testing.T) {
	authorize := func(context.Context, provider.AuthorizeRequest) (*provider.User, error) { return nil, nil }
	a, err := auth.New(auth.Config{
		Adapter: &emailStub{t: t}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, BaseURL: "https://example.com/auth",
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{provider.Credentials(authorize), providers.GitHub("id", "secret")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Settings().BaseURL != "https://example.com/auth" {
		t.Errorf("BaseURL() = %q", a.Settings().BaseURL)
	}
	p, err := a.Edge().OAuthProvider("github")
	if err != nil {
		t.Fatal(err)
	}
	// The validated copy: defaults applied.
	if o := p.Options(); o.ID != "github" || !o.Checks.Has(provider.CheckPKCE) {
		t.Errorf("options: %+v", o)
	}
	if _, err := a.Edge().OAuthProvider("nope"); !errors.Is(err, auth.ErrUnknownProvider) {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := a.Edge().OAuthProvider("credentials"); !errors.Is(err, auth.ErrWrongProviderType) {
		t.Errorf("credentials provider: %v", err)
	}
}

// Secrets shorter than 32 bytes are refused: a one-character secret used to
// be accepted, and a short secret makes tokens and sealed cookies guessable.
// AllowShortSecrets is the development override, and Edge.CheckSecrets
// carries it to the modules that take secrets of their own.
func TestShortSecretsRefused(t *testing.T) {
	long := strings.Repeat("k", auth.MinSecretLength)
	jwtOnly := auth.SessionOptions{Strategy: auth.StrategyJWT} // needs no adapter method
	for name, secrets := range map[string][]string{
		"one byte":         {"s"},
		"31 bytes":         {long[:31]},
		"short old secret": {long, "old"},
	} {
		_, err := auth.New(auth.Config{Adapter: struct{}{}, Secrets: secrets, Session: jwtOnly})
		if !errors.Is(err, auth.ErrShortSecret) || !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), "authport-secret") {
			t.Errorf("%s: New = %v, want ErrShortSecret saying how to make one", name, err)
		}
	}
	// No secret at all, as when AUTH_SECRET is unset: the error names the
	// variable and the command that makes a secret.
	_, err := auth.New(auth.Config{Adapter: struct{}{}, Session: jwtOnly})
	if !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), "AUTH_SECRET") || !strings.Contains(err.Error(), "authport-secret") {
		t.Errorf("no secret: New = %v, want ErrInvalidConfig naming AUTH_SECRET and authport-secret", err)
	}
	a, err := auth.New(auth.Config{Adapter: struct{}{}, Secrets: []string{long}, Session: jwtOnly})
	if err != nil {
		t.Fatalf("a %d-byte secret: %v", len(long), err)
	}
	if err := a.Edge().CheckSecrets([]string{"dev"}); !errors.Is(err, auth.ErrShortSecret) {
		t.Errorf("CheckSecrets of a short secret = %v, want ErrShortSecret", err)
	}
	dev, err := auth.New(auth.Config{Adapter: struct{}{}, Secrets: []string{"dev"}, Session: jwtOnly, AllowShortSecrets: true})
	if err != nil {
		t.Fatalf("AllowShortSecrets: %v", err)
	}
	if err := dev.Edge().CheckSecrets([]string{"dev"}); err != nil {
		t.Errorf("CheckSecrets with AllowShortSecrets = %v, want nil", err)
	}
	if err := dev.Edge().CheckSecrets([]string{"dev", ""}); err == nil {
		t.Error("CheckSecrets accepted an empty secret with AllowShortSecrets")
	}
}
