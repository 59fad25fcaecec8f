package auth_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
)

// oauthStub is an adapter for a first OAuth sign-in whose linkAccount
// fails; it records which user was created and deleted.
type oauthStub struct {
	created, deleted string
	// cancel, if set, is called when linkAccount fails, as a deadline
	// that expires during the call would.
	cancel context.CancelFunc
}

func (s *oauthStub) GetUserByAccount(context.Context, core.AccountKey) (*core.User, error) {
	return nil, nil
}
func (s *oauthStub) GetUserByEmail(context.Context, string) (*core.User, error) { return nil, nil }
func (s *oauthStub) CreateUser(_ context.Context, u core.User) (*core.User, error) {
	s.created = u.ID
	return &u, nil
}
func (s *oauthStub) LinkAccount(context.Context, core.Account) (*core.Account, error) {
	if s.cancel != nil {
		s.cancel()
	}
	return nil, errDown
}

// oauthStubWithDelete adds a deleteUser that fails with deleteErr, if set.
type oauthStubWithDelete struct {
	*oauthStub
	deleteErr error
	ctxErr    error // the context's error when DeleteUser was called
}

func (s *oauthStubWithDelete) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	s.ctxErr = ctx.Err()
	if s.deleteErr != nil {
		return nil, s.deleteErr
	}
	s.deleted = id
	return nil, nil
}

func newOAuthJWT(t *testing.T, adapter any) *auth.Auth {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: adapter, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{providers.GitHub("id", "secret")}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func firstSignIn(ctx context.Context, a *auth.Auth) error {
	_, err := a.SignInWithOAuth(ctx, auth.OAuthCallback{ProviderID: "github",
		Profile: provider.User{ID: "gh-1", Email: "a@example.com"}, Tokens: provider.TokenSet{AccessToken: "x"}})
	return err
}

func TestFailedLinkDeletesTheNewUser(t *testing.T) {
	// A context cancelled during the link (the likely cause of a failed
	// link) must not stop the removal.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stub := &oauthStubWithDelete{oauthStub: &oauthStub{cancel: cancel}}
	err := firstSignIn(ctx, newOAuthJWT(t, stub))
	if !errors.Is(err, errDown) {
		t.Fatalf("sign-in whose link fails: %v, want the link's error", err)
	}
	if stub.created == "" || stub.deleted != stub.created {
		t.Errorf("created %q, deleted %q: want the new user deleted", stub.created, stub.deleted)
	}
	if stub.ctxErr != nil {
		t.Errorf("DeleteUser ran with a done context: %v", stub.ctxErr)
	}
}

func TestFailedLinkAndFailedDeleteReportBoth(t *testing.T) {
	errDelete := errors.New("delete failed too")
	stub := &oauthStubWithDelete{oauthStub: &oauthStub{}, deleteErr: errDelete}
	err := firstSignIn(context.Background(), newOAuthJWT(t, stub))
	if !errors.Is(err, errDown) || !errors.Is(err, errDelete) {
		t.Fatalf("sign-in whose link and clean-up fail: %v, want both errors", err)
	}
	var ae *auth.AdapterError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), stub.created) {
		t.Errorf("error %q should name the user left behind", err)
	}
}

func TestFailedLinkWithoutDeleteUserSaysTheUserIsLeft(t *testing.T) {
	stub := &oauthStub{}
	err := firstSignIn(context.Background(), newOAuthJWT(t, stub))
	if !errors.Is(err, errDown) {
		t.Fatalf("sign-in whose link fails: %v, want the link's error", err)
	}
	if !strings.Contains(err.Error(), "no deleteUser") || !strings.Contains(err.Error(), stub.created) {
		t.Errorf("error %q should say that the new user is left without an account", err)
	}
}

// advancerStub has the methods of WebAuthn authentication plus the atomic
// counter extension; the two-call path must not be taken.
type advancerStub struct {
	t       *testing.T
	au      core.Authenticator
	advance func(int64) (*core.Authenticator, error)
}

