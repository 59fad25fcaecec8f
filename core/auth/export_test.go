package auth

// The detail sentinels, for this package's external tests, which assert
// the exact refusal.
var (
	ErrShortSecret        = errShortSecret
	ErrUnknownProvider    = errUnknownProvider
	ErrWrongProviderType  = errWrongProviderType
	ErrVerificationFailed = errVerificationFailed
	ErrAccessDenied       = errAccessDenied
	ErrAccountNotLinked   = errAccountNotLinked
	ErrProfileInvalid     = errProfileInvalid
	ErrEmailNotVerified   = errEmailNotVerified
	ErrAlreadyUsed        = errAlreadyUsed

	ErrUnknownAuthenticator = errUnknownAuthenticator
)
