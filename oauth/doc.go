// Package oauth runs OAuth 2.0 and OpenID Connect sign-in for the OAuth and
// OIDC providers of an [auth.Auth] (SPEC §5.2–5.4), in Auth.js's shape, so
// that an HTTP layer is a few lines over it: [Flow.Begin] for POST
// /signin/{provider}, [Flow.Callback] for GET|POST /callback/{provider}.
// Like golang.org/x/oauth2 and go-oidc, it takes no http.ResponseWriter
// and writes no cookies: Begin returns what must be remembered until the
// callback, and Callback takes it back. The handler module is that HTTP
// layer; ExampleFlow is a small one of its own.
//
// [Flow.Begin] builds the authorization URL (client_id, redirect_uri,
// scope, response_type=code, the provider's authorization parameters, the
// sign-in request's; see [SignInParams]) with the checks the provider's
// configuration resolves to: a PKCE S256 challenge, a random state, an
// OIDC nonce. It returns their values as [Checks], for the caller to keep
// where the browser can neither read nor change them (the handler seals
// them into Auth.js's check cookies, authjs.pkce.code_verifier,
// authjs.state and authjs.nonce), for at most [CheckMaxAge]; and whether
// the provider calls back with a cross-site form POST
// ([Authorization].FormPost), which SameSite=Lax cookies do not come
// with. ExampleFlow_Begin shows what it returns.
//
// [Flow.Callback] takes the callback's parameters and the kept [Checks],
// applies the checks, refuses a replayed callback, exchanges the code
// (with the client authentication the provider asks for, private_key_jwt
// and client_secret_jwt included: ExampleFlow_privateKeyJWT), verifies
// the OIDC id_token (signature against the issuer's JWKS, iss, aud, exp,
// nonce), fetches userinfo where the profile comes from there, maps the
// profile and the tokens with the provider's callbacks, and only then
// calls [auth.Auth.SignInWithOAuth]: a failed check writes nothing.
//
// [Flow.AccessToken] returns a valid access token of a user's account for
// calling the provider's API, refreshed with the stored refresh token when
// it has expired (one token request per account at a time, the rotated
// tokens stored): ExampleFlow_AccessToken. Every provider call goes
// through one HTTP client, by default with a [DefaultHTTPTimeout] of 10 s.
//
// Errors: a refused sign-in is an *auth.Error whose code is
// auth.CodeOAuthSignin (Begin) or auth.CodeOAuthCallback (Callback), read
// with auth.CodeOf; a configuration that cannot work matches
// core.ErrInvalidConfig. The token-access errors an application branches
// on are [ErrSignInAgain], [ErrSeveralAccounts] and [ErrRefresh], and
// core.ErrNotFound for a user without an account at the provider.
//
// The protocol is golang.org/x/oauth2's (authorization URL, PKCE, code
// exchange) and github.com/coreos/go-oidc's (discovery, keys, id_token
// verification).
package oauth
