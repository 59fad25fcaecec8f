package oauth

import (
	"errors"
	"fmt"

	"github.com/authport/authport/core/auth"
)

// Errors of the flow.
//
// A sign-in that [Flow.Begin] or [Flow.Callback] refuses (a failed check,
// the provider or the request at fault) is an [*auth.Error]: its Code is
// auth.CodeOAuthSignin for Begin and auth.CodeOAuthCallback for Callback
// (auth.CodeOf reads it), and its detail names the check that failed. An
// error that carries a code of its own keeps it (auth.SignInWithOAuth's
// OAuthAccountNotLinked, AccessDenied). A configuration that cannot work
// matches core.ErrInvalidConfig; a store failure is the store's error.
// A refused sign-in stores nothing.
//
// The provider's own error (the error parameter of its callback) is a
// [*ProviderError] in the chain; the token endpoint's answer to a refresh
// is a [*TokenError].
var (
	// ErrSignInAgain: [Flow.AccessToken] cannot give a valid access token
	// until the user signs in with the provider again: the access token
	// expired and the account has no refresh token (ask the provider for
	// one: scope offline_access for OIDC, access_type=offline for Google,
	// in the provider's Authorization.Params), or the provider refused the
	// refresh token (invalid_grant: expired, revoked, or replaced by a
	// newer one; a [*TokenError] is then in the chain).
	ErrSignInAgain = errors.New("oauth: the user must sign in with the provider again")
	// ErrSeveralAccounts: the user has more than one account with the
	// provider; name the one to use with [Flow.AccountAccessToken].
	ErrSeveralAccounts = errors.New("oauth: the user has several accounts with the provider")
	// ErrRefresh: refreshing the access token failed: the provider could
	// not be reached, refused the request, or its answer could not be used
	// or stored. A [*TokenError] is in the chain when the token endpoint
	// answered with an OAuth error; its invalid_grant (the grant is gone)
	// also matches ErrSignInAgain, so test for that first: what is left
	// may pass with a retry.
	ErrRefresh = errors.New("oauth: refreshing the access token failed")
)

// refusal is the detail of a refused sign-in: which check failed, or what
// the provider or the request got wrong. Begin and Callback give every
// error with one in its chain the code of their stage (see signInError).
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// The details of a refused sign-in, wrapped inside the *auth.Error that
// Begin and Callback return.
var (
	// errDiscovery: the provider's discovery document (wellKnown, or the
	// issuer's /.well-known/openid-configuration) could not be fetched or
	// does not fit the configuration.
	errDiscovery = &refusal{"oauth: provider discovery failed"}
	// errStateMissing: the provider uses the state check and the state
	// value, or the callback's state parameter, is missing.
	errStateMissing = &refusal{"oauth: state missing"}
	// errStateMismatch: the callback's state parameter is not the one sent.
	errStateMismatch = &refusal{"oauth: state does not match"}
	// errVerifierMissing: the provider uses PKCE and the code verifier is
	// missing.
	errVerifierMissing = &refusal{"oauth: PKCE code verifier missing"}
	// errNonceMissing: the provider uses the nonce check and the nonce is
	// missing.
	errNonceMissing = &refusal{"oauth: nonce missing"}
	// errNonceMismatch: the id_token's nonce is not the one sent.
	errNonceMismatch = &refusal{"oauth: nonce does not match"}
	// errIDTokenMissing: an OIDC provider's token response has no
	// id_token. It comes with provider.ErrMissingIDToken.
	errIDTokenMissing = &refusal{"oauth: id_token missing"}
	// errIDTokenInvalid: the id_token failed verification (signature
	// against the issuer's keys, iss, aud, exp).
	errIDTokenInvalid = &refusal{"oauth: id_token invalid"}
	// errProviderError: the provider called back with an error parameter;
	// *ProviderError matches it.
	errProviderError = &refusal{"oauth: the provider returned an error"}
	// errInvalidParams: an authorization parameter of a sign-in request
	// has a value that cannot be sent.
	errInvalidParams = &refusal{"oauth: invalid authorization parameter"}
	// errInvalidCallback: the callback carries no authorization code.
	errInvalidCallback = &refusal{"oauth: invalid callback request"}
	// errTokenExchange: the token endpoint refused the code or failed; an
	// *oauth2.RetrieveError is in the chain when it answered with an error.
	errTokenExchange = &refusal{"oauth: code exchange failed"}
	// errUserinfo: the userinfo endpoint failed, or its profile could not
	// be used.
	errUserinfo = &refusal{"oauth: userinfo failed"}
	// errProfile: the profile callback failed or gave no id.
	errProfile = &refusal{"oauth: profile could not be mapped"}
	// errCallbackReplayed: the callback's check values were used by an
	// earlier callback; it also matches core.ErrAlreadyExists (auth.Edge's
	// UseOnce refusal, or the in-process record's).
	errCallbackReplayed = &refusal{"oauth: callback already used"}
)

// The details of the token-access errors.
var (
	// errNoAccount: the user has no account with the provider; it comes
	// with core.ErrNotFound.
	errNoAccount = errors.New("oauth: no account with the provider")
	// errNoRefreshToken: the access token expired and the account has no
	// refresh token; it comes with ErrSignInAgain.
	errNoRefreshToken = errors.New("oauth: the access token expired and the account has no refresh token")
	// errInvalidGrant: the provider refused the refresh token
	// (invalid_grant); *TokenError matches it, with ErrSignInAgain and
	// ErrRefresh.
	errInvalidGrant = errors.New("oauth: the provider refused the refresh token")
)

// signInError gives a refusal of a sign-in the code of its stage
// (auth.CodeOAuthSignin for Begin, auth.CodeOAuthCallback for Callback);
// an error that carries a code keeps it, and any other (configuration,
// store) is returned as it is.
func signInError(code auth.Code, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errorsAs[*refusal](err); ok {
		return auth.Fail(code, err)
	}
	if _, ok := errorsAs[*ProviderError](err); ok {
		return auth.Fail(code, err)
	}
	return err
}

// maxDescription bounds how much of the provider's error_description goes
// into an error message.
const maxDescription = 200

// ProviderError is the error a provider reported on the callback (RFC 6749
// §4.1.2.1), found with errors.As in the error of [Flow.Callback] (whose
// code is auth.CodeOAuthCallback).
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
	msg := withDescription(fmt.Sprintf("%v: provider %q answered %q", errProviderError, e.ProviderID, e.Code), e.Description)
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

// Is reports whether target is the detail of a provider's error.
func (e *ProviderError) Is(target error) bool { return target == errProviderError }

// TokenError is the error a token endpoint answered a refresh with (RFC
// 6749 §5.2). It matches [ErrRefresh], and also [ErrSignInAgain] when
// Code is invalid_grant (the grant is gone).
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
	if e.invalidGrant() {
		msg += "; the grant is gone (refresh token expired, revoked or already used): the user must sign in with the provider again"
	}
	return msg
}

func (e *TokenError) invalidGrant() bool { return e.Code == "invalid_grant" }

// Is reports whether target is [ErrRefresh], or [ErrSignInAgain] for an
// invalid_grant answer.
func (e *TokenError) Is(target error) bool {
	return target == ErrRefresh || (e.invalidGrant() && (target == ErrSignInAgain || target == errInvalidGrant))
}
