package passkeytest

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/passkey/internal/refusal"
)

// The relying party [Run] uses: tests run on http://localhost, which
// browsers treat as a secure context.
const (
	BaseURL = "http://localhost:3000/auth"
	Origin  = "http://localhost:3000"
)

// Store is what [Run] needs of an adapter besides what core/auth requires
// for a WebAuthn provider: lookups to read back what the ceremonies stored.
type Store interface {
	core.UserByEmailGetter
	core.UserCreator
	core.AuthenticatorGetter
	core.AuthenticatorsByUserLister
	core.AccountGetter
}

// Secret is the secret [NewEnv] configures (32 bytes or more, as secrets
// must be).
const Secret = "passkeytest-secret-0123456789abcdef0123"

// Env is one configured library and its ceremonies over a store.
type Env struct {
	T      testing.TB
	Store  Store
	Auth   *auth.Auth
	Client Client
}

// EnvOptions turns on Auth.js's behaviours that authport's defaults refuse.
type EnvOptions struct {
	// AllowDangerousUnverifiedEmail is auth.Config's: signing up with a
	// passkey while signed out.
	AllowDangerousUnverifiedEmail bool
	// ListCredentialsByEmail is passkey.Config's.
	ListCredentialsByEmail bool
	// Now is auth.Config's clock (the challenge cookie's); nil means
	// time.Now.
	Now func() time.Time
	// BaseURL is auth.Config's and the client's base URL; empty means
	// [BaseURL]. Ceremonies under another one pass its origin in their
	// [Ceremony].
	BaseURL string
	// SecondFactors is auth.Config's (passkeys as a second factor need
	// the store's factor methods).
	SecondFactors auth.SecondFactorOptions
	// Strategy is the session strategy; empty means auth.StrategyJWT.
	Strategy auth.Strategy
}

// NewEnv configures core/auth (JWT sessions, the default passkey
// provider, base URL [BaseURL]) and the ceremonies over store, with
// authport's defaults.
func NewEnv(t testing.TB, store Store) *Env {
	t.Helper()
	return NewEnvWith(t, store, EnvOptions{})
}

// NewEnvWith is [NewEnv] with Auth.js's behaviours o turns on.
func NewEnvWith(t testing.TB, store Store, o EnvOptions) *Env {
	t.Helper()
	base := cmp.Or(o.BaseURL, BaseURL)
	a, err := auth.New(auth.Config{
		Adapter:                       store,
		Providers:                     []provider.Provider{provider.Passkey()},
		Secrets:                       []string{Secret},
		Session:                       auth.SessionOptions{Strategy: cmp.Or(o.Strategy, auth.StrategyJWT)},
		BaseURL:                       base,
		AllowDangerousUnverifiedEmail: o.AllowDangerousUnverifiedEmail,
		Now:                           o.Now,
		SecondFactors:                 o.SecondFactors,
	})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a, Timeout: 2 * time.Minute, ListCredentialsByEmail: o.ListCredentialsByEmail})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{T: t, Store: store, Auth: a, Client: Client{Passkeys: pk, BaseURL: base, Provider: "passkey"}}
}

// Instance returns a client of another Passkeys over the same Auth: a
// second instance of the application, which shares the store but not the
// in-process record of used challenges, so that only the store's counter
// stops a replay through it.
func (e *Env) Instance() Client {
	e.T.Helper()
	pk, err := passkey.New(passkey.Config{Auth: e.Auth, Timeout: 2 * time.Minute})
	if err != nil {
		e.T.Fatal(err)
	}
	c := e.Client
	c.Passkeys = pk
	return c
}

// NewAuthenticator returns a new software authenticator or fails the test.
func (e *Env) NewAuthenticator() *Authenticator {
	e.T.Helper()
	a, err := NewAuthenticator()
	if err != nil {
		e.T.Fatal(err)
	}
	return a
}

// MustOptions calls the options route or fails the test.
// It returns the options and the challenge to give to the callback.
func (e *Env) MustOptions(query string, user *core.User) (Options, string) {
	e.T.Helper()
	o, c, err := e.Client.Options(context.Background(), query, user)
	if err != nil {
		e.T.Fatalf("options %q: %v", query, err)
	}
	return o, c
}

