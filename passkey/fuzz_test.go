package passkey_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/passkey/passkeytest"
)

// FuzzCallback posts arbitrary actions and credential JSON with genuine
// challenge cookies: the callback must not panic, must fail with one of
// its typed errors unless the credential verifies, and a failure must
// store nothing (no authenticator for the registration, the sign-in's counter
// unchanged).
func FuzzCallback(f *testing.F) {
	e := passkeytest.NewEnv(f, memory.New())
	key := e.NewAuthenticator()
	e.SignUp("fuzz@example.com", key)
	newcomer := e.NewUser("new@example.com")
	reg, regCookies := e.MustOptions("action=register", &newcomer)
	in, inCookies := e.MustOptions("", nil)
	other := e.NewAuthenticator()
	f.Add("register", e.Create(other, reg, passkeytest.Ceremony{Origin: passkeytest.Origin}))
	f.Add("authenticate", e.Get(key, in, passkeytest.Ceremony{Origin: passkeytest.Origin}))
	f.Add("authenticate", `{"id":"","rawId":"","type":"public-key","response":{}}`)
	f.Add("register", `{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA"}}`)
	f.Add("", "null")
	typed := []error{
		passkey.ErrInvalidAction, passkey.ErrInvalidCredential, passkey.ErrChallengeMismatch, passkey.ErrOriginMismatch,
		passkey.ErrRPIDMismatch, passkey.ErrVerificationFailed, passkey.ErrUnknownCredential, passkey.ErrCounterNotIncreased,
		passkey.ErrChallengeReused,
	}
	var signedUp atomic.Bool // a genuine registration (the first seed) may succeed
	f.Fuzz(func(t *testing.T, action, data string) {
		e := &passkeytest.Env{T: t, Store: e.Store, Auth: e.Auth, Client: e.Client}
		before := e.StoredCounter(key)
		for i, cookies := range [][]*http.Cookie{regCookies, inCookies} {
			var as *core.User
			if i == 0 {
				as = &newcomer
			}
			s, err := e.Callback(cookies, action, data, as)
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
			if !known {
				t.Fatalf("untyped error for %q %q: %v", action, data, err)
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
