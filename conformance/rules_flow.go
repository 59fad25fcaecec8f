package conformance

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
)

// The flow rules run the library (core/auth) on top of the adapter, so that
// every adapter is shown to be a working sign-in backend. They use a clock
// the test moves; the adapter keeps its own, real one, which is why the
// clock starts at the real time and only moves forward.

// newClock returns a clock at the real time, which the test moves forward.
func newClock() *coretest.Clock { return coretest.NewClock(time.Now()) }

// Providers of the flow rules.
const (
	emailProvider   = "email"
	githubProvider  = "github"
	linkingProvider = "github-linking" // allows dangerous e-mail account linking
	subsetProvider  = "github-subset"  // an account callback keeping access_token only
	googleProvider  = "google"         // OIDC
	passkeyProvider = "passkey"
)

// flowSecret is the secret of newAuth's configuration unless the rule
// gives its own.
const flowSecret = "conformance-flow-secret-0123456789abcdef"

// flowNeeds is what the flows' configuration needs of the adapter: database
// sessions, e-mail and WebAuthn sign-in.
var flowNeeds = []core.Method{
	createUser, getUser, getUserByEmail, getUserByAccount, updateUser, linkAccount, createSession,
	getSessionAndUser, updateSession, deleteSession, createToken, useToken, getAccount, getAuth,
	createAuth, listAuth, updateCounter,
}

// counting returns the rule's adapter behind a checked layer that counts
// the calls made through it, so that a rule can count the calls the
// library makes (extensions included): give the Store to newAuth.
func (e *env) counting() (*coretest.Counting, *core.Store) {
	c := coretest.NewCounting()
	return c, core.NewStore(e.adapter, core.WithObserver(c))
}

// authOptions adjusts the configuration of one flow rule.
type authOptions struct {
	maxAge, updateAge time.Duration
	secrets           []string
	// defaults leaves the session options unset, for the library's
	// defaults (maxAge 30 days, updateAge 24 hours).
	defaults bool
	// adapter replaces the rule's adapter (with a wrapper, say).
	adapter any
	// noEmail leaves the e-mail provider out of the configuration.
	noEmail bool
	// events are the library's events.
	events auth.Events
	// requireEmail is auth.Config.RequireEmail.
	requireEmail bool
}

// registeredPasskey configures the library (as newAuth with no options),
// stores a new user and registers a new authenticator of the user, under
// the passkey provider's account "pk-account".
func (e *env) registeredPasskey(t *testing.T) (*auth.Auth, core.User, core.Authenticator) {
	t.Helper()
	a := e.newAuth(t, newClock(), authOptions{})
	u := e.storedUser(t)
	au := e.newAuthenticator(u.ID, "pk-account")
	e.register(t, a, au)
	return a, u, au
}

// register registers the passkey au through a, as its user au.UserID
// adding a passkey while signed in, failing t on an error.
func (e *env) register(t *testing.T, a *auth.Auth, au core.Authenticator) {
	t.Helper()
	if _, err := registerPasskey(e, a, au); err != nil {
		t.Fatalf("registerAuthenticator(%s): %v", au.CredentialID, err)
	}
}

// registerPasskey registers the passkey au through a for the signed-in
// user au.UserID.
func registerPasskey(e *env, a *auth.Auth, au core.Authenticator) (*auth.SignIn, error) {
	return a.RegisterPasskey(e.ctx, passkeyProvider, &core.User{ID: au.UserID}, core.User{}, au)
}

// signInWithPasskey signs in through a with a verified assertion of the
// credential reporting counter.
func signInWithPasskey(e *env, a *auth.Auth, credentialID string, counter int64) (*auth.SignIn, error) {
	return a.SignInWithPasskey(e.ctx, passkeyProvider, credentialID, counter, nil)
}

