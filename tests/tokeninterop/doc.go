// Package tokeninterop proves that access tokens of module
// github.com/authport/authport/tokens verify with independent verifiers,
// fetching the keys from the handler's JWKS route: github.com/lestrrat-go/jwx/v3
// in Go, and jose from npm (pinned in npm/package-lock.json; CI runs npm
// ci there), before and after a key rotation. It is a test-only module
// (GOWORK=off), so that tokens' own go.mod stays small.
package tokeninterop
