package conformance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// The flow rules run the library (core/auth) on top of the adapter, so that
// every adapter is shown to be a working sign-in backend. They use a clock
// the test moves; the adapter keeps its own, real one, which is why the
// clock starts at the real time and only moves forward.

// clock is a time source the test moves forward.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Providers of the flow rules.
const (
	emailProvider   = "email"
	githubProvider  = "github"
	linkingProvider = "github-linking" // allows dangerous e-mail account linking
	subsetProvider  = "github-subset"  // an account callback keeping access_token only
	googleProvider  = "google"         // OIDC
	passkeyProvider = "passkey"
)

// flowNeeds is what the flows' configuration needs of the adapter: database
// sessions, e-mail and WebAuthn sign-in.
var flowNeeds = []core.Method{
	createUser, getUser, getUserByEmail, getUserByAccount, updateUser, linkAccount, createSession,
	getSessionAndUser, updateSession, deleteSession, createToken, useToken, getAccount, getAuth,
	createAuth, listAuth, updateCounter,
}

// counting wraps the rule's adapter in a [Counting], so that a rule can
// count the calls the library makes, or skips t when the adapter does not
// implement every method (the wrapper embeds core.Adapter).
func (e *env) counting(t *testing.T) *Counting {
	full, ok := e.adapter.(core.Adapter)
	if !ok {
		t.Skipf("adapter %T does not implement every method (core.Adapter), which the counting wrapper embeds", e.adapter)
	}
	return NewCounting(full)
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
}

// registeredPasskey configures the library (as newAuth with no options),
// stores a new user and registers a new authenticator of the user, under
// the passkey provider's account "pk-account".
func (e *env) registeredPasskey(t *testing.T) (*auth.Auth, core.User, core.Authenticator) {
	t.Helper()
	a := e.newAuth(t, newClock(), authOptions{})
	u := e.newUser()
	e.createUser(t, u)
	au := e.newAuthenticator(u.ID, "pk-account")
	if _, err := a.RegisterAuthenticator(e.ctx, passkeyProvider, au); err != nil {
		t.Fatal(err)
	}
	return a, u, au
}

