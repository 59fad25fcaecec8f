package handlersec

// These tests drive core/auth's password sign-in directly (no handler) over
// the memory adapter, which core's own module cannot import.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
)

// secFixture is password sign-in over the memory adapter, recording every
// mail, event and callback argument (as JSON) it sees.
type secFixture struct {
	a     *auth.Auth
	store *memory.Adapter
	mu    sync.Mutex
	mails []provider.VerificationRequest
	seen  []string // JSON of every event and callback argument
}

func (f *secFixture) record(what string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(err.Error())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, what+": "+string(b))
}

func (f *secFixture) mailList() []provider.VerificationRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]provider.VerificationRequest(nil), f.mails...)
}

func newSecFixture(t *testing.T, strategy auth.Strategy, configure func(*provider.PasswordConfig), more ...func(*auth.Config)) *secFixture {
	t.Helper()
	h, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	f := &secFixture{store: memory.New()}
	pc := provider.Password("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.mails = append(f.mails, r)
		return nil
	})
	pc.Codes, pc.Usernames, pc.Hasher = true, true, h
	if configure != nil {
		configure(pc)
	}
	cfg := auth.Config{Adapter: f.store, Providers: []provider.Provider{pc}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"},
		BaseURL: "https://app.example/auth", Session: auth.SessionOptions{Strategy: strategy},
		Callbacks: auth.Callbacks{
			SignIn: func(_ context.Context, p auth.SignInParams) (auth.SignInDecision, error) {
				f.record("signIn callback", p)
				return auth.SignInDecision{}, nil
			},
			JWT: func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
				f.record("jwt callback", p)
				return p.Token, nil
			},
		},
		Events: auth.Events{
			SignIn:      func(_ context.Context, e auth.SignInEvent) error { f.record("signIn event", e); return nil },
			CreateUser:  func(_ context.Context, u core.User) error { f.record("createUser event", u); return nil },
			UpdateUser:  func(_ context.Context, u core.User) error { f.record("updateUser event", u); return nil },
			LinkAccount: func(_ context.Context, e auth.LinkAccountEvent) error { f.record("linkAccount event", e); return nil },
		}}
	for _, m := range more {
		m(&cfg)
	}
	f.a, err = auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// noHash fails the test when any recorded value holds a password hash.
func (f *secFixture) noHash(t *testing.T, what string, v any) {
	t.Helper()
	f.record(what, v)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.seen {
		if strings.Contains(s, "$argon2id$") {
			t.Errorf("a password hash reached application code: %s", s)
		}
	}
	f.seen = nil
}

// TestPasswordHashReachesNoApplicationCode: the sign-in result, the
// SignIn event, the callbacks and the account readers never carry the
// password hash, at sign-up (username-only, and with
// AllowUnverifiedSignIn) and at sign-in, with both session strategies.
func TestPasswordHashReachesNoApplicationCode(t *testing.T) {
	ctx := context.Background()
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		f := newSecFixture(t, strategy, func(pc *provider.PasswordConfig) { pc.AllowUnverifiedSignIn = true })
		for _, id := range []auth.Identity{{Username: "zed"}, {Email: "zoe@example.com"}} {
			res, err := f.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: id, Password: "zed-password-123"})
			if err != nil || res.SignIn == nil {
				t.Fatalf("%v sign-up %+v: %v, %+v; want a sign-in", strategy, id, err, res)
			}
			f.noHash(t, "sign-up result", res.SignIn)
			ident := id.Username + id.Email
			si, err := f.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: ident, Password: "zed-password-123"})
			if err != nil {
				t.Fatalf("%v sign-in %q: %v", strategy, ident, err)
			}
			f.noHash(t, "sign-in result", si)
			accounts, err := f.a.Accounts(ctx, si.User.ID)
			if err != nil || len(accounts) != 1 {
				t.Fatalf("Accounts: %v, %v; want the password account", accounts, err)
			}
			f.noHash(t, "Accounts", accounts)
			acc, err := f.a.Account(ctx, accounts[0].Key())
			if err != nil || acc == nil {
				t.Fatalf("Account: %v, %v", acc, err)
			}
			f.noHash(t, "Account", acc)
			stored, _ := f.store.GetAccount(ctx, si.User.ID, core.PasswordProvider)
			if stored == nil || stored.PasswordHash == nil || !strings.HasPrefix(*stored.PasswordHash, "$argon2id$") {
				t.Fatalf("the stored account %+v has no argon2id hash: the test would prove nothing", stored)
			}
			var buf bytes.Buffer
			slog.New(slog.NewJSONHandler(&buf, nil)).Info("account", "account", *stored)
			if strings.Contains(buf.String(), "$argon2id$") || !strings.Contains(buf.String(), `"hasPasswordHash":true`) {
				t.Errorf("slog of an account: %s; want it without the hash, saying it has one", buf.String())
			}
		}
	}
}

