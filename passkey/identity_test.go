package passkey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/passkeytest"
)

// failingAuthenticators is the memory adapter whose createAuthenticator
// fails: the second write of a registration, which a real store can fail
// (a lost connection) after the first succeeded.
type failingAuthenticators struct{ *memory.Adapter }

func (failingAuthenticators) CreateAuthenticator(context.Context, core.Authenticator) (*core.Authenticator, error) {
	return nil, errors.New("connection reset by peer")
}

// A registration whose authenticator cannot be stored leaves no webauthn
// account behind.
func TestRegistrationAllOrNothing(t *testing.T) {
	store := failingAuthenticators{memory.New()}
	e := passkeytest.NewEnv(t, store)
	user := e.NewUser("ada@example.com")
	sa := e.NewAuthenticator()
	o, challenge := e.MustOptions("action=register", &user)
	if _, err := e.Callback(challenge, "register", e.Create(sa, o, passkeytest.Ceremony{Origin: passkeytest.Origin}), &user); err == nil || auth.CodeOf(err) != auth.CodeConfiguration {
		t.Fatalf("the registration with a failing createAuthenticator: %v, want a store failure", err)
	}
	acc, err := store.GetAccount(context.Background(), sa.CredentialID(), "passkey")
	if err != nil || acc != nil {
		t.Fatalf("a webauthn account is left without its authenticator: %+v, %v", acc, err)
	}
	if list, err := store.ListAuthenticatorsByUserID(context.Background(), user.ID); err != nil || len(list) != 0 {
		t.Fatalf("authenticators %+v, %v", list, err)
	}
}