// newAuth configures the library on the rule's adapter, with the clock.
func (e *env) newAuth(t *testing.T, c *clock, o authOptions) *auth.Auth {
	t.Helper()
	gh := provider.GitHub("client-id", "client-secret")
	linking := provider.GitHub("client-id", "client-secret")
	linking.ID, linking.Name, linking.AllowDangerousEmailAccountLinking = linkingProvider, "GitHub (linking)", true
	subset := provider.GitHub("client-id", "client-secret")
	subset.ID, subset.Name = subsetProvider, "GitHub (subset)"
	subset.Account = func(ts provider.TokenSet) provider.TokenSet { return provider.TokenSet{AccessToken: ts.AccessToken} }
	if o.maxAge == 0 {
		o.maxAge = time.Hour
	}
	if o.secrets == nil {
		o.secrets = []string{"conformance-flow-secret-0123456789abcdef"}
	}
	session := auth.SessionOptions{MaxAge: o.maxAge, UpdateAge: &o.updateAge}
	if o.defaults {
		session = auth.SessionOptions{}
	}
	providers := []provider.Provider{gh, linking, subset, provider.Google("client-id", "client-secret"), provider.Passkey()}
	if !o.noEmail {
		providers = append(providers, provider.Email("auth@example.com", func(context.Context, provider.VerificationRequest) error { return nil }))
	}
	adapter := e.adapter
	if o.adapter != nil {
		adapter = o.adapter
	}
	a, err := auth.New(auth.Config{
		Adapter:   adapter,
		Providers: providers,
		Secrets:   o.secrets,
		Session:   session,
		BaseURL:   "https://app.example.com/auth",
		Now:       c.Now,
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
	return []rule{
		{group: "sessionLifetime", name: "new_tokens_are_random_256_bit", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			s1, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !hex64.MatchString(s1.SessionToken) || s1.SessionToken == s2.SessionToken {
				t.Errorf("session tokens %q and %q: want two different 64-digit hex (256-bit) tokens", s1.SessionToken, s2.SessionToken)
			}
			if want := core.NormalizeTime(c.Now().Add(time.Hour)); !s1.Expires.Equal(want) {
				t.Errorf("expires = %v, want now+maxAge = %v", s1.Expires, want)
			}
		}},
		{group: "sessionLifetime", name: "unknown_token_is_nil", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			for _, tok := range []string{"", "no-such-session"} {
				if su, _, err := a.Session(e.ctx, tok); su != nil || err != nil {
					t.Errorf("Session(%q) = %s, %v; want nil, nil", tok, show(su), err)
				}
			}
		}},
		{group: "sessionLifetime", name: "extended_at_most_once_per_update_age", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{maxAge: time.Hour, updateAge: 10 * time.Minute})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			stored := func() time.Time {
				ss := e.state(t).Sessions
				if len(ss) != 1 {
					t.Fatalf("%d sessions stored, want 1", len(ss))
				}
				return ss[0].Expires
			}
			created := s.Expires
			c.advance(9 * time.Minute)
			if su, _, err := a.Session(e.ctx, s.SessionToken); err != nil || su == nil {
				t.Fatalf("Session after 9m = %s, %v", show(su), err)
			}
			if got := stored(); !got.Equal(created) {
				t.Errorf("after 9m (updateAge 10m) expires moved to %v, want it unchanged at %v", got, created)
			}
			c.advance(2 * time.Minute)
			su, _, err := a.Session(e.ctx, s.SessionToken)
			if err != nil || su == nil {
				t.Fatalf("Session after 11m = %s, %v", show(su), err)
			}
			want := core.NormalizeTime(c.Now().Add(time.Hour))
			if got := stored(); !got.Equal(want) || !su.Session.Expires.Equal(want) {
				t.Errorf("after 11m expires = %v (returned %v), want now+maxAge = %v", got, su.Session.Expires, want)
			}
			c.advance(time.Minute)
			if _, _, err := a.Session(e.ctx, s.SessionToken); err != nil {
				t.Fatal(err)
			}
			if got := stored(); !got.Equal(want) {
				t.Errorf("a minute after the extension expires moved again, to %v", got)
			}
		}},
		{group: "sessionLifetime", name: "update_age_zero_extends_every_access", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{maxAge: time.Hour, updateAge: 0})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				c.advance(time.Second)
				su, _, err := a.Session(e.ctx, s.SessionToken)
				if err != nil || su == nil {
					t.Fatalf("Session = %s, %v", show(su), err)
				}
				if want := core.NormalizeTime(c.Now().Add(time.Hour)); !su.Session.Expires.Equal(want) {
					t.Errorf("expires = %v, want %v", su.Session.Expires, want)
				}
			}
		}},
		{group: "sessionLifetime", name: "expired_session_deleted", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{maxAge: time.Hour})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			c.advance(time.Hour + time.Second)
			e.expectRemovedOnAccess(t, a, s.SessionToken)
		}},
		{group: "sessionLifetime", name: "expired_session_is_nil_without_a_library_write", run: func(t *testing.T, e *env) {
			// Expired by the adapter's clock too, which hides it: the
			// library gets nil and calls no write method (it cannot tell
			// the token from an unknown one, issue 23 item 3). Removing it
			// is the adapter's, as it reads (the rule
			// getSessionAndUser/expired_session_removed_on_access checks
			// the raw store), by PurgeExpired or by a TTL.
			counting := e.counting(t)
			a := e.newAuth(t, newClock(), authOptions{adapter: counting})
			u := e.newUser()
			e.createUser(t, u)
			s := e.newSession(u.ID)
			s.Expires = time.Now().Add(-time.Minute)
			e.createSession(t, s)
			counting.Reset()
			if su, _, err := a.Session(e.ctx, s.SessionToken); su != nil || err != nil {
				t.Errorf("Session of an expired session = %s, %v; want nil, nil", show(su), err)
			}
			if w := counting.Writes(); len(w) != 0 {
				t.Errorf("Session of a hidden expired session wrote: %v; want no write", w)
			}
			if e.purger != nil {
				if _, err := e.purger.PurgeExpired(e.ctx); err != nil {
					t.Fatal(err)
				}
				if ss := e.state(t).Sessions; len(ss) != 0 {
					t.Errorf("the expired session is still stored after PurgeExpired: %s", show(ss))
				}
			}
		}},
		{group: "sessionLifetime", name: "unknown_token_one_read_no_write", run: func(t *testing.T, e *env) {
			// Issue 23, item 3: a junk session cookie costs one
			// getSessionAndUser and nothing else.
			counting := e.counting(t)
			a := e.newAuth(t, newClock(), authOptions{adapter: counting})
			u := e.newUser()
			e.createUser(t, u)
			live, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			before := e.state(t)
			counting.Reset()
			const n = 5
			for i := range n {
				token := e.newSession(u.ID).SessionToken
				if i == 0 {
					token = flipLast(live.SessionToken)
				}
				if su, _, err := a.Session(e.ctx, token); su != nil || err != nil {
					t.Fatalf("Session of an unknown token = %s, %v; want nil, nil", show(su), err)
				}
			}
			calls := counting.Calls()
			if calls[getSessionAndUser] != n || len(calls) != 1 {
				t.Errorf("%d lookups of unknown tokens made the calls %v; want %d getSessionAndUser and nothing else", n, calls, n)
			}
			e.expectUnchanged(t, before, "lookups of unknown session tokens")
		}},
		{group: "sessionLifetime", name: "concurrent_requests_extend_once", run: func(t *testing.T, e *env) {
			// Issue 24, item 4: a burst of requests on a session due for
			// extension (a page loading its API calls) writes expires
			// once, not once per request, and every request sees the new
			// expiry.
			counting := e.counting(t)
			c := newClock()
			a := e.newAuth(t, c, authOptions{adapter: counting, maxAge: time.Hour, updateAge: 10 * time.Minute})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			c.advance(11 * time.Minute)
			want := core.NormalizeTime(c.Now().Add(time.Hour))
			counting.Reset()
			const n = 8
			expires := make([]time.Time, n)
			errs := make([]error, n)
			concurrently(n, func(i int) {
				su, _, err := a.Session(e.ctx, s.SessionToken)
				switch {
				case err != nil:
					errs[i] = err
				case su == nil:
					errs[i] = errors.New("Session = nil; want the session")
				default:
					expires[i] = su.Session.Expires
				}
			})
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if w := counting.Writes(); w[updateSession] != 1 || len(w) != 1 {
				t.Errorf("%d concurrent requests on a session due for extension wrote %v; want one updateSession", n, w)
			}
			for i, got := range expires {
				if !core.NormalizeTime(got).Equal(want) {
					t.Errorf("request %d got expires %v; want the extension's %v", i, got, want)
				}
			}
			if su := e.getSessionAndUser(t, s.SessionToken); su == nil || !su.Session.Expires.Equal(want) {
				t.Errorf("stored session after the burst: %s; want expires %v", show(su), want)
			}
		}},
		{group: "sessionLifetime", name: "sign_out_deletes_session", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.SignOut(e.ctx, s.SessionToken); err != nil {
				t.Fatal(err)
			}
			if su, _, _ := a.Session(e.ctx, s.SessionToken); su != nil {
				t.Errorf("Session after sign-out = %s", show(su))
			}
			if ss := e.state(t).Sessions; len(ss) != 0 {
				t.Errorf("sessions stored after sign-out: %s", show(ss))
			}
		}},

		{group: "emailSignIn", name: "new_user_created_verified", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			req, err := a.StartEmailSignIn(e.ctx, emailProvider, "  New.User@Example.COM ")
			if err != nil {
				t.Fatal(err)
			}
			if req.Identifier != "new.user@example.com" || !hex64.MatchString(req.Token) {
				t.Errorf("request = %s, want the normalised address and a 256-bit token", show(req))
			}
			stored := e.state(t).VerificationTokens
			if len(stored) != 1 || stored[0].Token != auth.HashToken(req.Token, "conformance-flow-secret-0123456789abcdef") || stored[0].Token == req.Token {
				t.Fatalf("stored tokens = %s, want only the hash of the link's token", show(stored))
			}
			if want := core.NormalizeTime(c.Now().Add(provider.DefaultEmailMaxAge)); !stored[0].Expires.Equal(want) {
				t.Errorf("token expires %v, want %v (the provider's maxAge)", stored[0].Expires, want)
			}
			c.advance(time.Minute)
			in, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "new.user@example.com", req.Token)
			if err != nil {
				t.Fatal(err)
			}
			if !in.IsNewUser || in.User.Email != "new.user@example.com" || in.User.EmailVerified == nil || !in.User.EmailVerified.Equal(core.NormalizeTime(c.Now())) {
				t.Errorf("sign-in = %s, want a new user verified now", show(in))
			}
			s := e.state(t)
			if len(s.Users) != 1 || len(s.Sessions) != 1 || s.Sessions[0].UserID != in.User.ID || len(s.VerificationTokens) != 0 {
				t.Errorf("stored after sign-in: %s; want one user, one session, no token", show(s))
			}
			if len(s.Accounts) != 1 || s.Accounts[0].Type != core.AccountTypeEmail || s.Accounts[0].ProviderAccountID != "new.user@example.com" {
				t.Errorf("accounts = %s, want the user's e-mail account", show(s.Accounts))
			}
		}},
		{group: "emailSignIn", name: "email_verified_set_on_first_sign_in_only", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			u := e.newUser()
			u.EmailVerified = nil
			e.createUser(t, u)
			signIn := func() *auth.SignIn {
				req, err := a.StartEmailSignIn(e.ctx, emailProvider, u.Email)
				if err != nil {
					t.Fatal(err)
				}
				in, err := a.VerifyEmailSignIn(e.ctx, emailProvider, u.Email, req.Token)
				if err != nil {
					t.Fatal(err)
				}
				return in
			}
			first := signIn()
			verified := core.NormalizeTime(c.Now())
			if first.IsNewUser || first.User.ID != u.ID || first.User.EmailVerified == nil || !first.User.EmailVerified.Equal(verified) {
				t.Errorf("first sign-in = %s, want the existing user verified now", show(first))
			}
			c.advance(time.Hour)
			signIn()
			got := e.getUser(t, u.ID)
			if got == nil || got.EmailVerified == nil || !got.EmailVerified.Equal(verified) {
				t.Errorf("after a second sign-in the user is %s, want emailVerified still %v", show(got), verified)
			}
			if n := len(e.state(t).Accounts); n != 1 {
				t.Errorf("%d accounts after two sign-ins, want the one e-mail account", n)
			}
		}},
		{group: "emailSignIn", name: "token_works_once", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			req, err := a.StartEmailSignIn(e.ctx, emailProvider, "once@example.com")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "once@example.com", req.Token); err != nil {
				t.Fatal(err)
			}
			before := e.state(t)
			_, err = a.VerifyEmailSignIn(e.ctx, emailProvider, "once@example.com", req.Token)
			expectErr(t, "a second use of the link", err, auth.ErrVerificationFailed)
			e.expectUnchanged(t, before, "the rejected second use")
		}},
		{group: "emailSignIn", name: "wrong_token_or_address_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			req, err := a.StartEmailSignIn(e.ctx, emailProvider, "ada@example.com")
			if err != nil {
				t.Fatal(err)
			}
			before := e.state(t)
			for name, try := range map[string][2]string{
				"a wrong token":       {"ada@example.com", flipLast(req.Token)},
				"the hash as token":   {"ada@example.com", auth.HashToken(req.Token, "conformance-flow-secret-0123456789abcdef")},
				"another address":     {"eve@example.com", req.Token},
				"an empty token":      {"ada@example.com", ""},
				"a malformed address": {"not an address", req.Token},
			} {
				_, err := a.VerifyEmailSignIn(e.ctx, emailProvider, try[0], try[1])
				expectErr(t, "sign-in with "+name, err, auth.ErrVerificationFailed)
			}
			e.expectUnchanged(t, before, "the rejected sign-ins")
			if _, err := a.VerifyEmailSignIn(e.ctx, emailProvider, "ada@example.com", req.Token); err != nil {
				t.Errorf("the right token after the wrong ones: %v", err)
			}
		}},
		{group: "emailSignIn", name: "expired_token_rejected", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			req, err := a.StartEmailSignIn(e.ctx, emailProvider, "late@example.com")
			if err != nil {
				t.Fatal(err)
			}
			c.advance(provider.DefaultEmailMaxAge + time.Second)
			_, err = a.VerifyEmailSignIn(e.ctx, emailProvider, "late@example.com", req.Token)
			expectErr(t, "sign-in with an expired link", err, auth.ErrVerificationFailed)
			s := e.state(t)
			if len(s.Users) != 0 || len(s.Sessions) != 0 {
				t.Errorf("an expired link signed someone in: %s", show(s))
			}
		}},
		{group: "emailSignIn", name: "rotated_secret_still_verifies", run: func(t *testing.T, e *env) {
			c := newClock()
			old := e.newAuth(t, c, authOptions{secrets: []string{"conformance-old-secret-0123456789abcdef"}})
			req, err := old.StartEmailSignIn(e.ctx, emailProvider, "rotate@example.com")
			if err != nil {
				t.Fatal(err)
			}
			rotated := e.newAuth(t, c, authOptions{secrets: []string{"conformance-new-secret-0123456789abcdef", "conformance-old-secret-0123456789abcdef"}})
			if _, err := rotated.VerifyEmailSignIn(e.ctx, emailProvider, "rotate@example.com", req.Token); err != nil {
				t.Errorf("a link made with the old secret, after rotation: %v", err)
			}
			next, err := rotated.StartEmailSignIn(e.ctx, emailProvider, "rotate@example.com")
			if err != nil {
				t.Fatal(err)
			}
			if s := e.state(t).VerificationTokens; len(s) != 1 || s[0].Token != auth.HashToken(next.Token, "conformance-new-secret-0123456789abcdef") {
				t.Errorf("new tokens are not hashed with the newest secret: %s", show(s))
			}
		}},

		{group: "oauthSignIn", name: "new_user_and_account", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{})
			in, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", "octo@example.com", nil))
			if err != nil {
				t.Fatal(err)
			}
			if !in.IsNewUser || in.User.Email != "octo@example.com" || in.User.EmailVerified != nil || in.User.Name == nil {
				t.Errorf("sign-in = %s, want a new user with emailVerified null", show(in))
			}
			s := e.state(t)
			if len(s.Users) != 1 || len(s.Sessions) != 1 || len(s.Accounts) != 1 {
				t.Fatalf("stored: %s; want one user, session and account", show(s))
			}
			acc := s.Accounts[0]
			wantExpiresAt := c.Now().Unix() + 3600
			if acc.UserID != in.User.ID || acc.Type != core.AccountTypeOAuth || acc.Provider != githubProvider || acc.ProviderAccountID != "gh-1" ||
				acc.AccessToken == nil || *acc.AccessToken != "gho_access" || acc.TokenType == nil || *acc.TokenType != "bearer" ||
				acc.ExpiresAt == nil || *acc.ExpiresAt < wantExpiresAt-1 || *acc.ExpiresAt > wantExpiresAt {
				t.Errorf("account = %s, want the default subset with token_type lowercased and expires_at = now+expires_in (%d)", show(acc), wantExpiresAt)
			}
		}},
		{group: "oauthSignIn", name: "linked_account_signs_in_its_user", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", "octo@example.com", nil))
			if err != nil {
				t.Fatal(err)
			}
			again, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", "changed@example.com", nil))
			if err != nil {
				t.Fatal(err)
			}
			if again.IsNewUser || again.User.ID != first.User.ID || again.Session.SessionToken == first.Session.SessionToken {
				t.Errorf("second sign-in = %s, want the same user in a new session", show(again))
			}
			if s := e.state(t); len(s.Users) != 1 || len(s.Accounts) != 1 || len(s.Sessions) != 2 {
				t.Errorf("stored: %s; want one user, one account, two sessions", show(s))
			}
		}},
		{group: "oauthSignIn", name: "linked_account_of_signed_in_user_changes_nothing", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", "octo@example.com", nil))
			if err != nil {
				t.Fatal(err)
			}
			before := e.state(t)
			again, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", "octo@example.com", first))
			if err != nil {
				t.Fatal(err)
			}
			if again.User.ID != first.User.ID || !again.KeepSession {
				t.Errorf("sign-in while signed in = %s, want the current user and session", show(again))
			}
			e.expectUnchanged(t, before, "signing in again with the linked account")
		}},
		{group: "oauthSignIn", name: "account_of_another_user_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			if _, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-a", "a@example.com", nil)); err != nil {
				t.Fatal(err)
			}
			b, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-b", "b@example.com", nil))
			if err != nil {
				t.Fatal(err)
			}
			before := e.state(t)
			_, err = a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-a", "a@example.com", b))
			expectErr(t, "signed in as b, signing in with a's account", err, auth.ErrAccountNotLinked)
			e.expectUnchanged(t, before, "the rejected sign-in")
		}},
		{group: "oauthSignIn", name: "new_account_linked_to_signed_in_user", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", "octo@example.com", nil))
			if err != nil {
				t.Fatal(err)
			}
			in, err := a.SignInWithOAuth(e.ctx, oauthCallback(googleProvider, "google-sub", "other@example.com", first))
			if err != nil {
				t.Fatal(err)
			}
			if in.User.ID != first.User.ID || in.IsNewUser {
				t.Errorf("sign-in = %s, want the signed-in user", show(in))
			}
			got := e.getAccount(t, "google-sub", googleProvider)
			if got == nil || got.UserID != first.User.ID || got.Type != core.AccountTypeOIDC {
				t.Errorf("the new account = %s, want an oidc account of the signed-in user", show(got))
			}
			if n := len(e.state(t).Users); n != 1 {
				t.Errorf("%d users, want 1", n)
			}
		}},
		{group: "oauthSignIn", name: "email_of_existing_user_not_linked_by_default", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			before := e.state(t)
			_, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", u.Email, nil))
			expectErr(t, "a new account whose e-mail belongs to a user", err, auth.ErrAccountNotLinked)
			e.expectUnchanged(t, before, "the rejected sign-in")
		}},
		{group: "oauthSignIn", name: "email_of_existing_user_linked_when_allowed", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			in, err := a.SignInWithOAuth(e.ctx, oauthCallback(linkingProvider, "gh-1", u.Email, nil))
			if err != nil {
				t.Fatal(err)
			}
			if in.User.ID != u.ID || in.IsNewUser {
				t.Errorf("sign-in = %s, want the existing user", show(in))
			}
			if got := e.getAccount(t, "gh-1", linkingProvider); got == nil || got.UserID != u.ID {
				t.Errorf("account = %s, want it linked to the existing user", show(got))
			}
		}},
		{group: "oauthSignIn", name: "oidc_without_id_token_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			cb := oauthCallback(googleProvider, "google-sub", "g@example.com", nil)
			cb.Tokens.IDToken = ""
			before := e.state(t)
			_, err := a.SignInWithOAuth(e.ctx, cb)
			expectErr(t, "an OIDC callback without an id_token", err, provider.ErrMissingIDToken)
			e.expectUnchanged(t, before, "the rejected sign-in")
		}},
		{group: "oauthSignIn", name: "account_callback_subset_stored", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			if _, err := a.SignInWithOAuth(e.ctx, oauthCallback(subsetProvider, "gh-1", "octo@example.com", nil)); err != nil {
				t.Fatal(err)
			}
			got := e.getAccount(t, "gh-1", subsetProvider)
			want := core.Account{UserID: "", Provider: subsetProvider, Type: core.AccountTypeOAuth, ProviderAccountID: "gh-1", AccessToken: ptr("gho_access")}
			if got != nil {
				want.UserID = got.UserID
			}
			if got == nil {
				t.Fatal("no account stored")
			}
			expectEqual(t, "the stored account (the callback keeps access_token only)", *got, want)
		}},

		{group: "sessionLifetime", name: "default_max_age_and_update_age", run: func(t *testing.T, e *env) {
			c := newClock()
			a := e.newAuth(t, c, authOptions{defaults: true})
			u := e.newUser()
			e.createUser(t, u)
			s, err := a.CreateSession(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := core.NormalizeTime(c.Now().Add(30 * 24 * time.Hour)); !s.Expires.Equal(want) {
				t.Errorf("expires = %v, want now+30 days = %v", s.Expires, want)
			}
			c.advance(23 * time.Hour)
			if su, _, err := a.Session(e.ctx, s.SessionToken); err != nil || su == nil {
				t.Fatalf("Session after 23h = %s, %v", show(su), err)
			}
			if got := e.getSessionAndUser(t, s.SessionToken); got == nil || !got.Session.Expires.Equal(s.Expires) {
				t.Errorf("after 23h (default updateAge 24h) the session is %s, want expires unchanged at %v", show(got), s.Expires)
			}
			c.advance(2 * time.Hour)
			su, _, err := a.Session(e.ctx, s.SessionToken)
			if err != nil || su == nil {
				t.Fatalf("Session after 25h = %s, %v", show(su), err)
			}
			want := core.NormalizeTime(c.Now().Add(30 * 24 * time.Hour))
			if got := e.getSessionAndUser(t, s.SessionToken); got == nil || !got.Session.Expires.Equal(want) || !su.Session.Expires.Equal(want) {
				t.Errorf("after 25h the session is %s (returned %v), want expires now+30 days = %v", show(got), su.Session.Expires, want)
			}
		}},
		{group: "emailSignIn", name: "address_normalised_when_verifying", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			req, err := a.StartEmailSignIn(e.ctx, emailProvider, "ada@example.com")
			if err != nil {
				t.Fatal(err)
			}
			in, err := a.VerifyEmailSignIn(e.ctx, emailProvider, " ADA@Example.com ", req.Token)
			if err != nil {
				t.Fatalf("the link's token with the address in other case and spaces: %v", err)
			}
			if in.User.Email != "ada@example.com" {
				t.Errorf("signed in %s, want ada@example.com", show(in.User))
			}
		}},
		{group: "oauthSignIn", name: "new_account_while_signed_in_keeps_the_session", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			first, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-1", "octo@example.com", nil))
			if err != nil {
				t.Fatal(err)
			}
			in, err := a.SignInWithOAuth(e.ctx, oauthCallback(googleProvider, "google-sub", "other@example.com", first))
			if err != nil {
				t.Fatal(err)
			}
			if !in.KeepSession || in.Session.SessionToken != "" {
				t.Errorf("session %s, want the current session kept (KeepSession, no new session)", show(in.Session))
			}
			if s := e.state(t); len(s.Sessions) != 1 || len(s.Accounts) != 2 || len(s.Users) != 1 {
				t.Errorf("stored: %s; want one user with two accounts and the one session", show(s))
			}
		}},

		{group: "webAuthn", name: "register_then_authenticate", run: func(t *testing.T, e *env) {
			a, u, au := e.registeredPasskey(t)
			if acc := e.getAccount(t, "pk-account", passkeyProvider); acc == nil || acc.UserID != u.ID || acc.Type != core.AccountTypeWebAuthn {
				t.Errorf("account = %s, want the user's webauthn account", show(acc))
			}
			user, got, err := a.AuthenticateWebAuthn(e.ctx, au.CredentialID, au.Counter+1)
			if err != nil {
				t.Fatal(err)
			}
			if user.ID != u.ID || got.Counter != au.Counter+1 {
				t.Errorf("authenticated %s with %s, want user %s and counter %d", show(user), show(got), u.ID, au.Counter+1)
			}
			if stored := e.getAuthenticator(t, au.CredentialID); stored == nil || stored.Counter != au.Counter+1 {
				t.Errorf("stored authenticator = %s, want counter %d", show(stored), au.Counter+1)
			}
		}},
		{group: "webAuthn", name: "counter_must_increase", run: func(t *testing.T, e *env) {
			a, _, au := e.registeredPasskey(t)
			before := e.state(t)
			for _, c := range []int64{au.Counter, au.Counter - 1, 0} {
				_, _, err := a.AuthenticateWebAuthn(e.ctx, au.CredentialID, c)
				expectErr(t, "a counter that did not increase", err, auth.ErrCounterNotIncreased)
			}
			e.expectUnchanged(t, before, "the rejected authentications")
		}},
		{group: "webAuthn", name: "zero_counters_accepted", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			au := e.newAuthenticator(u.ID, "pk-account")
			au.Counter = 0
			if _, err := a.RegisterAuthenticator(e.ctx, passkeyProvider, au); err != nil {
				t.Fatal(err)
			}
			if _, _, err := a.AuthenticateWebAuthn(e.ctx, au.CredentialID, 0); err != nil {
				t.Errorf("an authenticator without a counter (both 0): %v", err)
			}
		}},
		{group: "webAuthn", name: "account_of_another_user_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u1, u2 := e.newUser(), e.newUser()
			e.createUser(t, u1)
			e.createUser(t, u2)
			if _, err := a.RegisterAuthenticator(e.ctx, passkeyProvider, e.newAuthenticator(u1.ID, "pk-account")); err != nil {
				t.Fatal(err)
			}
			before := e.state(t)
			_, err := a.RegisterAuthenticator(e.ctx, passkeyProvider, e.newAuthenticator(u2.ID, "pk-account"))
			expectErr(t, "registering for u2 under u1's webauthn account", err, auth.ErrAccountNotLinked)
			e.expectUnchanged(t, before, "the rejected registration")
		}},
		{group: "webAuthn", name: "second_authenticator_reuses_the_account", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser()
			e.createUser(t, u)
			for range 2 {
				if _, err := a.RegisterAuthenticator(e.ctx, passkeyProvider, e.newAuthenticator(u.ID, "pk-account")); err != nil {
					t.Fatal(err)
				}
			}
			if s := e.state(t); len(s.Accounts) != 1 || len(s.Authenticators) != 2 {
				t.Errorf("stored: %s; want one webauthn account and two authenticators", show(s))
			}
		}},
		{group: "webAuthn", name: "unknown_user_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u := e.newUser() // never created
			before := e.state(t)
			_, err := a.RegisterAuthenticator(e.ctx, passkeyProvider, e.newAuthenticator(u.ID, "pk-account"))
			expectErr(t, "registering for an unknown user", err, core.ErrNotFound)
			e.expectUnchanged(t, before, "the rejected registration")
		}},
		{group: "webAuthn", name: "authenticators_listed_by_user", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			u1, u2 := e.newUser(), e.newUser()
			e.createUser(t, u1)
			e.createUser(t, u2)
			au := e.newAuthenticator(u1.ID, "pk-1")
			for _, x := range []core.Authenticator{au, e.newAuthenticator(u2.ID, "pk-2")} {
				if _, err := a.RegisterAuthenticator(e.ctx, passkeyProvider, x); err != nil {
					t.Fatal(err)
				}
			}
			got, err := a.Authenticators(e.ctx, u1.ID)
			if err != nil || len(got) != 1 || got[0].CredentialID != au.CredentialID {
				t.Errorf("Authenticators(u1) = %s, %v; want u1's one authenticator", show(got), err)
			}
			if got, err := a.Authenticators(e.ctx, e.newUser().ID); err != nil || len(got) != 0 {
				t.Errorf("Authenticators(unknown user) = %s, %v; want none", show(got), err)
			}
		}},
		{group: "webAuthn", name: "raced_or_replayed_assertion_fails", extension: core.ExtensionAdvanceAuthenticatorCounter, run: func(t *testing.T, e *env) {
			a, _, au := e.registeredPasskey(t)
			const n = 20
			errs := make([]error, n)
			concurrently(n, func(i int) {
				_, _, errs[i] = a.AuthenticateWebAuthn(e.ctx, au.CredentialID, au.Counter+1)
			})
			passed := 0
			for _, err := range errs {
				if err == nil {
					passed++
				} else {
					expectErr(t, "a losing concurrent assertion", err, auth.ErrCounterNotIncreased)
				}
			}
			if passed != 1 {
				t.Errorf("%d of %d concurrent assertions with the same counter passed, want exactly 1", passed, n)
			}
			for _, c := range []int64{au.Counter + 1, au.Counter} {
				_, _, err := a.AuthenticateWebAuthn(e.ctx, au.CredentialID, c)
				expectErr(t, fmt.Sprintf("a replayed assertion with counter %d", c), err, auth.ErrCounterNotIncreased)
			}
			if stored := e.getAuthenticator(t, au.CredentialID); stored == nil || stored.Counter != au.Counter+1 {
				t.Errorf("stored authenticator = %s, want counter %d", show(stored), au.Counter+1)
			}
		}},
		{group: "oauthSignIn", name: "failed_link_leaves_no_user", needs: []core.Method{deleteUser}, run: func(t *testing.T, e *env) {
			full, ok := e.adapter.(core.Adapter)
			if !ok {
				t.Skipf("adapter %T does not implement every method (core.Adapter), which the failing wrapper embeds", e.adapter)
			}
			injected := errors.New("injected linkAccount failure")
			a := e.newAuth(t, newClock(), authOptions{adapter: failingLinker{Adapter: full, err: injected}})
			before := e.state(t)
			in, err := a.SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-4242", "octo@example.com", nil))
			if !errors.Is(err, injected) {
				t.Fatalf("sign-in whose link fails = %s, %v; want the link's error", show(in), err)
			}
			e.expectUnchanged(t, before, "a sign-in whose linkAccount failed")
			// The address is free: signing in again, with a working link,
			// creates the user and the account.
			in, err = e.newAuth(t, newClock(), authOptions{}).SignInWithOAuth(e.ctx, oauthCallback(githubProvider, "gh-4242", "octo@example.com", nil))
			if err != nil || !in.IsNewUser {
				t.Fatalf("sign-in after the failed one = %s, %v; want a new user", show(in), err)
			}
			if s := e.state(t); len(s.Users) != 1 || len(s.Accounts) != 1 || s.Accounts[0].UserID != in.User.ID {
				t.Errorf("stored: %s; want the one user with its account", show(s))
			}
		}},
		{group: "webAuthn", name: "unknown_credential_rejected", run: func(t *testing.T, e *env) {
			a := e.newAuth(t, newClock(), authOptions{})
			_, _, err := a.AuthenticateWebAuthn(e.ctx, "no-such-credential", 1)
			if !errors.Is(err, auth.ErrUnknownAuthenticator) {
				t.Errorf("unknown credential: %v, want ErrUnknownAuthenticator", err)
			}
		}},
	}
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
