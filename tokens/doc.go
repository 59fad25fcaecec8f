// Package tokens gives native clients (mobile, desktop and command-line
// applications) tokens the way RFC 8252 describes: the user signs in in
// the browser through the authorization code flow with PKCE (S256) against
// authport, and the client gets short-lived access JWTs (RFC 9068, signed
// with EdDSA or ES256 keys published as a JWK Set) and rotating refresh
// tokens.
//
// Build an [Issuer] with [New] on a configured *auth.Auth; the handler
// module serves its routes when handler.Config.Tokens is set (GET
// /authorize, POST /token, GET /jwks, POST /revoke, POST /introspect). An
// API server checks access tokens with [Issuer.Verify] or the
// [Issuer.Require] middleware; another service can verify them with any
// JOSE library against the JWKS route.
//
// Each token family is a database session created through
// auth.Auth.CreateSession, so the user's session inventory lists it and
// sign-out, revocation, "sign out everywhere" and deleteUser end it.
// Refresh tokens are sealed (AES-256-GCM, keys derived from the Auth's
// secrets): nothing is stored per token. Rotation is one compare-and-set
// of the family session's expiry, so of any number of concurrent refreshes
// of one token exactly one succeeds; a rotated token presented again ends
// the family (RFC 9700 §4.14.2), except a retry whose reply was lost, which
// gets the same successor once. See the README for the details and the
// reasons.
package tokens
