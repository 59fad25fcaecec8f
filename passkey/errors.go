package passkey

import (
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/internal/refusal"
)

// The checks a ceremony can fail (package refusal documents each). A
// refusal is returned as auth.Fail(auth.CodeWebAuthnVerification, …)
// wrapping one of them: see refuse.
var (
	errInvalidAction      = refusal.ErrInvalidAction
	errNotAllowed         = refusal.ErrNotAllowed
	errInvalidEmail       = refusal.ErrInvalidEmail
	errInvalidCredential  = refusal.ErrInvalidCredential
	errChallengeMissing   = refusal.ErrChallengeMissing
	errChallengeExpired   = refusal.ErrChallengeExpired
	errChallengeMismatch  = refusal.ErrChallengeMismatch
	errChallengeReused    = refusal.ErrChallengeReused
	errOriginMismatch     = refusal.ErrOriginMismatch
	errRPIDMismatch       = refusal.ErrRPIDMismatch
	errVerificationFailed = refusal.ErrVerificationFailed
	errUnknownCredential  = refusal.ErrUnknownCredential
)

// refuse reports a failed check: detail wraps one of the errors above.
// An error that already carries a code (core/auth's) keeps it.
func refuse(detail error) error {
	return auth.Fail(auth.CodeWebAuthnVerification, detail)
}
