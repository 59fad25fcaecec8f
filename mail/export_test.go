package mail

// The detail sentinels, for this package's external tests.
var (
	ErrAuthFailed   = errAuthFailed
	ErrInsecureAuth = errInsecureAuth
)
