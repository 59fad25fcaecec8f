package auth_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
)

// pwStore is an in-memory store of the writes password sign-up and reset
// make, whose methods fail while fails[method] > 0 (counted down per
// call): the store failing in the middle of a flow. The methods the flows
// do not call are the nil embedded Adapter's. It is safe for core/auth's
// background retries.
type pwStore struct {
	core.Adapter
	mu       sync.Mutex
	fails    map[core.Method]int
	users    map[string]core.User
	accounts map[string]core.Account // password accounts, by user id
	tokens   map[core.VerificationTokenKey]core.VerificationToken
	sessions map[string]core.Session
}

func newPWStore() *pwStore {
	return &pwStore{fails: map[core.Method]int{}, users: map[string]core.User{}, accounts: map[string]core.Account{},
		tokens: map[core.VerificationTokenKey]core.VerificationToken{}, sessions: map[string]core.Session{}}
}

// failing reports whether this call of m fails; the caller holds mu.
func (s *pwStore) failing(m core.Method) error {
	if s.fails[m] > 0 {
		s.fails[m]--
		return errDown
	}
	return nil
}

func (s *pwStore) failNext(m core.Method, n int) {
	s.mu.Lock()
	s.fails[m] = n
	s.mu.Unlock()
}

func (s *pwStore) CreateUser(_ context.Context, u core.User) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failing(core.MethodCreateUser); err != nil {
		return nil, err
	}
	s.users[u.ID] = u
	return &u, nil
}

func (s *pwStore) GetUser(_ context.Context, id string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[id]; ok {
		return &u, nil
	}
	return nil, nil
}

func (s *pwStore) GetUserByEmail(_ context.Context, email string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u.Email == email {
			return &u, nil
		}
	}
	return nil, nil
}

func (s *pwStore) UpdateUser(_ context.Context, up core.UserUpdate) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failing(core.MethodUpdateUser); err != nil {
		return nil, err
	}
	u, ok := s.users[up.ID]
	if !ok {
		return nil, nil
	}
	up.EmailVerified.Apply(&u.EmailVerified)
	s.users[u.ID] = u
	return &u, nil
}

func (s *pwStore) DeleteUser(_ context.Context, id string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failing(core.MethodDeleteUser); err != nil {
		return nil, err
	}
	u, ok := s.users[id]
	if !ok {
		return nil, nil
	}
	delete(s.users, id)
	delete(s.accounts, id)
	for k, v := range s.sessions {
		if v.UserID == id {
			delete(s.sessions, k)
		}
	}
	return &u, nil
}

func (s *pwStore) LinkAccount(_ context.Context, a core.Account) (*core.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failing(core.MethodLinkAccount); err != nil {
		return nil, err
	}
	s.accounts[a.UserID] = a
	return &a, nil
}

func (s *pwStore) GetAccount(_ context.Context, userID, provider string) (*core.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.accounts[userID]; ok && a.Provider == provider {
		return &a, nil
	}
	return nil, nil
}

func (s *pwStore) SwapPasswordHash(_ context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failing(core.MethodSwapPasswordHash); err != nil {
		return nil, err
	}
	a, ok := s.accounts[key.ProviderAccountID]
	if !ok {
		return nil, nil
	}
	if a.PasswordHash == nil || *a.PasswordHash != oldHash {
		return &a, core.ErrPasswordHashChanged
	}
	a.PasswordHash = &newHash
	s.accounts[a.UserID] = a
	return &a, nil
}

func (s *pwStore) CreateSession(_ context.Context, se core.Session) (*core.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions[se.SessionToken] = se
	return &se, nil
}

func (s *pwStore) DeleteSessionsByUserID(_ context.Context, userID, except string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failing(core.MethodDeleteSessionsByUserID); err != nil {
		return 0, err
	}
	n := 0
	for k, v := range s.sessions {
		if v.UserID == userID && k != except {
			delete(s.sessions, k)
			n++
		}
	}
	return n, nil
}

