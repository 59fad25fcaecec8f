package auth

import (
	"errors"
)

// Code says why a sign-in failed, in Auth.js's words: it is the value of
// the error parameter of the sign-in and error pages, and of the "error"
// field of a JSON answer. [CodeOf] reads it from any error.
type Code string

// The codes of a failed sign-in.
const (
	// CodeConfiguration: the server is at fault (configuration, store or
	// network failure); the user cannot fix it by trying again.
	CodeConfiguration Code = "Configuration"
	// CodeAccessDenied: the application's SignIn callback refused the
	// sign-in (see [Callbacks]).
	CodeAccessDenied Code = "AccessDenied"
	// CodeVerification: an e-mail sign-in link is unknown, used or
	// expired.
	CodeVerification Code = "Verification"
	// CodeOAuthSignin: an OAuth or OIDC sign-in could not be started
	// (discovery failed, an authorization parameter cannot be sent).
	CodeOAuthSignin Code = "OAuthSignin"
	// CodeOAuthCallback: the provider's callback failed a check (state,
	// PKCE, nonce, id_token, a replayed callback), reported an error, or
	// its code or profile could not be used.
	CodeOAuthCallback Code = "OAuthCallbackError"
	// CodeOAuthAccountNotLinked: the provider account's e-mail address
	// belongs to another user, and linking is not allowed.
	CodeOAuthAccountNotLinked Code = "OAuthAccountNotLinked"
	// CodeEmailSignin: an e-mail sign-in could not be sent (an address
	// that is not one, a delivery failure).
	CodeEmailSignin Code = "EmailSignin"
	// CodeCredentialsSignin: the credentials provider's Authorize refused
	// the credentials.
	CodeCredentialsSignin Code = "CredentialsSignin"
	// CodeWebAuthnVerification: a passkey registration or assertion
	// failed a check (challenge, origin, signature, counter, unknown
	// credential).
	CodeWebAuthnVerification Code = "WebAuthnVerificationError"
	// CodeBadRequest: the input cannot be used (an address or username
	// that is not one, a password the policy refuses, a taken username).
	// Not an Auth.js code; nothing was changed.
	CodeBadRequest Code = "BadRequest"
	// CodeSecondFactor: a second factor was refused (a wrong, replayed or
	// expired code, a passkey that is not one of the user's factors), or
	// the pending sign-in it answers is expired, used or not this
	// browser's. Not an Auth.js code; nothing was changed but the attempt
	// count.
	CodeSecondFactor Code = "SecondFactor"
)

// Error is a sign-in that failed for a reason the user, the browser or the
// provider caused, as opposed to a failure of the server. Code is what the
// handler shows; Err is the detail (which check failed, and its cause),
// for logs: it may name a provider or a cookie, never a token, code or
// secret. Nothing was written to the store for it.
//
// Test for a kind with [CodeOf], or errors.Is with an *Error holding only
// the code:
//
//	if auth.CodeOf(err) == auth.CodeVerification { … }
//	if errors.Is(err, &auth.Error{Code: auth.CodeVerification}) { … }
type Error struct {
	Code Code
	Err  error
}

// Error gives the detail; the code alone when there is none.
func (e *Error) Error() string {
	if e.Err == nil {
		return string(e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the detail.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same Code without detail,
// so that errors.Is tests for a kind:
//
//	errors.Is(err, &auth.Error{Code: auth.CodeVerification})
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Err == nil && t.Code == e.Code
}

// Fail returns an [*Error] with the code and the detail: the helper
// authport's sign-in modules (oauth, passkey, handler) report their
// refusals with. An err that already carries a code keeps it.
func Fail(code Code, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: code, Err: err}
}

// coded returns a sentinel carrying a code: the detail of the refusals
// core/auth reports, which errors.Is still tells apart.
func coded(code Code, msg string) *Error { return &Error{Code: code, Err: errors.New(msg)} }

// CodeOf returns the [Code] of the first [*Error] in err's chain: "" for a
// nil err, [CodeConfiguration] for an error that carries none (a store,
// configuration or network failure).
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != "" {
		return e.Code
	}
	return CodeConfiguration
}
