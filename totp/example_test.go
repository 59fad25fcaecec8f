package totp_test

import (
	"fmt"
	"log"
	"strings"
	"time"

	otptotp "github.com/pquerna/otp/totp"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/totp"
)

// Wire TOTP into core/auth: auth.Config.SecondFactors.TOTP takes a
// *totp.TOTP, and core/auth enrols keys with NewKey (the QR code and text
// shown on the enrolment page), checks codes with Match and accepts each
// time step once per user. Here the two calls are made directly, with a
// code computed as an authenticator app would.
func Example() {
	codes, err := totp.New(totp.Options{}) // RFC 6238: SHA-1, 6 digits, 30 s, ±1 step
	if err != nil {
		log.Fatal(err)
	}
	a, err := auth.New(auth.Config{
		Adapter:   memory.New(),
		Providers: []provider.Provider{provider.Passkey()},
		Secrets:   []string{"a-long-random-secret-of-32-bytes-or-more"},
		BaseURL:   "https://example.com/auth",
		SecondFactors: auth.SecondFactorOptions{
			Enabled: true,
			TOTP:    codes,
			Issuer:  "Example",
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = a // a.Factors().StartTOTP / ConfirmTOTP / Verify use codes from here on

	key, err := codes.NewKey("Example", "ada@example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(key.URI, "otpauth://totp/Example:ada@example.com?"), len(key.Secret), len(key.QRCode) > 0)

	now := time.Now()
	code, err := otptotp.GenerateCode(key.Text, now) // what the app shows
	if err != nil {
		log.Fatal(err)
	}
	step, ok := codes.Match(key.Secret, code, now)
	fmt.Println(ok, step == now.Unix()/30)
	_, ok = codes.Match(key.Secret, "12345", now) // a code of the wrong length
	fmt.Println(ok)
	// Output:
	// true 20 true
	// true true
	// false
}
