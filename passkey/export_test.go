package passkey

// The checks a ceremony can fail, for the tests to tell them apart.
var (
	ErrInvalidAction      = errInvalidAction
	ErrNotAllowed         = errNotAllowed
	ErrInvalidEmail       = errInvalidEmail
	ErrInvalidCredential  = errInvalidCredential
	ErrChallengeMissing   = errChallengeMissing
	ErrChallengeExpired   = errChallengeExpired
	ErrChallengeMismatch  = errChallengeMismatch
	ErrChallengeReused    = errChallengeReused
	ErrOriginMismatch     = errOriginMismatch
	ErrRPIDMismatch       = errRPIDMismatch
	ErrVerificationFailed = errVerificationFailed
	ErrUnknownCredential  = errUnknownCredential
)
