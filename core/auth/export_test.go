package auth

// ErrUnknownAuthenticator lets the tests check that a passkey sign-in was
// refused for its unknown credential.
var ErrUnknownAuthenticator = errUnknownAuthenticator
