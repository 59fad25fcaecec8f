package passkey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/passkey/passkeytest"
)

// failingAuthenticators is the memory adapter whose createAuthenticator
// fails: the second write of a registration, which a real store can fail
// (a lost connection) after the first succeeded.
type failingAuthenticators struct{ *memory.Adapter }

func (failingAuthenticators) CreateAuthenticator(context.Context, core.Authenticator) (*core.Authenticator, error) {
	return nil, errors.New("connection reset by peer")
}

// Finding 14 of issue 23: a registration whose authenticator cannot be
// stored leaves no webauthn account behind.
func TestRegistrationAllOrNothing(t *testing.T) {
	store := failingAuthenticators{memory.New()}
	e := passkeytest.NewEnv(t, store)
	user := e.NewUser("ada@example.com")
	sa := e.NewAuthenticator()
	o, cookies := e.MustOptions("action=register", &user)
	if _, err := e.Callback(cookies, "register", e.Create(sa, o, passkeytest.Ceremony{Origin: passkeytest.Origin}), &user); err == nil {
		t.Fatal("the registration succeeded with a failing createAuthenticator")
	}
	acc, err := store.GetAccount(context.Background(), sa.CredentialID(), "passkey")
	if err != nil || acc != nil {
		t.Fatalf("a webauthn account is left without its authenticator: %+v, %v", acc, err)
	}
	if list, err := store.ListAuthenticatorsByUserID(context.Background(), user.ID); err != nil || len(list) != 0 {
		t.Fatalf("authenticators %+v, %v", list, err)
	}
}
