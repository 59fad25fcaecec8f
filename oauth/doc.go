// Package oauth runs OAuth 2.0 and OpenID Connect sign-in for the OAuth and
// OIDC providers of an [auth.Auth] (SPEC §5.2–5.4), in Auth.js's shape, so
// that an HTTP layer is a few lines over it:
//
//	POST /signin/{provider}         to, err := flow.Begin(ctx, w, id, r.URL.Query()); redirect to `to`
//	GET|POST /callback/{provider}   signIn, err := flow.Callback(ctx, w, r, id)
//
// [Flow.Begin] builds the authorization URL (client_id, redirect_uri,
// scope, response_type=code, the provider's authorization parameters) with
// the checks the provider's configuration resolves to: a PKCE S256
// challenge, a random state, an OIDC nonce. Their values wait for the
// callback in short-lived cookies, sealed with the project's Auth.js JWT
// codec under Auth.js's names (authjs.pkce.code_verifier, authjs.state,
// authjs.nonce; __Secure- on https), so that Auth.js and authport can
// share them.
//
// [Flow.Callback] applies the checks, exchanges the code (with the client
// authentication the provider asks for), verifies the OIDC id_token
// (signature against the issuer's JWKS, iss, aud, exp, nonce), fetches
// userinfo where the profile comes from there, maps the profile and the
// tokens with the provider's callbacks, and only then calls
// [auth.Auth.SignInWithOAuth]: a failed check writes nothing.
//
// [Flow.AccessToken] returns a valid access token of a user's account for
// calling the provider's API, refreshed with the stored refresh token when
// it has expired (one token request per account at a time, the rotated
// tokens stored). Every provider call goes through one HTTP client, by
// default with a [DefaultHTTPTimeout] of 10 s. [Flow.Begin] passes the
// sign-in request's authorization parameters on (prompt, login_hint,
// ui_locales; see [SignInParams]). The token endpoint authentication
// includes private_key_jwt and client_secret_jwt (RFC 7523), configured on
// the provider's [provider.ClientOptions].
//
// The protocol is golang.org/x/oauth2's (authorization URL, PKCE, code
// exchange) and github.com/coreos/go-oidc's (discovery, keys, id_token
// verification). Every failure matches one of the package's errors with
// [errors.Is].
package oauth
