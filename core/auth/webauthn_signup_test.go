package auth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// signupStub keeps users, accounts and authenticators in maps, with
// failures the test sets. (The passkey module runs the same flows against
// real adapters.)
type signupStub struct {
	users          map[string]core.User
	accounts       map[string]core.Account
	authenticators map[string]core.Authenticator
	createUserErr  error
	createAuthErr  error
	deleted        []string
}

func newSignupStub() *signupStub {
	return &signupStub{users: map[string]core.User{}, accounts: map[string]core.Account{}, authenticators: map[string]core.Authenticator{}}
}

// stored stores v under key in m unless err is set.
func stored[T any](m map[string]T, key string, v T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	m[key] = v
	return &v, nil
}

// found returns the record under key in m, or nil.
func found[T any](m map[string]T, key string) (*T, error) {
	if v, ok := m[key]; ok {
		return &v, nil
	}
	return nil, nil
}

func (s *signupStub) CreateUser(_ context.Context, u core.User) (*core.User, error) {
	return stored(s.users, u.ID, u, s.createUserErr)
}
func (s *signupStub) GetUser(_ context.Context, id string) (*core.User, error) {
	return found(s.users, id)
}
func (s *signupStub) GetUserByEmail(_ context.Context, email string) (*core.User, error) {
	for _, u := range s.users {
		if u.Email == email {
			return &u, nil
		}
	}
	return nil, nil
}
func (s *signupStub) DeleteUser(_ context.Context, id string) (*core.User, error) {
	s.deleted = append(s.deleted, id)
	delete(s.users, id)
	for k, a := range s.accounts {
		if a.UserID == id {
			delete(s.accounts, k)
		}
	}
	return nil, nil
}
func (s *signupStub) LinkAccount(_ context.Context, a core.Account) (*core.Account, error) {
	return stored(s.accounts, a.Provider+"/"+a.ProviderAccountID, a, nil)
}
func (s *signupStub) GetAccount(_ context.Context, id, p string) (*core.Account, error) {
	return found(s.accounts, p+"/"+id)
}
func (s *signupStub) CreateAuthenticator(_ context.Context, a core.Authenticator) (*core.Authenticator, error) {
	return stored(s.authenticators, a.CredentialID, a, s.createAuthErr)
}
func (s *signupStub) GetAuthenticator(_ context.Context, id string) (*core.Authenticator, error) {
	return found(s.authenticators, id)
}
func (s *signupStub) ListAuthenticatorsByUserID(context.Context, string) ([]core.Authenticator, error) {
	return []core.Authenticator{}, nil
}
func (s *signupStub) UpdateAuthenticatorCounter(context.Context, string, int64) (*core.Authenticator, error) {
	return nil, errors.New("not used")
}

func testAuthenticator() core.Authenticator {
	return core.Authenticator{CredentialID: "Y3JlZA==", CredentialPublicKey: "a2V5", CredentialDeviceType: "singleDevice", ProviderAccountID: "Y3JlZA==", UserID: "ignored"}
}

