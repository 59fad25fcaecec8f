package oauth

import (
	"errors"
	"fmt"
)

// Errors of the flow. Every error [Flow.Begin] and [Flow.Callback] return
// for a failed check or a failing provider matches one of them with
// [errors.Is], and a failed check stores nothing.
var (
	// ErrInvalidConfig: [New] was given an unusable [Config].
	ErrInvalidConfig = errors.New("oauth: invalid configuration")
	// ErrDiscovery: the provider's discovery document (wellKnown, or the
	// issuer's /.well-known/openid-configuration) could not be fetched or
	// does not fit the configuration.
	ErrDiscovery = errors.New("oauth: provider discovery failed")
	// ErrStateMissing: the provider uses the state check and the state
	// cookie, or the callback's state parameter, is missing (or the cookie
	// expired after 15 minutes, or was sealed with a secret no longer
	// configured).
	ErrStateMissing = errors.New("oauth: state missing")
	// ErrStateMismatch: the callback's state parameter is not the one sent.
	ErrStateMismatch = errors.New("oauth: state does not match")
	// ErrVerifierMissing: the provider uses PKCE and the code verifier
	// cookie is missing, expired or unreadable.
	ErrVerifierMissing = errors.New("oauth: PKCE code verifier missing")
	// ErrNonceMissing: the provider uses the nonce check and the nonce
	// cookie is missing, expired or unreadable.
	ErrNonceMissing = errors.New("oauth: nonce missing")
	// ErrNonceMismatch: the id_token's nonce is not the one sent.
	ErrNonceMismatch = errors.New("oauth: nonce does not match")
	// ErrIDTokenMissing: an OIDC provider's token response has no
	// id_token. It also matches provider.ErrMissingIDToken.
	ErrIDTokenMissing = errors.New("oauth: id_token missing")
	// ErrIDTokenInvalid: the id_token failed verification (signature
	// against the issuer's keys, iss, aud, exp).
	ErrIDTokenInvalid = errors.New("oauth: id_token invalid")
	// ErrProviderError: the provider redirected back with an error
	// parameter (e.g. access_denied when the user declined). Retrieve the
	// details with errors.As and a [*ProviderError].
	ErrProviderError = errors.New("oauth: the provider returned an error")
	// ErrInvalidParams: an authorization parameter of a sign-in request
	// (see [Flow.Begin]) has a value that cannot be sent.
	ErrInvalidParams = errors.New("oauth: invalid authorization parameter")
	// ErrInvalidCallback: the callback request carries no authorization
	// code.
	ErrInvalidCallback = errors.New("oauth: invalid callback request")
	// ErrTokenExchange: the token endpoint refused the code or failed. An
	// *oauth2.RetrieveError (golang.org/x/oauth2) is in the chain when the
	// endpoint answered with an error.
	ErrTokenExchange = errors.New("oauth: code exchange failed")
	// ErrUserinfo: the userinfo endpoint failed, or its profile could not
	// be used.
	ErrUserinfo = errors.New("oauth: userinfo failed")
	// ErrProfile: the profile callback failed or gave no id.
	ErrProfile = errors.New("oauth: profile could not be mapped")
	// ErrCallbackReplayed: the callback's check values (PKCE verifier,
	// state, nonce) were used by an earlier callback: a replayed callback,
	// refused before the code is exchanged. It also matches
	// auth.ErrAlreadyUsed.
	ErrCallbackReplayed = errors.New("oauth: callback already used")
)

// maxDescription bounds how much of the provider's error_description goes
// into an error message.
const maxDescription = 200

// ProviderError is the error a provider reported on the callback (RFC 6749
// §4.1.2.1). It matches [ErrProviderError].
type ProviderError struct {
	// ProviderID is the id of the provider that reported it.
	ProviderID string
	// Code is the error parameter, e.g. "access_denied".
	Code string
	// Description is error_description, or "".
	Description string
	// URI is error_uri, or "".
	URI string
}

// Error names the provider and the error code, with its description.
func (e *ProviderError) Error() string {
	d := e.Description
	if len(d) > maxDescription {
		d = d[:maxDescription] + "…"
	}
	msg := fmt.Sprintf("%v: provider %q answered %q", ErrProviderError, e.ProviderID, e.Code)
	if d != "" {
		msg += fmt.Sprintf(" (%q)", d)
	}
	if e.Code == "access_denied" {
		msg += "; the user declined or the provider refused the sign-in"
	}
	return msg
}

// Is reports whether target is [ErrProviderError].
func (e *ProviderError) Is(target error) bool { return target == ErrProviderError }
