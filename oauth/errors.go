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

	// The errors of [Flow.AccessToken] and [Flow.AccountAccessToken]:

	// ErrNoAccount: the user has no account with the provider (never
	// signed in with it, or it was unlinked). Sign in with the provider
	// first.
	ErrNoAccount = errors.New("oauth: no account with the provider")
	// ErrSeveralAccounts: the user has more than one account with the
	// provider; name the one to use with [Flow.AccountAccessToken].
	ErrSeveralAccounts = errors.New("oauth: the user has several accounts with the provider")
	// ErrNoRefreshToken: the access token expired and the account has no
	// refresh token to renew it. Ask the provider for one (OIDC: scope
	// offline_access, and prompt=consent for some; Google:
	// access_type=offline) in the provider's Authorization.Params, and
	// have the user sign in again.
	ErrNoRefreshToken = errors.New("oauth: the access token expired and the account has no refresh token")
	// ErrRefresh: refreshing the access token failed: the token endpoint
	// could not be reached, refused the request, or its answer could not
	// be used or stored. A [*TokenError] is in the chain when the endpoint
	// answered with an OAuth error.
	ErrRefresh = errors.New("oauth: refreshing the access token failed")
	// ErrInvalidGrant: the provider refused the refresh token
	// (invalid_grant: expired, revoked, or replaced by a newer one). The
	// grant is gone: the user must sign in with the provider again. It
	// also matches [ErrRefresh].
	ErrInvalidGrant = errors.New("oauth: the provider refused the refresh token; the user must sign in again")
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
	msg := withDescription(fmt.Sprintf("%v: provider %q answered %q", ErrProviderError, e.ProviderID, e.Code), e.Description)
	if e.Code == "access_denied" {
		msg += "; the user declined or the provider refused the sign-in"
	}
	return msg
}

// withDescription appends the provider's error_description to msg,
// bounded to maxDescription bytes.
func withDescription(msg, d string) string {
	if len(d) > maxDescription {
		d = d[:maxDescription] + "…"
	}
	if d != "" {
		msg += fmt.Sprintf(" (%q)", d)
	}
	return msg
}

// Is reports whether target is [ErrProviderError].
func (e *ProviderError) Is(target error) bool { return target == ErrProviderError }

// TokenError is the error a token endpoint answered with (RFC 6749 §5.2).
// It matches [ErrRefresh], and [ErrInvalidGrant] when Code is
// invalid_grant.
type TokenError struct {
	// ProviderID is the provider whose token endpoint answered.
	ProviderID string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Code is the error member, e.g. "invalid_grant"; "" when the body
	// carried none.
	Code string
	// Description is error_description, or "".
	Description string
}

// Error names the provider, the status and the OAuth error.
func (e *TokenError) Error() string {
	msg := fmt.Sprintf("%v: provider %q: the token endpoint answered %d", ErrRefresh, e.ProviderID, e.StatusCode)
	if e.Code != "" {
		msg += fmt.Sprintf(" %q", e.Code)
	}
	msg = withDescription(msg, e.Description)
	if e.Code == "invalid_grant" {
		msg += "; the grant is gone (refresh token expired, revoked or already used): the user must sign in with the provider again"
	}
	return msg
}

// Is reports whether target is [ErrRefresh], or [ErrInvalidGrant] for an
// invalid_grant answer.
func (e *TokenError) Is(target error) bool {
	return target == ErrRefresh || (target == ErrInvalidGrant && e.Code == "invalid_grant")
}