// TestUnlinkCountsPasswordOnlyWithAnIdentifier: a password account is a
// way in only for a user with an address or a username; for a user with
// neither, unlinking the last other account is refused.
func TestUnlinkCountsPasswordOnlyWithAnIdentifier(t *testing.T) {
	ctx := context.Background()
	f := newSecFixture(t, auth.StrategyDatabase, nil)
	hash := "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
	for _, tc := range []struct {
		user      core.User
		refused   bool
		situation string
	}{
		{core.User{ID: "unlink-nobody"}, true, "no address, no username"},
		{core.User{ID: "unlink-named", Username: "unlinkme"}, false, "a username"},
		{core.User{ID: "unlink-mailed", Email: "unlink@example.com"}, false, "an address"},
	} {
		if _, err := f.store.CreateUser(ctx, tc.user); err != nil {
			t.Fatal(err)
		}
		pwAcc := core.Account{UserID: tc.user.ID, Provider: core.PasswordProvider, Type: core.AccountTypeCredentials, ProviderAccountID: tc.user.ID, PasswordHash: &hash}
		if _, err := f.store.LinkAccount(ctx, pwAcc); err != nil {
			t.Fatal(err)
		}
		other := core.Account{UserID: tc.user.ID, Provider: "password", Type: core.AccountTypeCredentials, ProviderAccountID: "x-" + tc.user.ID}
		if _, err := f.store.LinkAccount(ctx, other); err != nil {
			t.Fatal(err)
		}
		_, err := f.a.UnlinkAccount(ctx, tc.user.ID, other.Key())
		if got := errors.Is(err, auth.ErrLastSignInMethod); got != tc.refused {
			t.Errorf("unlinking the other account of a password user with %s: %v; want refused = %v", tc.situation, err, tc.refused)
		}
	}
}

// TestUnverifiedSignInsResendOncePerCodeLifetime: correct-password
// sign-ins to an unverified account send the verification e-mail again at
// most once per code lifetime (counting the sign-up's), so that at most
// one code is alive: the older one has expired when a new one is sent.
func TestUnverifiedSignInsResendOncePerCodeLifetime(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	f := newSecFixture(t, auth.StrategyDatabase, nil, func(c *auth.Config) {
		c.Now, c.RateLimiter = clock, ratelimit.NewMemory(ratelimit.WithClock(clock))
	})
	const addr = "resend@example.com"
	if _, err := f.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: addr}, Password: "owner-pass-123", Binding: "b"}); err != nil {
		t.Fatal(err)
	}
	signIns := func() {
		for range 50 {
			if _, err := f.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: addr, Password: "owner-pass-123", Binding: "b"}); auth.CodeOf(err) != auth.CodeCredentialsSignin {
				t.Fatalf("sign-in before verifying: %v; want CredentialsSignin", err)
			}
		}
	}
	signIns()
	if n := len(f.mailList()); n != 1 {
		t.Fatalf("50 sign-ins right after the sign-up sent %d e-mails in all; want the sign-up's only", n)
	}
	clockMu.Lock()
	now = now.Add(provider.DefaultCodeMaxAge)
	clockMu.Unlock()
	signIns()
	mails := f.mailList()
	if len(mails) != 2 {
		t.Fatalf("50 sign-ins a code lifetime later sent %d e-mails in all; want one more", len(mails))
	}
	if _, err := f.a.Passwords().VerifyEmail(ctx, addr, auth.Proof{Code: mails[0].Code, Binding: "b"}); auth.CodeOf(err) != auth.CodeVerification {
		t.Errorf("the older code: %v; want Verification (expired)", err)
	}
	if _, err := f.a.Passwords().VerifyEmail(ctx, addr, auth.Proof{Code: mails[1].Code, Binding: "b"}); err != nil {
		t.Errorf("the newest code: %v; want a sign-in", err)
	}
}
