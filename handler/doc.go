// Package handler serves Auth.js's HTTP routes over an auth.Auth, so that a
// Go application signs users in the way an Auth.js app does, and shares
// its cookies with one (same AUTH_SECRET, same cookie names):
//
//	GET  {base}/providers                 the providers, as JSON
//	GET  {base}/csrf                      {"csrfToken": …}
//	GET  {base}/signin                    the default sign-in page
//	POST {base}/signin/{provider}         start OAuth/OIDC or e-mail sign-in
//	GET|POST {base}/callback/{provider}   OAuth/OIDC callback, e-mail link,
//	                                      credentials and passkey forms
//	GET  {base}/session                   the session JSON, or null
//	GET|POST {base}/signout               confirmation page; sign out
//	GET  {base}/verify-request            "check your e-mail"
//	GET  {base}/error?error=…             the error page
//	GET  {base}/webauthn-options/{id}     passkey ceremony options
//	GET  {base}/passkey.js                the passkey script
//
// Every POST needs Auth.js's double-submit CSRF token (the csrfToken field
// matching the authjs.csrf-token cookie), except the OAuth callback, which
// state and PKCE protect. Every redirect target (callbackUrl in a query, a
// form or the authjs.callback-url cookie) must be on the site's origin
// (SafeRedirect).
//
// Sessions are the Auth's: database sessions through its adapter, or
// Auth.js-compatible encrypted JWTs (strategy jwt) in the session cookie,
// split into chunks above 4 KB. Reader reads either kind without serving
// routes, for a Go API behind a Next.js app using Auth.js; Handler embeds
// one. Middleware puts the session in the request's context (FromContext)
// and Require refuses requests without one; with ReaderConfig.Bearer (or
// Config.Bearer) they also read a session from an "Authorization: Bearer"
// header, for API clients. The cookies' attributes are the Auth's
// (auth.Config.Cookies, checked by auth.New against the BaseURL): Domain to
// share the session cookie across subdomains, SameSite and Secure. Only the
// handler writes Set-Cookie; oauth and passkey return what it keeps.
package handler
