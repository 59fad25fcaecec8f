// Package refusal names the checks a passkey ceremony can fail, for the
// passkey package to wrap in its errors and for its tests (and
// passkeytest's scenarios) to tell them apart with errors.Is. An
// application tells a refusal by its code, auth.CodeWebAuthnVerification.
package refusal

// Check is a check a ceremony failed: an error whose text is "passkey: "
// followed by the check's. The checks are the constants below; a refusal
// wraps one of them, and errors.Is compares it with each by value.
type Check string

// Error is "passkey: " and what the check found wrong.
func (c Check) Error() string { return "passkey: " + string(c) }

// The checks of the ceremonies. On every one of them nothing was stored
// and the stored counter is unchanged.
const (
	// ErrInvalidAction: the action is neither "register" nor
	// "authenticate", or differs from the one the options were made for.
	ErrInvalidAction Check = "invalid WebAuthn action"
	// ErrNotAllowed: the options request asks for a ceremony Auth.js does
	// not allow: registering with the e-mail address of an existing user
	// while not signed in, or registering without an e-mail address.
	ErrNotAllowed Check = "WebAuthn ceremony not allowed"
	// ErrInvalidEmail: the e-mail address given for a registration is not
	// an address.
	ErrInvalidEmail Check = "invalid e-mail address"
	// ErrInvalidCredential: the posted "data" is missing, is not JSON, or
	// is not a WebAuthn credential of the expected kind.
	ErrInvalidCredential Check = "invalid WebAuthn credential JSON"
	// ErrChallengeMissing: no challenge was remembered for the callback,
	// or what was remembered holds none.
	ErrChallengeMissing Check = "WebAuthn challenge missing or invalid; request new options"
	// ErrChallengeExpired: the challenge is past the ceremony timeout.
	ErrChallengeExpired Check = "WebAuthn challenge expired; request new options"
	// ErrChallengeMismatch: the credential signs another challenge than
	// the remembered one, or the challenge was made for another user or
	// provider.
	ErrChallengeMismatch Check = "WebAuthn challenge mismatch"
	// ErrChallengeReused: the challenge already served a verified
	// ceremony of this Passkeys (a replayed or raced callback with the
	// same remembered challenge).
	ErrChallengeReused Check = "WebAuthn challenge already used; request new options"
	// ErrOriginMismatch: the browser reports an origin that is not one of
	// the relying party's origins.
	ErrOriginMismatch Check = "WebAuthn origin mismatch"
	// ErrRPIDMismatch: the authenticator data is scoped to another relying
	// party id.
	ErrRPIDMismatch Check = "WebAuthn relying party id mismatch"
	// ErrVerificationFailed: the credential failed another check of
	// go-webauthn (signature, flags, attestation, algorithm…).
	ErrVerificationFailed Check = "WebAuthn verification failed"
	// ErrUnknownCredential: no stored authenticator has the credential
	// id, or, for a second factor, the credential is not one of the
	// user's passkey factors.
	ErrUnknownCredential Check = "unknown WebAuthn credential"
	// ErrUserNotVerified: a second-factor assertion without the user
	// verified flag (UV): the authenticator proved possession but not
	// the user (a PIN or biometric), which a second factor requires.
	ErrUserNotVerified Check = "WebAuthn user verification required"
)