// Create answers o with a, or fails the test.
func (e *Env) Create(a *Authenticator, o Options, c Ceremony) string {
	e.T.Helper()
	return e.answer(a.Create, o, c)
}

// Get answers o with a, or fails the test.
func (e *Env) Get(a *Authenticator, o Options, c Ceremony) string {
	e.T.Helper()
	return e.answer(a.Get, o, c)
}

// answer returns the credential JSON ceremony makes for o, or fails the
// test.
func (e *Env) answer(ceremony func(Options, Ceremony) (string, error), o Options, c Ceremony) string {
	e.T.Helper()
	data, err := ceremony(o, c)
	if err != nil {
		e.T.Fatal(err)
	}
	return data
}

// Callback posts the callback route with the challenge the options
// returned.
func (e *Env) Callback(challenge, action, data string, user *core.User) (*auth.SignIn, error) {
	return e.Client.Callback(context.Background(), challenge, action, data, user)
}

// NewUser creates a user with the e-mail address as an e-mail sign-in
// would (address verified), or fails the test.
func (e *Env) NewUser(email string) core.User {
	e.T.Helper()
	normal, err := auth.NormalizeEmail(email)
	if err != nil {
		e.T.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	u, err := e.Store.CreateUser(context.Background(), core.User{ID: core.NewUUID(), Email: normal, EmailVerified: &now})
	if err != nil {
		e.T.Fatal(err)
	}
	return *u
}

// AddPasskey registers a as a passkey of the signed-in user, or fails the
// test.
func (e *Env) AddPasskey(user core.User, a *Authenticator) {
	e.T.Helper()
	o, c := e.MustOptions("action=register", &user)
	s, err := e.Callback(c, o.Action, e.Create(a, o, Ceremony{Origin: Origin}), &user)
	if err != nil {
		e.T.Fatalf("adding a passkey: %v", err)
	}
	if s.IsNewUser || s.User.ID != user.ID {
		e.T.Fatalf("adding a passkey gave %+v", s)
	}
}

// SignUp makes a user with the e-mail address (as an e-mail sign-in
// would) and registers a as its passkey while signed in, or fails the
// test. (Signing up with a passkey alone, while signed out, is refused by
// default; see [EnvOptions].)
func (e *Env) SignUp(email string, a *Authenticator) core.User {
	e.T.Helper()
	u := e.NewUser(email)
	e.AddPasskey(u, a)
	return u
}

// SignIn runs a discoverable sign-in (no e-mail) with a; c.Origin defaults
// to [Origin].
func (e *Env) SignIn(a *Authenticator, c Ceremony) (*auth.SignIn, error) {
	e.T.Helper()
	o, challenge := e.MustOptions("", nil)
	if c.Origin == "" {
		c.Origin = Origin
	}
	return e.Callback(challenge, o.Action, e.Get(a, o, c), nil)
}

// Stored returns a's stored authenticator, or nil.
func (e *Env) Stored(a *Authenticator) *core.Authenticator {
	e.T.Helper()
	s, err := e.Store.GetAuthenticator(context.Background(), a.CredentialID())
	if err != nil {
		e.T.Fatal(err)
	}
	return s
}

// StoredCounter returns a's stored counter, failing the test when a is not
// stored.
func (e *Env) StoredCounter(a *Authenticator) int64 {
	e.T.Helper()
	s := e.Stored(a)
	if s == nil {
		e.T.Fatal("authenticator not stored")
	}
	return s.Counter
}

// Run runs the ceremony scenarios against stores newStore makes (a fresh,
// isolated one per scenario): sign-up and sign-in with what is stored
// checked field by field in Auth.js's encodings, counters that must
// increase (replays, lower and equal counters refused, 0 over 0 allowed),
// racing replays of which exactly one wins, refused assertions and
// registrations that change nothing, and Auth.js's registration rules.
//
// The store's adapter must offer what core/auth needs for WebAuthn, and
// [core.AuthenticatorCounterAdvancer] for the race to have one winner.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	authjs := EnvOptions{AllowDangerousUnverifiedEmail: true, ListCredentialsByEmail: true}
	scenarios := []struct {
		name string
		f    func(t *testing.T, e *Env)
		opts EnvOptions
	}{
		{"RegisterAndAuthenticate", registerAndAuthenticate, EnvOptions{}},
		{"CounterMustIncrease", counterMustIncrease, EnvOptions{}},
		{"CounterZeroAllowed", counterZeroAllowed, EnvOptions{}},
		{"ConcurrentReplays", concurrentReplays, EnvOptions{}},
		{"AuthenticationRefused", authenticationRefused, EnvOptions{}},
		{"RegistrationRules", registrationRules, EnvOptions{}},
		{"RegistrationRefused", registrationRefused, EnvOptions{}},
		{"SignedOutSignUpRefused", signedOutSignUpRefused, EnvOptions{}},
		{"AuthJSSignUp", authJSSignUp, authjs},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			s.f(t, NewEnvWith(t, newStore(t), s.opts))
		})
	}
}

