// Package dex pins the version of dex (https://dexidp.io), the OpenID
// provider authport's sign-in tests run against, and checks that a dex
// binary was built from these pins.
//
// The module holds no code of dex's: its go.mod names dex's command as a
// tool (`tool github.com/dexidp/dex/cmd/dex`), so that
//
//	GOWORK=off go build -o dex github.com/dexidp/dex/cmd/dex
//
// run in this directory builds dex with exactly the versions go.mod and
// go.sum list. scripts/services.sh does that once per change of go.mod,
// go.sum or Go version, and prints AUTHPORT_DEX_BIN; oauth/oauthtest.Dex
// runs the binary. See README.md for why the pins are what they are.
package dex
