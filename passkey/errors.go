package passkey

import (
	"errors"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// Errors of the ceremonies; match them with errors.Is. On every one of them
// nothing was stored and the stored counter is unchanged.
var (
	// ErrInvalidAction: the action is neither "register" nor
	// "authenticate", or differs from the one the options were made for.
	ErrInvalidAction = errors.New("passkey: invalid WebAuthn action")
	// ErrNotAllowed: the options request asks for a ceremony Auth.js does
	// not allow: registering with the e-mail address of an existing user
	// while not signed in, or registering without an e-mail address.
	ErrNotAllowed = errors.New("passkey: WebAuthn ceremony not allowed")
	// ErrInvalidEmail: the e-mail address given for a registration is not
	// an address.
	ErrInvalidEmail = errors.New("passkey: invalid e-mail address")
	// ErrInvalidCredential: the posted "data" is missing, is not JSON, or is
	// not a WebAuthn credential of the expected kind.
	ErrInvalidCredential = errors.New("passkey: invalid WebAuthn credential JSON")
	// ErrChallengeMissing: the request carries no challenge cookie, or one
	// that was not sealed with the secrets (tampered, or another salt).
	ErrChallengeMissing = errors.New("passkey: WebAuthn challenge cookie missing or invalid; request new options")
	// ErrChallengeExpired: the challenge cookie is past its lifetime.
	ErrChallengeExpired = errors.New("passkey: WebAuthn challenge expired; request new options")
	// ErrChallengeMismatch: the credential signs another challenge than the
	// one in the cookie, or the cookie was made for another user.
	ErrChallengeMismatch = errors.New("passkey: WebAuthn challenge mismatch")
	// ErrChallengeReused: the challenge already served a verified
	// ceremony of this Passkeys (a replayed or raced callback with the
	// same challenge cookie).
	ErrChallengeReused = errors.New("passkey: WebAuthn challenge already used; request new options")
	// ErrOriginMismatch: the browser reports an origin that is not one of
	// the relying party's origins.
	ErrOriginMismatch = errors.New("passkey: WebAuthn origin mismatch")
	// ErrRPIDMismatch: the authenticator data is scoped to another relying
	// party id.
	ErrRPIDMismatch = errors.New("passkey: WebAuthn relying party id mismatch")
	// ErrVerificationFailed: the credential failed another check of
	// go-webauthn (signature, flags, attestation, algorithm…).
	ErrVerificationFailed = errors.New("passkey: WebAuthn verification failed")
	// ErrUnknownCredential: no stored authenticator has the credential id.
	// It is [auth.ErrUnknownAuthenticator].
	ErrUnknownCredential = auth.ErrUnknownAuthenticator
	// ErrCounterNotIncreased: the assertion's signature counter is not
	// above the stored one (a replayed or raced assertion, or a cloned
	// authenticator). It is [core.ErrCounterNotIncreased].
	ErrCounterNotIncreased = core.ErrCounterNotIncreased
	// ErrInvalidConfig: [New] was given an unusable configuration.
	ErrInvalidConfig = errors.New("passkey: invalid configuration")
)