func registerAndAuthenticate(t *testing.T, e *Env) {
	ctx := context.Background()
	sa := e.NewAuthenticator()
	user := e.NewUser("Ada@Example.com")
	o, challenge := e.MustOptions("action=register", &user)
	if o.Action != "register" || o.Options.RP.ID != "localhost" || len(o.Options.Challenge) < 22 || o.Options.User.Name != "ada@example.com" {
		t.Fatalf("options to add a passkey: %+v", o)
	}
	if challenge == "" {
		t.Fatal("options without a challenge to remember")
	}
	s, err := e.Client.Callback(ctx, challenge, "register", e.Create(sa, o, Ceremony{Origin: Origin}), &user)
	if err != nil {
		t.Fatal(err)
	}
	if s.IsNewUser || s.User.ID != user.ID || s.User.Email != "ada@example.com" || s.Session.SessionToken != "" {
		t.Fatalf("registration: %+v", s)
	}
	// What is stored, in Auth.js's encodings.
	credID := base64.StdEncoding.EncodeToString(mustDecode(t, sa.RawCredentialID()))
	a := e.Stored(sa)
	if a == nil {
		t.Fatal("authenticator not stored")
	}
	if a.CredentialID != credID || a.ProviderAccountID != credID || a.UserID != s.User.ID || a.Counter != 0 ||
		a.CredentialDeviceType != "multiDevice" || !a.CredentialBackedUp || a.Transports == nil || *a.Transports != "internal,hybrid" {
		t.Fatalf("stored authenticator: %+v", a)
	}
	if key, err := base64.StdEncoding.DecodeString(a.CredentialPublicKey); err != nil || len(key) < 64 {
		t.Fatalf("stored public key %q: %v", a.CredentialPublicKey, err)
	}
	acc, err := e.Store.GetAccount(ctx, credID, "passkey")
	if err != nil || acc == nil || acc.UserID != s.User.ID || acc.Type != core.AccountTypeWebAuthn {
		t.Fatalf("webauthn account: %+v, %v", acc, err)
	}

	// A discoverable sign-in (no e-mail), then one that gives the e-mail,
	// which changes nothing: the address is not looked up, and no
	// credential ids are given out.
	in, err := e.SignIn(sa, Ceremony{})
	if err != nil {
		t.Fatal(err)
	}
	if in.User.ID != s.User.ID || in.IsNewUser {
		t.Fatalf("sign-in: %+v", in)
	}
	if got := e.StoredCounter(sa); got != 1 {
		t.Fatalf("counter after one sign-in: %d", got)
	}
	o, challenge = e.MustOptions("email=ada@example.com", nil)
	if o.Action != "authenticate" || len(o.Options.AllowCredentials) != 0 {
		t.Fatalf("options for a known e-mail: %+v", o)
	}
	if in, err = e.Callback(challenge, "authenticate", e.Get(sa, o, Ceremony{Origin: Origin}), nil); err != nil || in.User.ID != s.User.ID {
		t.Fatalf("sign-in with e-mail: %+v, %v", in, err)
	}
	if got := e.StoredCounter(sa); got != 2 {
		t.Fatalf("counter after two sign-ins: %d", got)
	}
}