func (s *pwStore) CreateVerificationToken(_ context.Context, v core.VerificationToken) (*core.VerificationToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failing(core.MethodCreateVerificationToken); err != nil {
		return nil, err
	}
	k := core.VerificationTokenKey{Identifier: v.Identifier, Token: v.Token}
	if _, ok := s.tokens[k]; ok {
		return nil, core.ErrAlreadyExists
	}
	s.tokens[k] = v
	return &v, nil
}

func (s *pwStore) UseVerificationToken(_ context.Context, k core.VerificationTokenKey) (*core.VerificationToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.tokens[k]
	if !ok {
		return nil, nil
	}
	delete(s.tokens, k)
	return &v, nil
}

// counts returns how many users, tokens and sessions the store holds.
func (s *pwStore) counts() (users, tokens, sessions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.users), len(s.tokens), len(s.sessions)
}

var (
	_ core.PasswordHashSwapper   = (*pwStore)(nil)
	_ core.SessionsByUserDeleter = (*pwStore)(nil)
)

// pwApp is core/auth with a password provider (a cheap Argon2id) and
// database sessions on a pwStore; e-mails are kept.
type pwApp struct {
	a    *auth.Auth
	s    *pwStore
	mu   sync.Mutex
	sent []provider.VerificationRequest
}

func newPWApp(t *testing.T) *pwApp {
	t.Helper()
	app := &pwApp{s: newPWStore()}
	h, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	pc := provider.Password("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
		app.mu.Lock()
		app.sent = append(app.sent, r)
		app.mu.Unlock()
		return nil
	})
	pc.Hasher = h
	app.a, err = auth.New(auth.Config{Adapter: app.s, Providers: []provider.Provider{pc}, Secrets: []string{strings.Repeat("s", 32)},
		BaseURL: "https://app.example/auth", Session: auth.SessionOptions{Strategy: auth.StrategyDatabase}})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// last returns the last e-mail of the purpose, failing t when none.
func (app *pwApp) last(t *testing.T, purpose provider.Purpose) provider.VerificationRequest {
	t.Helper()
	app.mu.Lock()
	defer app.mu.Unlock()
	for i := len(app.sent) - 1; i >= 0; i-- {
		if app.sent[i].Purpose == purpose {
			return app.sent[i]
		}
	}
	t.Fatalf("no %q e-mail among %d", purpose, len(app.sent))
	return provider.VerificationRequest{}
}

// eventually polls cond for up to 10 s (core/auth's background retries
// wait at most a second between tries).
func eventually(cond func() bool) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

const (
	pwOld = "correct horse battery"
	pwNew = "a new staple for the horse"
)

// signedUp signs up and verifies ada@example.com, then signs in once
// more: two sessions.
func (app *pwApp) signedUp(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "ada@example.com"}, Password: pwOld}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.a.Passwords().VerifyEmail(ctx, "ada@example.com", auth.Proof{Token: app.last(t, provider.PurposeVerifyEmail).Token, Password: pwOld}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "ada@example.com", Password: pwOld}); err != nil {
		t.Fatal(err)
	}
}

// A sign-up whose verification token cannot be stored removes its user
// (the removal failing twice at first: retried in the background), so
// that the same sign-up again sends a verification e-mail. Without the
// removal the user stays with its password and no way to verify, and the
// sign-up again only mails the owner that the address is taken.
func TestSignUpWithoutItsVerificationIsUndone(t *testing.T) {
	ctx := context.Background()
	app := newPWApp(t)
	app.s.failNext(core.MethodCreateVerificationToken, 1)
	app.s.failNext(core.MethodDeleteUser, 2)
	_, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "ada@example.com"}, Password: pwOld})
	if !errors.Is(err, errDown) {
		t.Fatalf("sign-up whose token cannot be stored: %v; want its error", err)
	}
	if !eventually(func() bool { u, _, _ := app.s.counts(); return u == 0 }) {
		t.Fatal("the user of the failed sign-up is still there 10 s later")
	}
	if _, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "ada@example.com"}, Password: pwOld, Binding: "browser"}); err != nil {
		t.Fatal(err)
	}
	mail := app.last(t, provider.PurposeVerifyEmail)
	if _, err := app.a.Passwords().VerifyEmail(ctx, "ada@example.com", auth.Proof{Token: mail.Token, Binding: "browser"}); err != nil {
		t.Errorf("verifying the sign-up made again: %v", err)
	}
}

