// Package jwt encodes and decodes JSON Web Tokens exactly as Auth.js
// (@auth/core/jwt) does, so that a Go service can read and write the session
// cookie of an app that uses Auth.js's default JWT sessions, and seal the
// short-lived PKCE, state and nonce cookies of an OAuth sign-in the way
// Auth.js does.
//
// An Auth.js JWT is an encrypted JWT (JWE, compact serialization) with
// algorithm "dir" and content encryption "A256CBC-HS512". Its key is derived
// from the secret (AUTH_SECRET) with HKDF-SHA256, using the cookie name as
// the salt and "Auth.js Generated Encryption Key (<salt>)" as the info, so
// each cookie name has its own key. The protected header carries a "kid",
// the JWK thumbprint of the derived key, which picks the secret among several
// when secrets are rotated. The claims get "iat", "exp" and a random "jti".
//
// [Codec] does the encoding and decoding; [SplitCookie], [SetCookies],
// [ClearCookies] and [JoinCookies] cut a large token into the cookies
// "name.0", "name.1", … and join them back, as Auth.js does for a session
// cookie above about 4 KB. The package writes no response: the handler
// (module github.com/authport/authport/handler) sets the cookies.
//
// The cryptography is go-jose's (JWE) and the standard library's (HKDF,
// SHA-2); this package holds the Auth.js conventions around them.
package jwt
