package passkey_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/internal/refusal"
	"github.com/authport/authport/passkey/passkeytest"
)

// FuzzCallback posts arbitrary actions and credential JSON with genuine
// challenges: the callback must not panic, must fail with one of its
// checks (and the WebAuthnVerificationError code) unless the credential
// verifies, and a failure must store nothing (no authenticator for the registration, the sign-in's counter
// unchanged).
func FuzzCallback(f *testing.F) {
	e := passkeytest.NewEnv(f, memory.New())
	key := e.NewAuthenticator()
	e.SignUp("fuzz@example.com", key)
	newcomer := e.NewUser("new@example.com")
	reg, regChallenge := e.MustOptions("action=register", &newcomer)
	in, inChallenge := e.MustOptions("", nil)
	other := e.NewAuthenticator()
	f.Add("register", e.Create(other, reg, passkeytest.Ceremony{Origin: passkeytest.Origin}))
	f.Add("authenticate", e.Get(key, in, passkeytest.Ceremony{Origin: passkeytest.Origin}))
	f.Add("authenticate", `{"id":"","rawId":"","type":"public-key","response":{}}`)
	f.Add("register", `{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA"}}`)
	f.Add("", "null")
	typed := []error{
		refusal.ErrInvalidAction, refusal.ErrInvalidCredential, refusal.ErrChallengeMismatch, refusal.ErrOriginMismatch,
		refusal.ErrRPIDMismatch, refusal.ErrVerificationFailed, refusal.ErrUnknownCredential, core.ErrCounterNotIncreased,
		refusal.ErrChallengeReused,
	}
	var signedUp atomic.Bool // a genuine registration (the first seed) may succeed
	f.Fuzz(func(t *testing.T, action, data string) {
		e := &passkeytest.Env{T: t, Store: e.Store, Auth: e.Auth, Client: e.Client}
		before := e.StoredCounter(key)
		for i, challenge := range []string{regChallenge, inChallenge} {
			var as *core.User
			if i == 0 {
				as = &newcomer
			}
			s, err := e.Callback(challenge, action, data, as)
			if err == nil {
				if s == nil {
					t.Fatal("no error and no sign-in")
				}
				if i == 0 {
					signedUp.Store(true)
				}
				continue
			}
			known := false
			for _, want := range typed {
				known = known || errors.Is(err, want)
			}
			if !known || auth.CodeOf(err) != auth.CodeWebAuthnVerification {
				t.Fatalf("untyped error for %q %q: %v (code %s)", action, data, err, auth.CodeOf(err))
			}
		}
		list, err := e.Store.ListAuthenticatorsByUserID(context.Background(), newcomer.ID)
		if err != nil || (len(list) != 0 && !signedUp.Load()) {
			t.Fatalf("a refused registration stored an authenticator: %+v, %v", list, err)
		}
		if got := e.StoredCounter(key); got < before {
			t.Fatalf("counter went back from %d to %d", before, got)
		}
	})
}
