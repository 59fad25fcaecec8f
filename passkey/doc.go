// Package passkey runs the WebAuthn ceremonies of Auth.js's WebAuthn
// provider (passkeys) with github.com/go-webauthn/webauthn: the options
// route ({base}/webauthn-options/{provider}) and the callback that
// registers a new authenticator or signs in with one
// ({base}/callback/{provider}), plus the browser script of the default
// sign-in page.
//
// Authenticators are stored through the adapter of a core/auth [auth.Auth]
// as Auth.js stores them: credential id and COSE public key in standard
// base64, the credential id also as the webauthn account's
// providerAccountId, the signature counter, credentialBackedUp,
// credentialDeviceType ("singleDevice" or "multiDevice") and the
// comma-joined transports. Every sign-in advances the stored counter, which
// must increase (core/auth checks and sets it atomically where the adapter
// can), so a replayed assertion is refused.
//
// Like golang.org/x/oauth2, the package keeps no state between the two
// steps of a ceremony and writes no cookies: [Passkeys.Options] returns
// the challenge to remember, and [Passkeys.Callback] takes it back. The
// HTTP handler (module github.com/authport/authport/handler) mounts the
// routes, calls a [*Passkeys] through its Passkeys interface, and keeps
// the challenge in Auth.js's challenge cookie (authjs.challenge,
// __Secure- on https), sealed with the Auth's secrets and living
// [Passkeys.Timeout]; this package does not depend on it.
//
// With core/auth's second factors on, a passkey also answers as a second
// factor: [Passkeys.SecondFactorOptions] and [Passkeys.VerifySecondFactor]
// run the ceremony for a pending sign-in or a re-authentication, allowing
// only the user's passkey factors and requiring user verification. An
// ordinary sign-in passes the assertion's user verified flag to core/auth,
// for which a passkey that verified its user is two factors in one.
//
// A refused ceremony is an [*auth.Error] whose code,
// [auth.CodeWebAuthnVerification] (or the one core/auth gave it), is what
// the handler shows; its detail says which check failed. Configuration
// errors match [core.ErrInvalidConfig]; a replayed assertion matches
// [core.ErrCounterNotIncreased].
//
// The examples (example_test.go, run by go test) show the API: ExampleNew
// makes the ceremonies and asks for options, Example_ceremony adds a
// passkey and signs in with it (passkeytest's software authenticator
// standing in for the browser), and ExamplePasskeys_Callback_refused
// reads the code of a refusal.
package passkey