func TestRegisterPasskeySignedOut(t *testing.T) {
	ctx := context.Background()
	stub := newSignupStub()
	a := newDangerous(t, stub, provider.Passkey())
	name := "Ada"
	si, err := a.RegisterPasskey(ctx, "passkey", nil, core.User{ID: "ignored", Email: "  Ada@Example.COM ", Name: &name}, testAuthenticator())
	if err != nil {
		t.Fatal(err)
	}
	user := si.User
	if user.ID == "" || user.ID == "ignored" || user.Email != "ada@example.com" || user.EmailVerified != nil || user.Name == nil || *user.Name != "Ada" {
		t.Fatalf("new user %+v", user)
	}
	if !si.IsNewUser || si.KeepSession || si.Account == nil || si.Account.UserID != user.ID || si.Account.ProviderAccountID != "Y3JlZA==" {
		t.Fatalf("sign-up %+v", si)
	}
	if au, ok := stub.authenticators["Y3JlZA=="]; !ok || au.UserID != user.ID {
		t.Fatalf("authenticator %+v for user %s", au, user.ID)
	}
	if acc := stub.accounts["passkey/Y3JlZA=="]; acc.UserID != user.ID || acc.Type != core.AccountTypeWebAuthn {
		t.Fatalf("account %+v", acc)
	}
	if p, err := a.Edge().WebAuthnProvider("passkey"); err != nil || p.UserVerification != provider.UserVerificationPreferred {
		t.Fatalf("WebAuthnProvider: %+v, %v", p, err)
	}
	if u, err := a.UserByEmail(ctx, "ada@example.com"); err != nil || u == nil || u.ID != user.ID {
		t.Fatalf("UserByEmail: %+v, %v", u, err)
	}
	if got, err := a.Edge().WebAuthnAuthenticator(ctx, "Y3JlZA=="); err != nil || got == nil || got.UserID != user.ID {
		t.Fatalf("WebAuthnAuthenticator: %+v, %v", got, err)
	}
	if got, err := a.Edge().WebAuthnAuthenticator(ctx, "bm9uZQ=="); err != nil || got != nil {
		t.Fatalf("WebAuthnAuthenticator of an unknown id: %+v, %v", got, err)
	}

	// The address belongs to a user now: refused, nothing created.
	before := len(stub.users)
	for _, email := range []string{"ada@example.com", "ADA@example.com "} {
		if _, err := a.RegisterPasskey(ctx, "passkey", nil, core.User{Email: email}, testAuthenticator()); !errors.Is(err, auth.ErrAccountNotLinked) || auth.CodeOf(err) != auth.CodeOAuthAccountNotLinked {
			t.Errorf("an existing e-mail %q: %v", email, err)
		}
	}
	if _, err := a.RegisterPasskey(ctx, "passkey", nil, core.User{Email: "not an address"}, testAuthenticator()); !errors.Is(err, core.ErrInvalidInput) || auth.CodeOf(err) != auth.CodeWebAuthnVerification {
		t.Errorf("an invalid e-mail: %v", err)
	}
	if len(stub.users) != before {
		t.Error("a user was created for an existing e-mail")
	}
}

func TestRegisterPasskeySignedOutRefused(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		provider string
		user     core.User
		setup    func(*signupStub)
		want     error
		code     auth.Code
	}{
		"unknown provider":    {provider: "nope", user: core.User{Email: "a@example.com"}, want: auth.ErrUnknownProvider, code: auth.CodeConfiguration},
		"no e-mail":           {provider: "passkey", user: core.User{}, want: core.ErrInvalidInput, code: auth.CodeWebAuthnVerification},
		"created by a racer":  {provider: "passkey", user: core.User{Email: "a@example.com"}, setup: func(s *signupStub) { s.createUserErr = core.ErrAlreadyExists }, want: auth.ErrAccountNotLinked, code: auth.CodeOAuthAccountNotLinked},
		"authenticator fails": {provider: "passkey", user: core.User{Email: "a@example.com"}, setup: func(s *signupStub) { s.createAuthErr = core.ErrAlreadyExists }, want: core.ErrAlreadyExists, code: auth.CodeWebAuthnVerification},
	} {
		stub := newSignupStub()
		if tc.setup != nil {
			tc.setup(stub)
		}
		a := newDangerous(t, stub, provider.Passkey())
		if _, err := a.RegisterPasskey(ctx, tc.provider, nil, tc.user, testAuthenticator()); !errors.Is(err, tc.want) || auth.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %v (%s)", name, err, tc.want, tc.code)
		}
		if len(stub.users) != 0 || len(stub.accounts) != 0 || len(stub.authenticators) != 0 {
			t.Errorf("%s: left %d users, %d accounts, %d authenticators", name, len(stub.users), len(stub.accounts), len(stub.authenticators))
		}
	}
	// The user created before the failure is the one deleted.
	stub := newSignupStub()
	stub.createAuthErr = errors.New("disk full")
	a := newDangerous(t, stub, provider.Passkey())
	if _, err := a.RegisterPasskey(ctx, "passkey", nil, core.User{Email: "b@example.com"}, testAuthenticator()); err == nil || len(stub.deleted) != 1 {
		t.Errorf("failed registration: %v, deleted %v", err, stub.deleted)
	}
	if _, err := a.Edge().WebAuthnProvider("github"); !errors.Is(err, auth.ErrUnknownProvider) {
		t.Errorf("WebAuthnProvider of an unknown id: %v", err)
	}
}
