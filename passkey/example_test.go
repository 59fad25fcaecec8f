package passkey_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/url"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/passkey/passkeytest"
)

// Configure core/auth with the passkey provider (newAuth, below, lists
// provider.Passkey() among auth.Config's Providers) and make the
// ceremonies. The handler module mounts them (handler.Config.Passkeys)
// and keeps the challenge in Auth.js's sealed challenge cookie; here the
// options are asked for directly. The relying party is the base URL's
// host, as in Auth.js.
func ExampleNew() {
	a := newAuth(memory.New(), "https://example.com/auth")
	pk, err := passkey.New(passkey.Config{Auth: a})
	if err != nil {
		log.Fatal(err)
	}
	// A signed-in user (as the handler finds them) adds a passkey.
	user := &core.User{ID: "0b8c2a54-3f1d-4e7a-9c35-2f5d0e6b1a77", Email: "ada@example.com"}
	body, challenge, err := pk.Options(context.Background(), "passkey", url.Values{"action": {"register"}}, user)
	if err != nil {
		log.Fatal(err)
	}
	var decoded struct {
		Action  string
		Options struct {
			RP struct{ ID, Name string }
		}
	}
	raw, _ := json.Marshal(body)
	_ = json.Unmarshal(raw, &decoded)
	fmt.Println(decoded.Action, decoded.Options.RP.ID)
	fmt.Println(challenge != "", pk.Timeout())
	// Output:
	// register example.com
	// true 5m0s
}

// A refused ceremony is an *auth.Error with Auth.js's code, which the
// handler shows; the detail says which check failed.
func ExamplePasskeys_Callback_refused() {
	a := newAuth(memory.New(), "https://example.com/auth")
	pk, err := passkey.New(passkey.Config{Auth: a})
	if err != nil {
		log.Fatal(err)
	}
	// A callback with nothing remembered (no challenge cookie).
	form := url.Values{"action": {"authenticate"}, "data": {"{}"}}
	_, err = pk.Callback(context.Background(), "passkey", form, "", nil)
	fmt.Println(auth.CodeOf(err))
	// Output:
	// WebAuthnVerificationError
}

// A passkey added by a signed-in user, then a sign-in with it alone, with
// the software authenticator of passkeytest standing in for the browser.
// (Signing up with a passkey while signed out would create a user holding
// an address nobody has proven; it is refused unless
// auth.Config.AllowDangerousUnverifiedEmail is set.)
func Example_ceremony() {
	store := memory.New()
	a := newAuth(store, passkeytest.BaseURL) // http://localhost:3000/auth
	pk, err := passkey.New(passkey.Config{Auth: a})
	if err != nil {
		log.Fatal(err)
	}
	client := passkeytest.Client{Passkeys: pk, BaseURL: passkeytest.BaseURL, Provider: "passkey"}
	key, err := passkeytest.NewAuthenticator()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// The user an e-mail sign-in made, now signed in.
	now := time.Now()
	user, err := store.CreateUser(ctx, core.User{ID: "0b8c2a54-3f1d-4e7a-9c35-2f5d0e6b1a77", Email: "ada@example.com", EmailVerified: &now})
	if err != nil {
		log.Fatal(err)
	}
	o, challenge, err := client.Options(ctx, "action=register", user)
	if err != nil {
		log.Fatal(err)
	}
	data, err := key.Create(o, passkeytest.Ceremony{Origin: passkeytest.Origin})
	if err != nil {
		log.Fatal(err)
	}
	up, err := client.Callback(ctx, challenge, o.Action, data, user)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Action, up.User.Email, up.IsNewUser)

	o, challenge, err = client.Options(ctx, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	data, err = key.Get(o, passkeytest.Ceremony{Origin: passkeytest.Origin})
	if err != nil {
		log.Fatal(err)
	}
	in, err := client.Callback(ctx, challenge, o.Action, data, nil)
	if err != nil {
		log.Fatal(err)
	}
	stored, _ := store.GetAuthenticator(ctx, key.CredentialID())
	fmt.Println(o.Action, in.User.ID == up.User.ID, stored.Counter)
	// Output:
	// register ada@example.com false
	// authenticate true 1
}

// newAuth configures core/auth over store with the passkey provider, the
// JWT session strategy and baseURL, as an application using passkeys does.
func newAuth(store *memory.Adapter, baseURL string) *auth.Auth {
	a, err := auth.New(auth.Config{
		Adapter:   store,
		Providers: []provider.Provider{provider.Passkey()},
		Secrets:   []string{"a-long-random-secret-of-32-bytes-or-more"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   baseURL,
	})
	if err != nil {
		log.Fatal(err)
	}
	return a
}
