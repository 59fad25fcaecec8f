package tokens

import (
	"errors"
	"fmt"
	"net/http"
)

// The error codes of RFC 6749 §5.2 (token endpoint), §4.1.2.1
// (authorization endpoint) and RFC 7009 §2.2.1 that the issuer answers
// with.
const (
	CodeInvalidRequest          = "invalid_request"
	CodeInvalidClient           = "invalid_client"
	CodeInvalidGrant            = "invalid_grant"
	CodeUnauthorizedClient      = "unauthorized_client"
	CodeUnsupportedGrantType    = "unsupported_grant_type"
	CodeUnsupportedResponseType = "unsupported_response_type"
	CodeInvalidScope            = "invalid_scope"
	CodeServerError             = "server_error"
	CodeInvalidToken            = "invalid_token" // RFC 6750 §3.1
)

// Error is a refusal in OAuth 2.0's terms: an RFC 6749 error code and a
// sentence for the developer of the client (error_description). Every
// refusal of the issuer's methods is an *Error; other errors are failures
// of the store or the configuration (the HTTP layer answers them with
// server_error and logs them). Test with errors.As, or errors.Is against
// an *Error with the same Code.
type Error struct {
	// Code is the RFC 6749 error code, e.g. [CodeInvalidGrant].
	Code string `json:"error"`
	// Description says what was wrong, for the client's developer; it
	// never holds a token.
	Description string `json:"error_description,omitempty"`
}

// Error returns "tokens: code: description".
func (e *Error) Error() string { return "tokens: " + e.Code + ": " + e.Description }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Status is the HTTP status RFC 6749 §5.2 gives the code: 401 for
// invalid_client, 500 for server_error, 400 for the others.
func (e *Error) Status() int {
	switch e.Code {
	case CodeInvalidClient:
		return http.StatusUnauthorized
	case CodeServerError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

func refuse(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}

// AsError returns err as an *Error: itself when it is one, else
// server_error (the store or the configuration failed; the cause is for
// the logs, not the client).
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeServerError, Description: "the token service failed; try again later"}
}

// ErrSignInRequired is what [Issuer.Authorize] returns for a valid request
// when no user is signed in: the caller sends the browser to the sign-in
// page and back.
var ErrSignInRequired = errors.New("tokens: the authorization request needs a signed-in user")
