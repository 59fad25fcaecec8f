package oauth

// The details of the flow's errors, for the package's external tests,
// which assert the exact check that failed.
var (
	ErrDiscovery        = errDiscovery
	ErrStateMissing     = errStateMissing
	ErrStateMismatch    = errStateMismatch
	ErrVerifierMissing  = errVerifierMissing
	ErrNonceMissing     = errNonceMissing
	ErrNonceMismatch    = errNonceMismatch
	ErrIDTokenMissing   = errIDTokenMissing
	ErrIDTokenInvalid   = errIDTokenInvalid
	ErrProviderError    = errProviderError
	ErrInvalidParams    = errInvalidParams
	ErrInvalidCallback  = errInvalidCallback
	ErrTokenExchange    = errTokenExchange
	ErrUserinfo         = errUserinfo
	ErrProfile          = errProfile
	ErrCallbackReplayed = errCallbackReplayed

	ErrNoAccount      = errNoAccount
	ErrNoRefreshToken = errNoRefreshToken
	ErrInvalidGrant   = errInvalidGrant
)