// signedOutSignUpRefused: by default, someone not signed in cannot
// register a passkey for an address (it would create a user holding an
// address nobody proved, which its owner would later sign in to), and the
// options answer the same for an address with an account and one without:
// no lookup, no credential ids.
func signedOutSignUpRefused(t *testing.T, e *Env) {
	ctx := context.Background()
	owner := e.SignUp("owner@example.com", e.NewAuthenticator())
	for _, q := range []string{"action=register&email=victim@example.com", "action=register&email=owner@example.com", "action=register"} {
		if _, _, err := e.Client.Options(ctx, q, nil); !refused(err, refusal.ErrNotAllowed) || !errors.Is(err, auth.ErrUnprovenSignUp) {
			t.Errorf("signed out, %s: %v, want ErrNotAllowed (ErrUnprovenSignUp)", q, err)
		}
	}
	if u, err := e.Store.GetUserByEmail(ctx, "victim@example.com"); err != nil || u != nil {
		t.Fatalf("a user was stored for the victim's address: %+v, %v", u, err)
	}
	// Every other query: one discoverable authentication, whatever the
	// address.
	for _, q := range []string{"", "action=authenticate"} {
		var seen []string
		for _, email := range []string{"", "owner@example.com", "OWNER@example.com", "victim@example.com"} {
			query := q
			if email != "" {
				query += "&email=" + url.QueryEscape(email)
			}
			o, _ := e.MustOptions(strings.TrimPrefix(query, "&"), nil)
			seen = append(seen, fmt.Sprintf("%s allow=%d user=%q", o.Action, len(o.Options.AllowCredentials), o.Options.User.Name))
		}
		for _, got := range seen[1:] {
			if got != seen[0] || !strings.HasPrefix(got, "authenticate allow=0") {
				t.Errorf("query %q: answers differ by address: %v", q, seen)
				break
			}
		}
	}
	// The signed-out registration cannot be pushed through the callback
	// either: core/auth refuses it.
	if _, err := e.Auth.RegisterPasskey(ctx, "passkey", nil, core.User{Email: "victim@example.com"}, core.Authenticator{CredentialID: "eA==", ProviderAccountID: "eA==", CredentialPublicKey: "eA=="}); !refused(err, auth.ErrUnprovenSignUp) {
		t.Errorf("RegisterPasskey signed out: %v", err)
	}
	_ = owner
}

