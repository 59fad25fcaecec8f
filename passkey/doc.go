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
// The state a ceremony keeps between the options and the callback is
// Auth.js's challenge cookie (authjs.challenge, __Secure- on https),
// sealed with the jwt module's codec and living [Config.Timeout].
//
// The HTTP handler (module github.com/authport/authport/handler) mounts the
// routes and calls a [*Passkeys] through its Passkeys interface; this
// package does not depend on it.
package passkey