func (s *advancerStub) AdvanceAuthenticatorCounter(_ context.Context, _ string, c int64) (*core.Authenticator, error) {
	return s.advance(c)
}
func (s *advancerStub) GetAuthenticator(context.Context, string) (*core.Authenticator, error) {
	s.t.Error("GetAuthenticator called although the adapter advances counters atomically")
	return &s.au, nil
}
func (s *advancerStub) UpdateAuthenticatorCounter(context.Context, string, int64) (*core.Authenticator, error) {
	s.t.Error("UpdateAuthenticatorCounter called although the adapter advances counters atomically")
	return &s.au, nil
}

// The methods core/auth requires of a WebAuthn provider's adapter, which a
// sign-in does not call.
func (s *advancerStub) CreateUser(context.Context, core.User) (*core.User, error) {
	s.t.Error("CreateUser called by a sign-in")
	return nil, errDown
}
func (s *advancerStub) LinkAccount(context.Context, core.Account) (*core.Account, error) {
	s.t.Error("LinkAccount called by a sign-in")
	return nil, errDown
}
func (s *advancerStub) GetAccount(context.Context, string, string) (*core.Account, error) {
	s.t.Error("GetAccount called by a sign-in")
	return nil, errDown
}
func (s *advancerStub) CreateAuthenticator(context.Context, core.Authenticator) (*core.Authenticator, error) {
	s.t.Error("CreateAuthenticator called by a sign-in")
	return nil, errDown
}
func (s *advancerStub) ListAuthenticatorsByUserID(context.Context, string) ([]core.Authenticator, error) {
	s.t.Error("ListAuthenticatorsByUserID called by a sign-in")
	return nil, errDown
}
func (s *advancerStub) GetUser(_ context.Context, id string) (*core.User, error) {
	return &core.User{ID: id, Email: id + "@example.com"}, nil
}

func TestSignInWithPasskeyUsesTheAtomicAdvance(t *testing.T) {
	stub := &advancerStub{t: t, au: core.Authenticator{CredentialID: "c", UserID: "u", Counter: 5, ProviderAccountID: "c"}}
	a, err := auth.New(auth.Config{Adapter: stub, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{provider.Passkey()}})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Capabilities().HasExtension(core.ExtensionAdvanceAuthenticatorCounter) {
		t.Fatal("Capabilities does not list the extension")
	}
	ctx := context.Background()
	var advanced int64
	stub.advance = func(c int64) (*core.Authenticator, error) {
		au := stub.au
		au.Counter = c
		advanced = c
		return &au, nil
	}
	if si, err := a.SignInWithPasskey(ctx, "passkey", "c", 6, nil); err != nil || si.User.ID != "u" || advanced != 6 || si.Account == nil || si.Account.ProviderAccountID != "c" {
		t.Errorf("SignInWithPasskey = %+v, %v (advanced to %d); want user u, counter 6", si, err, advanced)
	}
	for adapterErr, want := range map[error]struct {
		err  error
		code auth.Code
	}{
		fmt.Errorf("x: %w", core.ErrCounterNotIncreased): {core.ErrCounterNotIncreased, auth.CodeWebAuthnVerification},
		fmt.Errorf("x: %w", core.ErrNotFound):            {auth.ErrUnknownAuthenticator, auth.CodeWebAuthnVerification},
		errDown:                                          {errDown, auth.CodeConfiguration},
	} {
		stub.advance = func(int64) (*core.Authenticator, error) { return nil, adapterErr }
		if _, err := a.SignInWithPasskey(ctx, "passkey", "c", 6, nil); !errors.Is(err, want.err) || auth.CodeOf(err) != want.code {
			t.Errorf("adapter error %v: SignInWithPasskey = %v, want one matching %v (%s)", adapterErr, err, want.err, want.code)
		}
	}
	stub.advance = func(int64) (*core.Authenticator, error) { return nil, nil }
	if _, err := a.SignInWithPasskey(ctx, "passkey", "c", 6, nil); err == nil {
		t.Error("an advance returning nothing and no error was accepted")
	}
}
