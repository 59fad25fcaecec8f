package passkey_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/authport/authport/adapters/memory"
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
		Secrets:   []string{"a-long-random-secret"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   "https://example.com/auth",
	})
	if err != nil {
		log.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a, Secrets: []string{"a-long-random-secret"}})
	if err != nil {
		log.Fatal(err)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "https://example.com/auth/webauthn-options/passkey?email=ada@example.com", nil)
	body, err := pk.Options(context.Background(), w, r, "passkey", nil)
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

// A whole sign-up and sign-in, with the software authenticator of
// passkeytest standing in for the browser.
func Example_ceremony() {
	store := memory.New()
	a, err := auth.New(auth.Config{
		Adapter:   store,
		Providers: []provider.Provider{provider.Passkey()},
		Secrets:   []string{"a-long-random-secret"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL:   passkeytest.BaseURL, // http://localhost:3000/auth
	})
	if err != nil {
		log.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a, Secrets: []string{"a-long-random-secret"}})
	if err != nil {
		log.Fatal(err)
	}
	client := passkeytest.Client{Passkeys: pk, BaseURL: passkeytest.BaseURL, Provider: "passkey"}
	key, err := passkeytest.NewAuthenticator()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	o, cookies, err := client.Options(ctx, "email=ada@example.com", nil)
	if err != nil {
		log.Fatal(err)
	}
	data, err := key.Create(o, passkeytest.Ceremony{Origin: passkeytest.Origin})
	if err != nil {
		log.Fatal(err)
	}
	up, _, err := client.Callback(ctx, cookies, o.Action, data, nil)
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
	// register ada@example.com true
	// authenticate true 1
}
