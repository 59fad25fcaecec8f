package passkey_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/passkey/passkeytest"
)

// Configure core/auth with the passkey provider and make the ceremonies.
// The handler module mounts them; here the options route is called
// directly. The relying party is the base URL's host, as in Auth.js.
func ExampleNew() {
	a, err := auth.New(auth.Config{
		Adapter:   memory.New(),
		Providers: []provider.Provider{provider.Passkey()},
		Secrets:   []string{"a-long-random-secret-of-32-bytes-or-more"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   "https://example.com/auth",
	})
	if err != nil {
		log.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a})
	if err != nil {
		log.Fatal(err)
	}
	w := httptest.NewRecorder()
	// A signed-in user (as the handler finds them) adds a passkey.
	user := &core.User{ID: "0b8c2a54-3f1d-4e7a-9c35-2f5d0e6b1a77", Email: "ada@example.com"}
	r := httptest.NewRequest(http.MethodGet, "https://example.com/auth/webauthn-options/passkey?action=register", nil)
	body, err := pk.Options(context.Background(), w, r, "passkey", user)
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
	cookie := w.Result().Cookies()[0]
	fmt.Println(decoded.Action, decoded.Options.RP.ID)
	fmt.Println(cookie.Name, cookie.HttpOnly, cookie.Secure)
	// Output:
	// register example.com
	// __Secure-authjs.challenge true true
}

// A passkey added by a signed-in user, then a sign-in with it alone, with
// the software authenticator of passkeytest standing in for the browser.
// (Signing up with a passkey while signed out would create a user holding
// an address nobody has proven; it is refused unless
// auth.Config.AllowDangerousUnverifiedEmail is set.)
func Example_ceremony() {
	store := memory.New()
	a, err := auth.New(auth.Config{
		Adapter:   store,
		Providers: []provider.Provider{provider.Passkey()},
		Secrets:   []string{"a-long-random-secret-of-32-bytes-or-more"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   passkeytest.BaseURL, // http://localhost:3000/auth
	})
	if err != nil {
		log.Fatal(err)
	}
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
	o, cookies, err := client.Options(ctx, "action=register", user)
	if err != nil {
		log.Fatal(err)
	}
	data, err := key.Create(o, passkeytest.Ceremony{Origin: passkeytest.Origin})
	if err != nil {
		log.Fatal(err)
	}
	up, _, err := client.Callback(ctx, cookies, o.Action, data, user)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Action, up.User.Email, up.IsNewUser)

	o, cookies, err = client.Options(ctx, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	data, err = key.Get(o, passkeytest.Ceremony{Origin: passkeytest.Origin})
	if err != nil {
		log.Fatal(err)
	}
	in, _, err := client.Callback(ctx, cookies, o.Action, data, nil)
	if err != nil {
		log.Fatal(err)
	}
	stored, _ := store.GetAuthenticator(ctx, key.CredentialID())
	fmt.Println(o.Action, in.User.ID == up.User.ID, stored.Counter)
	// Output:
	// register ada@example.com false
	// authenticate true 1
}
