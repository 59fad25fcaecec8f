// Package oauthtest runs an OpenID provider for sign-in tests: [Dex] starts
// a dex server private to one test, with that test's OAuth clients and
// users, and [DexServer.Login] signs a user in on dex's own pages the way a
// browser would, returning the redirect to the client's callback. [Fake]
// is an OAuth 2.0 provider in process for the profiles dex cannot be made
// to send. [PostgresDatabase] makes a test's own PostgreSQL database, for
// dex's state ([DexConfig.PostgresURL]) or the application's.
//
// The dex binary is the one AUTHPORT_DEX_BIN names (scripts/services.sh
// builds it from tools/dex); without it a test skips, or fails when
// AUTHPORT_REQUIRE is "all" or names dex. The package uses the standard
// library, golang.org/x/crypto/bcrypt and core/provider only (psql, not a
// Go driver, for PostgreSQL), and is meant for tests.
package oauthtest