// authJSSignUp: with auth.Config.AllowDangerousUnverifiedEmail and
// passkey.Config.ListCredentialsByEmail, Auth.js's behaviour: someone not
// signed in signs up with an address (the user is created, unverified),
// an address of a user is offered its credentials, an address taken
// between the options and the callback is refused.
func authJSSignUp(t *testing.T, e *Env) {
	ctx := context.Background()
	sa := e.NewAuthenticator()
	o, challenge := e.MustOptions("email=Ada@Example.com", nil)
	if o.Action != "register" || o.Options.User.Name != "ada@example.com" {
		t.Fatalf("options for a new e-mail: %+v", o)
	}
	s, err := e.Callback(challenge, "register", e.Create(sa, o, Ceremony{Origin: Origin}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsNewUser || s.User.Email != "ada@example.com" || s.User.EmailVerified != nil {
		t.Fatalf("sign-up: %+v", s)
	}
	o, challenge = e.MustOptions("email=ada@example.com", nil)
	if o.Action != "authenticate" || len(o.Options.AllowCredentials) != 1 || o.Options.AllowCredentials[0].ID != sa.RawCredentialID() {
		t.Fatalf("options for a known e-mail: %+v", o)
	}
	if in, err := e.Callback(challenge, "authenticate", e.Get(sa, o, Ceremony{Origin: Origin}), nil); err != nil || in.User.ID != s.User.ID {
		t.Fatalf("sign-in with e-mail: %+v, %v", in, err)
	}
	if _, _, err := e.Client.Options(ctx, "action=register&email=ada@example.com", nil); !refused(err, refusal.ErrNotAllowed) {
		t.Errorf("register an existing e-mail: %v", err)
	}
	// Options made for a sign-up, while someone took the address in
	// between: refused at the callback, and nothing is stored.
	o, challenge = e.MustOptions("email=late@example.com", nil)
	if _, err := e.Store.CreateUser(ctx, core.User{ID: core.NewUUID(), Email: "late@example.com"}); err != nil {
		t.Fatal(err)
	}
	late := e.NewAuthenticator()
	if _, err := e.Callback(challenge, "register", e.Create(late, o, Ceremony{Origin: Origin}), nil); !refused(err, errAccountNotLinked) {
		t.Errorf("sign-up with an address taken meanwhile: %v", err)
	}
	if e.Stored(late) != nil {
		t.Error("the refused registration stored its authenticator")
	}
}

func mustDecode(t *testing.T, s string) []byte {
	b, err := b64u.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func counterMustIncrease(t *testing.T, e *Env) {
	sa := e.NewAuthenticator()
	e.SignUp("c@example.com", sa)
	o, challenge := e.MustOptions("", nil)
	data := e.Get(sa, o, Ceremony{Origin: Origin})
	if _, err := e.Callback(challenge, "authenticate", data, nil); err != nil {
		t.Fatal(err)
	}
	// The same assertion again, with its challenge cookie: this instance
	// knows the challenge is used; another one sees the counter did not
	// increase.
	if _, err := e.Callback(challenge, "authenticate", data, nil); !refused(err, refusal.ErrChallengeReused) {
		t.Fatalf("replay: %v", err)
	}
	if _, err := e.Instance().Callback(context.Background(), challenge, "authenticate", data, nil); !refused(err, core.ErrCounterNotIncreased) {
		t.Fatalf("replay through another instance: %v", err)
	}
	// Fresh challenges, but a counter that went back or stayed.
	for _, n := range []uint32{0, 1} {
		if _, err := e.SignIn(sa, Ceremony{Counter: &n}); !refused(err, core.ErrCounterNotIncreased) {
			t.Fatalf("counter %d over 1: %v", n, err)
		}
	}
	if got := e.StoredCounter(sa); got != 1 {
		t.Fatalf("counter changed by refused assertions: %d", got)
	}
	big := uint32(1000)
	if _, err := e.SignIn(sa, Ceremony{Counter: &big}); err != nil {
		t.Fatalf("a higher counter: %v", err)
	}
	if got := e.StoredCounter(sa); got != 1000 {
		t.Fatalf("counter %d, want 1000", got)
	}
}

// An authenticator without a counter reports 0 every time: 0 over 0 is
// allowed (core/auth's rule, as in the WebAuthn spec).
func counterZeroAllowed(t *testing.T, e *Env) {
	sa := e.NewAuthenticator()
	e.SignUp("z@example.com", sa)
	zero := uint32(0)
	for i := range 3 {
		if _, err := e.SignIn(sa, Ceremony{Counter: &zero}); err != nil {
			t.Fatalf("sign-in %d with counter 0: %v", i, err)
		}
	}
	if got := e.StoredCounter(sa); got != 0 {
		t.Fatalf("counter %d", got)
	}
}

func concurrentReplays(t *testing.T, e *Env) {
	sa := e.NewAuthenticator()
	e.SignUp("race@example.com", sa)
	o, challenge := e.MustOptions("", nil)
	data := e.Get(sa, o, Ceremony{Origin: Origin})
	const n = 12
	var wins, refusals atomic.Int32
	errs := make(chan error, n)
	// Each through its own instance, so that the store's counter decides.
	clients := make([]Client, n)
	for i := range clients {
		clients[i] = e.Instance()
	}
	coretest.Concurrently(n, func(i int) {
		_, err := clients[i].Callback(context.Background(), challenge, "authenticate", data, nil)
		switch {
		case err == nil:
			wins.Add(1)
		case refused(err, core.ErrCounterNotIncreased):
			refusals.Add(1)
		default:
			errs <- err
		}
	})
	close(errs)
	for err := range errs {
		t.Errorf("unexpected error: %v", err)
	}
	if wins.Load() != 1 || refusals.Load() != n-1 {
		t.Fatalf("%d wins, %d refused of %d racing replays; want exactly one win", wins.Load(), refusals.Load(), n)
	}
	if got := e.StoredCounter(sa); got != 1 {
		t.Fatalf("counter %d", got)
	}
}

// Every refused assertion leaves the counter as it was.
func authenticationRefused(t *testing.T, e *Env) {
	sa := e.NewAuthenticator()
	user := e.SignUp("r@example.com", sa)
	other := e.NewAuthenticator()
	otherUser := e.SignUp("other@example.com", other)

	cases := []struct {
		name string
		sa   *Authenticator
		c    Ceremony
		want error
	}{
		{"wrong origin", sa, Ceremony{Origin: "http://evil.localhost:3000"}, refusal.ErrOriginMismatch},
		{"wrong RP ID", sa, Ceremony{RPID: "example.com"}, refusal.ErrRPIDMismatch},
		{"other challenge", sa, Ceremony{Challenge: b64u.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))}, refusal.ErrChallengeMismatch},
		{"tampered signature", sa, Ceremony{TamperSignature: true}, refusal.ErrVerificationFailed},
		{"unknown credential", e.NewAuthenticator(), Ceremony{}, refusal.ErrUnknownCredential},
	}
	for _, tc := range cases {
		before := e.StoredCounter(sa)
		if _, err := e.SignIn(tc.sa, tc.c); !refused(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if got := e.StoredCounter(sa); got != before {
			t.Errorf("%s: counter %d -> %d", tc.name, before, got)
		}
	}

	// Another user's passkey while signed in.
	o, challenge := e.MustOptions("", nil)
	if _, err := e.Callback(challenge, "authenticate", e.Get(other, o, Ceremony{Origin: Origin}), &user); !refused(err, errAccountNotLinked) {
		t.Errorf("another user's passkey while signed in: %v", err)
	}
	if got := e.StoredCounter(other); got != 0 {
		t.Errorf("other counter %d", got)
	}
	// The signed-in user's own passkey is fine.
	o, challenge = e.MustOptions("action=authenticate", &otherUser)
	if s, err := e.Callback(challenge, "authenticate", e.Get(other, o, Ceremony{Origin: Origin}), &otherUser); err != nil || s.User.ID != otherUser.ID {
		t.Errorf("own passkey while signed in: %+v, %v", s, err)
	}
}

func registrationRules(t *testing.T, e *Env) {
	ctx := context.Background()
	sa := e.NewAuthenticator()
	user := e.SignUp("owner@example.com", sa)
	opts := func(q string, u *core.User) error { _, _, err := e.Client.Options(ctx, q, u); return err }

	// Not signed in, an existing user's e-mail: registering is refused; no
	// action means sign in.
	if err := opts("action=register&email=owner@example.com", nil); !refused(err, refusal.ErrNotAllowed) {
		t.Errorf("register an existing e-mail: %v", err)
	}
	if o, _ := e.MustOptions("email=OWNER@example.com", nil); o.Action != "authenticate" {
		t.Errorf("no action, existing e-mail: %s", o.Action)
	}
	if err := opts("action=register", nil); !refused(err, refusal.ErrNotAllowed) {
		t.Errorf("register without e-mail: %v", err)
	}
	if err := opts("action=register&email=not-an-address", nil); !refused(err, refusal.ErrInvalidEmail) {
		t.Errorf("bad e-mail: %v", err)
	}
	if err := opts("action=delete", nil); !refused(err, refusal.ErrInvalidAction) {
		t.Errorf("bad action: %v", err)
	}

	// Signed in: a second passkey, with the first one excluded.
	second := e.NewAuthenticator()
	o, challenge := e.MustOptions("action=register", &user)
	if o.Action != "register" || len(o.Options.ExcludeCredentials) != 1 || o.Options.ExcludeCredentials[0].ID != sa.RawCredentialID() {
		t.Fatalf("options to add a passkey: %+v", o)
	}
	s, err := e.Callback(challenge, "register", e.Create(second, o, Ceremony{Origin: Origin}), &user)
	if err != nil || s.User.ID != user.ID || s.IsNewUser {
		t.Fatalf("adding a passkey: %+v, %v", s, err)
	}
	list, err := e.Store.ListAuthenticatorsByUserID(ctx, user.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("authenticators: %+v, %v", list, err)
	}
	if in, err := e.SignIn(second, Ceremony{}); err != nil || in.User.ID != user.ID {
		t.Fatalf("sign-in with the second passkey: %+v, %v", in, err)
	}
	// Signed in with passkeys already, no action: authenticate.
	if o, _ := e.MustOptions("", &user); o.Action != "authenticate" || len(o.Options.AllowCredentials) != 2 {
		t.Errorf("signed in, no action: %+v", o)
	}
	// The same credential registered again: refused, nothing added.
	o, challenge = e.MustOptions("action=register", &user)
	if _, err := e.Callback(challenge, "register", e.Create(second, o, Ceremony{Origin: Origin}), &user); !refused(err, core.ErrAlreadyExists) {
		t.Errorf("registering a stored credential again: %v", err)
	}

}

// A registration that fails verification stores nothing: no account, no
// authenticator.
func registrationRefused(t *testing.T, e *Env) {
	ctx := context.Background()
	cases := []struct {
		name string
		c    Ceremony
		data func(string) string
		want error
	}{
		{name: "wrong-origin", c: Ceremony{Origin: "https://localhost:3000"}, want: refusal.ErrOriginMismatch},
		{name: "wrong-rp-id", c: Ceremony{Origin: Origin, RPID: "evil.example"}, want: refusal.ErrRPIDMismatch},
		{name: "other-challenge", c: Ceremony{Origin: Origin, Challenge: b64u.EncodeToString(make([]byte, 32))}, want: refusal.ErrChallengeMismatch},
		{name: "not-json", c: Ceremony{Origin: Origin}, data: func(string) string { return "{not json" }, want: refusal.ErrInvalidCredential},
		{name: "not-a-credential", c: Ceremony{Origin: Origin}, data: func(string) string { return `{"id":"x"}` }, want: refusal.ErrInvalidCredential},
		{name: "cut-attestation", c: Ceremony{Origin: Origin}, data: func(s string) string {
			return strings.Replace(s, `"attestationObject":"o`, `"attestationObject":"`, 1)
		}, want: refusal.ErrInvalidCredential},
		{name: "empty-data", c: Ceremony{Origin: Origin}, data: func(string) string { return "" }, want: refusal.ErrInvalidCredential},
	}
	for _, tc := range cases {
		user := e.NewUser(tc.name + "@example.com")
		sa := e.NewAuthenticator()
		o, challenge := e.MustOptions("action=register", &user)
		data := e.Create(sa, o, tc.c)
		if tc.data != nil {
			data = tc.data(data)
		}
		if _, err := e.Callback(challenge, "register", data, &user); !refused(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if list, err := e.Store.ListAuthenticatorsByUserID(ctx, user.ID); err != nil || len(list) != 0 {
			t.Errorf("%s: authenticators stored: %+v, %v", tc.name, list, err)
		}
		if e.Stored(sa) != nil {
			t.Errorf("%s: authenticator stored", tc.name)
		}
	}
	// The action must be the one the options were made for.
	user := e.NewUser("act@example.com")
	sa := e.NewAuthenticator()
	o, challenge := e.MustOptions("action=register", &user)
	if _, err := e.Callback(challenge, "authenticate", e.Create(sa, o, Ceremony{Origin: Origin}), &user); !refused(err, refusal.ErrInvalidAction) {
		t.Errorf("action mismatch: %v", err)
	}
	if _, err := e.Callback(challenge, "sign-in", e.Create(sa, o, Ceremony{Origin: Origin}), &user); !refused(err, refusal.ErrInvalidAction) {
		t.Errorf("bad action: %v", err)
	}
	if e.Stored(sa) != nil {
		t.Error("action mismatch: authenticator stored")
	}
}

// refused reports whether err is a refusal for the check (errors.Is) with
// the code a handler shows for it: OAuthAccountNotLinked for a passkey or
// address of another user, WebAuthnVerificationError for every other.
func refused(err, check error) bool {
	want := auth.CodeWebAuthnVerification
	if check == errAccountNotLinked {
		want = auth.CodeOAuthAccountNotLinked
	}
	return errors.Is(err, check) && auth.CodeOf(err) == want
}

// errAccountNotLinked matches, with errors.Is, the refusal of a passkey
// or an address of another user: the kind, as core/auth exports it.
var errAccountNotLinked = &auth.Error{Code: auth.CodeOAuthAccountNotLinked}