// A reset whose swap fails puts the used token back (the put-back failing
// once at first: retried in the background), and the same link resets the
// password once the store answers. Without it the link is used up and the
// password unchanged.
func TestResetWhoseSwapFailsKeepsItsLink(t *testing.T) {
	ctx := context.Background()
	app := newPWApp(t)
	app.signedUp(t)
	if err := app.a.Passwords().RequestReset(ctx, "ada@example.com", ""); err != nil {
		t.Fatal(err)
	}
	link := app.last(t, provider.PurposeResetPassword).Token
	_, tokensBefore, _ := app.s.counts()
	app.s.failNext(core.MethodSwapPasswordHash, 1)
	app.s.failNext(core.MethodCreateVerificationToken, 1)
	if err := app.a.Passwords().Reset(ctx, "ada@example.com", auth.Proof{Token: link}, pwNew); !errors.Is(err, errDown) {
		t.Fatalf("reset whose swap fails: %v; want its error", err)
	}
	if !eventually(func() bool { _, n, _ := app.s.counts(); return n == tokensBefore }) {
		t.Fatal("the reset link's token was not put back within 10 s")
	}
	if err := app.a.Passwords().Reset(ctx, "ada@example.com", auth.Proof{Token: link}, pwNew); err != nil {
		t.Fatalf("the same link once the store answers: %v", err)
	}
	if _, err := app.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "ada@example.com", Password: pwNew}); err != nil {
		t.Errorf("sign-in with the new password: %v", err)
	}
}

// A reset whose deleteSessionsByUserId fails after the swap says so, and
// the sessions end once the store answers (retried in the background).
func TestResetEndsTheSessionsOnceTheStoreAnswers(t *testing.T) {
	ctx := context.Background()
	app := newPWApp(t)
	app.signedUp(t)
	if _, _, n := app.s.counts(); n != 2 {
		t.Fatalf("%d sessions before the reset; want 2", n)
	}
	if err := app.a.Passwords().RequestReset(ctx, "ada@example.com", ""); err != nil {
		t.Fatal(err)
	}
	app.s.failNext(core.MethodDeleteSessionsByUserID, 3)
	err := app.a.Passwords().Reset(ctx, "ada@example.com", auth.Proof{Token: app.last(t, provider.PurposeResetPassword).Token}, pwNew)
	if !errors.Is(err, errDown) || !strings.Contains(err.Error(), "the password was changed") {
		t.Fatalf("reset whose session revocation fails: %v; want its error, saying the password was changed", err)
	}
	if !eventually(func() bool { _, _, n := app.s.counts(); return n == 0 }) {
		t.Fatal("the sessions from before the reset are still there 10 s later")
	}
	if _, err := app.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "ada@example.com", Password: pwNew}); err != nil {
		t.Errorf("sign-in with the new password: %v", err)
	}
}

// A sign-in by verifying the address proves the mailbox, not the
// password: the session records "email", and a step-up asking for a
// recent password is not met by it.
func TestVerifyEmailSignInRecordsEmail(t *testing.T) {
	ctx := context.Background()
	app := newPWApp(t)
	if _, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "ada@example.com"}, Password: pwOld, Binding: "browser"}); err != nil {
		t.Fatal(err)
	}
	si, err := app.a.Passwords().VerifyEmail(ctx, "ada@example.com", auth.Proof{Token: app.last(t, provider.PurposeVerifyEmail).Token, Binding: "browser"})
	if err != nil {
		t.Fatal(err)
	}
	if got := si.Authentication.Methods; !slices.Equal(got, []string{auth.AMREmail}) {
		t.Errorf("amr after verifying the address: %v, want [email]", got)
	}
	if (auth.StepUp{Methods: []string{auth.AMRPassword}}).Satisfied(si.Authentication, time.Now()) {
		t.Error("a step-up asking for a password is met by an e-mail link")
	}
}