// newAuth configures the library on the rule's adapter, with the clock.
func (e *env) newAuth(t *testing.T, c *coretest.Clock, o authOptions) *auth.Auth {
	t.Helper()
	gh := providers.GitHub("client-id", "client-secret")
	linking := providers.GitHub("client-id", "client-secret")
	linking.ID, linking.Name, linking.AllowDangerousEmailAccountLinking = linkingProvider, "GitHub (linking)", true
	subset := providers.GitHub("client-id", "client-secret")
	subset.ID, subset.Name = subsetProvider, "GitHub (subset)"
	subset.Account = func(ts provider.TokenSet) provider.TokenSet { return provider.TokenSet{AccessToken: ts.AccessToken} }
	if o.maxAge == 0 {
		o.maxAge = time.Hour
	}
	if o.secrets == nil {
		o.secrets = []string{flowSecret}
	}
	session := auth.SessionOptions{MaxAge: o.maxAge, UpdateAge: &o.updateAge}
	if o.defaults {
		session = auth.SessionOptions{}
	}
	configured := []provider.Provider{gh, linking, subset, providers.Google("client-id", "client-secret"), provider.Passkey()}
	if !o.noEmail {
		configured = append(configured, provider.Email("auth@example.com", func(context.Context, provider.VerificationRequest) error { return nil }))
	}
	adapter := e.adapter
	if o.adapter != nil {
		adapter = o.adapter
	}
	a, err := auth.New(auth.Config{
		Adapter:   adapter,
		Providers: configured,
		Secrets:   o.secrets,
		Session:   session,
		BaseURL:   "https://app.example.com/auth",
		Now:       c.Now,
		Events:    o.events,

		RequireEmail: o.requireEmail,
	})
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	return a
}

// expectRemovedOnAccess checks that accessing the expired session with the
// token finds nothing and removes it from the store.
func (e *env) expectRemovedOnAccess(t *testing.T, a *auth.Auth, token string) {
	t.Helper()
	if su, _, err := a.Session(e.ctx, token); su != nil || err != nil {
		t.Errorf("Session of an expired session = %s, %v; want nil, nil", show(su), err)
	}
	if ss := e.state(t).Sessions; len(ss) != 0 {
		t.Errorf("the expired session is still stored after it was accessed: %s", show(ss))
	}
}

// oauthCallback is a sign-in callback from the provider for the profile.
// signedIn is the caller signed in by an earlier sign-in, or nil.
// oauthSignIn signs in through a with the callback oauthCallback makes of
// its arguments, failing t on an error.
func (e *env) oauthSignIn(t *testing.T, a *auth.Auth, providerID, accountID, email string, signedIn *auth.SignIn) *auth.SignIn {
	t.Helper()
	in, err := a.SignInWithOAuth(e.ctx, oauthCallback(providerID, accountID, email, signedIn))
	if err != nil {
		t.Fatalf("signInWithOAuth(%s, %s, %s): %v", providerID, accountID, email, err)
	}
	return in
}

func oauthCallback(providerID, accountID, email string, signedIn *auth.SignIn) auth.OAuthCallback {
	var current *core.User
	if signedIn != nil {
		current = &signedIn.User
	}
	return auth.OAuthCallback{
		ProviderID: providerID,
		Profile:    provider.User{ID: accountID, Email: email, Name: ptr("Octo Cat"), Image: ptr("https://example.com/octo.png")},
		Tokens: provider.TokenSet{
			AccessToken: "gho_access", RefreshToken: "ghr_refresh", TokenType: "Bearer", Scope: "read:user",
			ExpiresIn: ptr(int64(3600)), IDToken: "id-token", Extra: map[string]any{"custom": "dropped"},
		},
		User: current,
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func flowRules() []rule {
	return slices.Concat(sessionLifetimeRules(), sessionCostRules(), emailSignInRules(), oauthSignInRules(), webAuthnRules())
}

// failingLinker is an adapter whose linkAccount always fails.
type failingLinker struct {
	core.Adapter
	err error
}

func (f failingLinker) LinkAccount(context.Context, core.Account) (*core.Account, error) {
	return nil, f.err
}

// flipLast returns the hex string s with its last digit changed.
func flipLast(s string) string {
	last := "0"
	if s[len(s)-1] == '0' {
		last = "1"
	}
	return s[:len(s)-1] + last
}
