package passkey_test

import (
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/passkey/passkeytest"
)

// BenchmarkSignIn measures one passkey sign-in on the memory adapter:
// options, the authenticator's assertion, and the callback (signature
// verified by go-webauthn, counter advanced); the handler's sealing of the
// challenge is not part of it.
func BenchmarkSignIn(b *testing.B) {
	e := passkeytest.NewEnv(b, memory.New())
	key := e.NewAuthenticator()
	e.SignUp("bench@example.com", key)
	for b.Loop() {
		if _, err := e.SignIn(key, passkeytest.Ceremony{}); err != nil {
			b.Fatal(err)
		}
	}
}
